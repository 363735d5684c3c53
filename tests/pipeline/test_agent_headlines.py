"""An @agent headline saved in an Org file is answered under it after one buffer-update,
with every other byte of the file unchanged, and never twice."""

from __future__ import annotations

import difflib
import time
from pathlib import Path

from opencortex.memex import Memex
from opencortex.pipeline.agent_requests import find_requests
from opencortex.pipeline.kernel import Kernel

from ..conftest import emacs_dump


def test_find_requests_with_identity(tmp_path: Path) -> None:
    text = ("* Notes\n** TODO @agent what do my notes say about BM25?\n"
            "** @Ada: summarise caching\n** mail someone@agent.org\n"
            "** @agent done already\n:PROPERTIES:\n:AGENT_HANDLED: [2026-11-30 Mon]\n:END:\n")
    reqs = find_requests(text, "x.org", "Ada", tmp_path)
    assert [(r.line, r.instruction) for r in reqs] == [
        (2, "what do my notes say about BM25?"), (3, "summarise caching")]


def test_agent_headline_answered_in_place(memex: Path, tmp_path: Path) -> None:
    f = memex / "notes" / "bm25.org"
    original = f.read_text()
    lines = original.splitlines(keepends=True)
    # add the request as the last top-level entry, as a person would in Emacs, and save
    text = original + ("" if original.endswith("\n") else "\n") + \
        "* @agent what do my notes say about BM25 saturation?\n"
    f.write_text(text)
    before = f.read_bytes()
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m, record_sessions=False)
    k.submit({"sensor": "buffer-update", "file": "notes/bm25.org", "text": text}).result(30)
    deadline = time.time() + 30
    while "AGENT_HANDLED" not in f.read_text() or "Answer:" not in f.read_text():
        assert time.time() < deadline, k.ring.tail(20)
        time.sleep(0.05)
    time.sleep(0.2)
    after = f.read_bytes()
    ops = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
    assert all(tag in ("equal", "insert") for tag, *_ in ops)  # nothing changed or lost
    assert after.startswith(before[: len(before) - len(lines[-1]) - 60])
    heads = emacs_dump(f)
    req = next(h for h in heads if "@agent" in h["title"])
    ans = heads[heads.index(req) + 1]
    assert any(k_ == "AGENT_HANDLED" for k_, _ in req["properties"])
    assert ans["level"] == req["level"] + 1 and ans["title"].startswith("Answer:")
    assert "bm25" in ans["body"].lower()
    # a second buffer-update of the (now handled) text does nothing more
    k.submit({"sensor": "buffer-update", "file": "notes/bm25.org",
              "text": f.read_text()}).result(30)
    time.sleep(0.5)
    assert f.read_bytes() == after
    k.shutdown()
    m.close()


def test_unsaved_request_waits_for_save(memex: Path, tmp_path: Path) -> None:
    f = memex / "gtd.org"
    disk = f.read_bytes()
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m, record_sessions=False)
    unsaved = disk.decode() + "* @agent list my next actions\n"
    k.submit({"sensor": "buffer-update", "file": "gtd.org", "text": unsaved}).result(30)
    time.sleep(0.5)
    assert f.read_bytes() == disk
    assert any("waits until the file is saved" in x for x in k.ring.tail(10))
    k.shutdown()
    m.close()
