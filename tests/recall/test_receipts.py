"""Receipts, the read-only invariant, and bad input that must be counted, not crash."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from opencortex.recall.records import STATES
from opencortex.recall.sources import SOURCES, aider, claude_code, codex, gemini, opencode
from opencortex.recall.sources import opencortex_sessions as ocs

from .conftest import CLAUDE_SAMPLE, CODEX_SAMPLE, FIXTURES
from .test_fixtures import _opencode_db


def _state(paths: list[Path]) -> dict[Path, tuple[str, int, int]]:
    return {p: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns,
                os.stat(p).st_size) for p in paths}


def test_reading_never_changes_a_file(tmp_path):
    _opencode_db(tmp_path / "opencode.db")
    files = [p for p in FIXTURES.rglob("*") if p.is_file()]
    files.append(tmp_path / "opencode.db")
    before = _state(files)
    listing = sorted(os.listdir(tmp_path))
    for kind, root in [("claude-code", FIXTURES / "claude"), ("codex", FIXTURES / "codex"),
                       ("gemini", FIXTURES / "gemini"), ("aider", FIXTURES / "aider"),
                       ("opencode", tmp_path)]:
        for p in SOURCES[kind].discover([root]):
            assert SOURCES[kind].read(p)
    assert claude_code.read(CLAUDE_SAMPLE) and codex.read(CODEX_SAMPLE)
    assert _state(files) == before
    assert sorted(os.listdir(tmp_path)) == listing  # no -journal/-wal/-shm left behind


def test_opencode_connection_refuses_writes(tmp_path):
    _opencode_db(tmp_path / "opencode.db")
    conn = opencode.connect_ro(tmp_path / "opencode.db")
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM session")
    conn.close()


def test_receipt_fields_and_sha256():
    path = next(iter(codex.discover([FIXTURES / "codex"])))
    [rec] = codex.read(path)
    r = rec.receipt
    assert r.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert r.revision is not None
    assert r.revision.size == path.stat().st_size
    assert r.revision.mtime == path.stat().st_mtime
    assert r.extractor.startswith("opencortex.recall.codex@")
    d = r.to_dict()
    assert set(d) >= {"source", "root", "session_id", "locator", "revision", "sha256",
                      "extractor", "state", "skipped_lines", "unverified_person_turns",
                      "omitted_chars"}
    assert d["revision"] == {"mtime": r.revision.mtime, "size": r.revision.size}
    assert r.state in STATES


def test_unmeasured_counts_are_none_not_zero():
    [claude] = claude_code.read(next(iter(claude_code.discover([FIXTURES / "claude"]))))
    assert claude.receipt.unverified_person_turns is None  # no mirror to check against
    legacy = next(p for p in gemini.discover([FIXTURES / "gemini"]) if p.suffix == ".json")
    assert gemini.read(legacy)[0].receipt.skipped_lines is None


@pytest.mark.parametrize("module", [claude_code, codex, gemini, aider, ocs, opencode])
def test_missing_file_is_input_failed(module, tmp_path):
    [rec] = module.read(tmp_path / "gone.jsonl")
    assert rec.receipt.state == "input_failed"
    assert rec.receipt.sha256 is None and rec.receipt.revision is None
    assert rec.turns == []


@pytest.mark.parametrize("module,name", [(claude_code, "s.jsonl"), (codex, "rollout-x.jsonl"),
                                         (gemini, "session-x.jsonl")])
def test_empty_file_is_empty(module, name, tmp_path):
    f = tmp_path / name
    f.write_bytes(b"")
    [rec] = module.read(f)
    assert rec.receipt.state == "empty"
    assert rec.receipt.skipped_lines == 0


def test_invalid_utf8_and_truncation_are_counted(tmp_path):
    good = CLAUDE_SAMPLE.read_bytes()
    lines = good.splitlines()
    data = b"\n".join([*lines[:3], b'{"type":"user","message":{"content":"\xff\xfe bad"}}',
                       *lines[3:], lines[1][: len(lines[1]) // 2]])
    f = tmp_path / "broken.jsonl"
    f.write_bytes(data)
    [rec] = claude_code.read(f)
    assert rec.receipt.state == "succeeded"
    assert rec.receipt.skipped_lines == 2  # the undecodable line and the truncated one
    assert rec.person_turns


def test_codex_binary_garbage(tmp_path):
    f = tmp_path / "rollout-garbage.jsonl"
    f.write_bytes(os.urandom(2048).replace(b"\n", b"") + b"\n\x00\x01\n")
    [rec] = codex.read(f)
    assert rec.receipt.state == "validation_failed"
    assert rec.receipt.skipped_lines == 2
    assert rec.turns == []


def test_gemini_legacy_not_json(tmp_path):
    f = tmp_path / "session-bad.json"
    f.write_bytes(b'{"sessionId": "x", "messages": [\xff')
    [rec] = gemini.read(f)
    assert rec.receipt.state == "validation_failed"
    assert rec.receipt.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()


def test_aider_invalid_utf8_line(tmp_path):
    f = tmp_path / ".aider.chat.history.md"
    f.write_bytes(b"# aider chat started at 2026-01-01 10:00:00\n\n#### hi\n\xff\xfe\nok\n")
    [rec] = aider.read(f)
    assert rec.receipt.skipped_lines == 1
    assert [t.origin for t in rec.turns] == ["person", "assistant"]


def test_opencortex_truncated_file(tmp_path):
    d = tmp_path / "sessions" / "2026" / "11"
    d.mkdir(parents=True)
    f = d / "30-x.org"
    f.write_bytes(b"#+TITLE: Session x\n#+PROPERTY: SESSION x\n\n"
                  b"* [2026-11-30 Mon 10:00] person: hello\n:PROPERTIES:\n:ORIGIN: person\n"
                  b":END:\n#+begin_example\nhello\n\xff\n#+end_ex")
    [rec] = ocs.read(f)
    assert rec.receipt.skipped_lines == 1
    assert rec.person_turns[0].text.startswith("hello")
