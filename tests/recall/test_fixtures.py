"""Each source against a fixture written from the FORMATS.md field lists."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from opencortex.recall.sources import SOURCES, aider, claude_code, codex, gemini, opencode, read_all
from opencortex.recall.sources import opencortex_sessions as ocs
from opencortex.sessions.recorder import SessionRecorder

from .conftest import FIXTURES

CLAUDE_ID = "11111111-2222-3333-4444-555555555555"


def _claude() -> dict[str, object]:
    paths = claude_code.discover([FIXTURES / "claude"])
    recs = [r for p in paths for r in claude_code.read(p)]
    return {r.session_id: r for r in recs}


def test_claude_discover_finds_session_and_subagent():
    paths = claude_code.discover([FIXTURES / "claude"])
    assert sorted(p.name for p in paths) == sorted([f"{CLAUDE_ID}.jsonl", "agent-a1b2.jsonl"])


def test_claude_person_turns_envelopes_and_streaming():
    rec = _claude()[CLAUDE_ID]
    assert [t.text for t in rec.person_turns] == ["Please add a parser for the transcripts",
                                                  "Use the streaming de-dup too"]
    injected = [t.text for t in rec.turns if t.origin == "injected"]
    assert injected[0].startswith("<command-name>")        # command envelope
    assert any(t.startswith("Caveat") for t in injected)   # isMeta
    assert any(t.startswith("[Request interrupted") for t in injected)
    assert any(t.startswith("This session is being continued") for t in injected)
    # streamed chunks of msg_A (repeated text line) are shown once
    assistant = [t.text for t in rec.turns if t.origin == "assistant"]
    assert assistant == ["Sure, reading the files first.", "Done."]
    assert [t.text for t in rec.turns if t.origin == "tool"] == [
        'Read: {"file_path": "/x.py"}', "print('x')"]
    assert rec.title == "Wire up the recall sources"  # the summary whose leaf is here
    assert rec.branch == "feature/recall"
    r = rec.receipt
    assert r.skipped_lines == 2  # the broken line and the unknown type
    assert r.omitted_chars == len("Let me think about it.")
    assert r.unverified_person_turns is None
    assert r.state == "succeeded"
    root = str((FIXTURES / "claude").absolute())
    assert rec.root == root
    assert rec.handle == f"CLAUDE_CONFIG_DIR={root} claude --resume {CLAUDE_ID}"
    assert [t.index for t in rec.turns] == list(range(len(rec.turns)))


def test_claude_subagent_resumes_through_parent():
    sub = _claude()[f"{CLAUDE_ID}/agent-a1b2"]
    assert sub.parent_id == CLAUDE_ID
    assert sub.person_turns == []  # its prompt came from the parent agent
    assert sub.handle.endswith(f"claude --resume {CLAUDE_ID}")


def test_codex_injected_and_unverified():
    [path] = codex.discover([FIXTURES / "codex"])
    [rec] = codex.read(path)
    assert [t.text for t in rec.person_turns] == ["Fix the failing test please",
                                                  "And this one was never mirrored"]
    assert sum(t.origin == "injected" for t in rec.turns) == 4
    assert rec.receipt.unverified_person_turns == 1
    assert rec.receipt.skipped_lines == 2  # bad JSON + unknown type
    assert rec.receipt.omitted_chars == len("Thinking about tests")
    assert rec.cwd == "/nonexistent/codex-proj/sub"  # turn_context moved it
    assert rec.branch == "main"
    assert rec.handle == f"codex resume {rec.session_id}"
    assert [t.origin for t in rec.turns if t.origin == "tool"] == ["tool", "tool"]


def test_codex_without_mirror_leaves_unverified_unknown(tmp_path):
    f = tmp_path / "rollout-x.jsonl"
    f.write_text('{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":'
                 '{"type":"message","role":"user","content":[{"type":"input_text",'
                 '"text":"hello"}]}}\n')
    [rec] = codex.read(f)
    assert rec.person_turns[0].text == "hello"
    assert rec.receipt.unverified_person_turns is None


def test_gemini_legacy_json():
    paths = {p.suffix: p for p in gemini.discover([FIXTURES / "gemini"])}
    [rec] = gemini.read(paths[".json"])
    assert rec.session_id == "gem-legacy-0001"
    assert [t.origin for t in rec.turns] == ["person", "assistant", "tool", "injected",
                                             "injected"]
    assert rec.receipt.skipped_lines is None  # not line-based: unmeasured
    assert rec.receipt.omitted_chars == len("pondering")
    assert rec.handle == "gemini --resume gem-legacy-0001"


def test_gemini_jsonl_set_and_rewind():
    paths = {p.suffix: p for p in gemini.discover([FIXTURES / "gemini"])}
    [rec] = gemini.read(paths[".jsonl"])
    assert rec.session_id == "gem-new-0002"
    assert [t.text for t in rec.turns] == ["first question", "first answer",
                                           "second question", "second answer"]
    assert rec.title == "Questions about the build"
    assert rec.ended == dt.datetime(2026, 11, 30, 12, 2, tzinfo=dt.UTC)
    assert rec.receipt.skipped_lines == 1  # the truncated last line
    assert rec.cwd == "/nonexistent/gem-proj"


def test_aider_two_launches_and_fences():
    [path] = aider.discover([FIXTURES / "aider"])
    first, second = aider.read(path)
    assert first.session_id.endswith("-1") and second.session_id.endswith("-2")
    assert first.session_id != second.session_id
    assert [t.text for t in first.person_turns] == ["add a heading parser\nthat handles stars"]
    fenced = next(t for t in first.turns if "```" in t.text)
    assert fenced.origin == "assistant"
    assert "#### this is not the person" in fenced.text
    assert "> nor is this tool output" in fenced.text
    assert [t.text for t in second.person_turns] == ["now write tests"]
    assert first.started == dt.datetime(2026, 11, 28, 9, 15)
    assert second.locator.endswith(":20-26")
    assert first.handle.endswith("aider --restore-chat-history")
    assert first.handle.startswith("cd ")  # the directory exists


def _opencode_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT, title TEXT,
                              time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
                              data TEXT);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, data TEXT);
    """)
    conn.execute("INSERT INTO session VALUES ('ses_1', ?, 'Port the parser', "
                 "1764496800000, 1764497000000)", (str(path.parent),))
    conn.execute("INSERT INTO session VALUES ('ses_2', '/nonexistent/oc', '', "
                 "1764500000000, 1764500000000)")
    rows = [("msg_1", "ses_1", 1764496800000, '{"role":"user"}'),
            ("msg_2", "ses_1", 1764496801000, '{"role":"assistant"}'),
            ("msg_3", "ses_1", 1764496802000, "{broken")]
    conn.executemany("INSERT INTO message VALUES (?,?,?,?)", rows)
    parts = [("prt_1", "msg_1", '{"type":"text","text":"port the parser to rust"}'),
             ("prt_2", "msg_1", '{"type":"text","text":"<file>ctx</file>","synthetic":true}'),
             ("prt_3", "msg_2", '{"type":"reasoning","text":"hmm"}'),
             ("prt_4", "msg_2", '{"type":"tool","tool":"bash","state":{"input":{"cmd":"ls"},'
                                '"output":"a.rs"}}'),
             ("prt_5", "msg_2", '{"type":"text","text":"Ported."}')]
    conn.executemany("INSERT INTO part VALUES (?,?,?)", parts)
    conn.commit()
    conn.close()


def test_opencode_sqlite(tmp_path):
    _opencode_db(tmp_path / "opencode.db")
    [db] = opencode.discover([tmp_path])
    one, two = opencode.read(db)
    assert one.session_id == "ses_1" and one.title == "Port the parser"
    assert [(t.origin, t.text) for t in one.turns] == [
        ("person", "port the parser to rust"), ("injected", "<file>ctx</file>"),
        ("tool", 'bash: {"cmd": "ls"}\na.rs'), ("assistant", "Ported.")]
    assert one.receipt.skipped_lines == 1 and one.receipt.omitted_chars == 3
    assert one.handle == f"cd {tmp_path} && opencode -s ses_1"
    assert one.started == dt.datetime.fromtimestamp(1764496800, dt.UTC)
    assert two.turns == [] and two.receipt.state == "empty"
    assert two.handle == "opencode -s ses_2"


def test_opencode_default_root_honours_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    (tmp_path / "opencode").mkdir()
    _opencode_db(tmp_path / "opencode" / "opencode.db")
    assert opencode.discover(None) == [tmp_path / "opencode" / "opencode.db"]


def test_opencode_not_a_database(tmp_path):
    f = tmp_path / "opencode.db"
    f.write_bytes(b"this is not sqlite at all" * 10)
    [rec] = opencode.read(f)
    assert rec.receipt.state in ("validation_failed", "input_failed")
    assert rec.receipt.sha256 is not None


def test_opencortex_session_roundtrip(tmp_path):
    clock = iter(dt.datetime(2026, 11, 30, 10, m) for m in range(10))
    rec_ = SessionRecorder(tmp_path, clock=lambda: next(clock))
    rec_.record("chat-1", "person", "* not a headline\n#+begin_src\nhi")
    rec_.record("chat-1", "assistant", "Answer line one\n,* already commaed")
    rec_.record("chat-1", "tool", "ran ls")
    rec_.record("chat-1", "external", "a forwarded note")
    [path] = ocs.discover([tmp_path])
    assert path.parts[-3:-1] == ("2026", "11") and path.parents[2] == tmp_path
    [rec] = ocs.read(path)
    assert rec.session_id == "chat-1"
    assert [t.origin for t in rec.turns] == ["person", "assistant", "tool", "injected"]
    assert rec.turns[0].text == "* not a headline\n#+begin_src\nhi"
    assert rec.turns[1].text == "Answer line one\n,* already commaed"
    assert rec.turns[0].timestamp == dt.datetime(2026, 11, 30, 10, 1)
    assert rec.handle == f"{path}:5"
    assert path.read_text().splitlines()[4].startswith("* [2026-11-30 Mon 10:01] person:")
    assert rec.receipt.state == "succeeded" and rec.receipt.skipped_lines == 0
    assert rec.title == "* not a headline"


def test_registry_and_read_all():
    assert set(SOURCES) == {"claude-code", "codex", "gemini", "aider", "opencode",
                            "opencortex"}
    recs = read_all(
        {"claude-code": [FIXTURES / "claude"], "codex": [FIXTURES / "codex"],
         "gemini": [FIXTURES / "gemini"], "aider": [FIXTURES / "aider"]})
    assert sorted({r.source for r in recs}) == ["aider", "claude-code", "codex", "gemini"]
    assert len(recs) == 2 + 1 + 2 + 2
    assert all(r.receipt.state == "succeeded" for r in recs)
