"""FIFOs (and other special files) in the memex and in every transcript root: never
opened, skipped and counted; recall, sync and the daemon finish instead of hanging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .edge_live import daemons


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)

CLI = [sys.executable, "-c", "from opencortex.cli import main; main()"]
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")

# where each transcript source looks for its files (a FIFO there must be skipped)
FIFO_AT = {
    "claude-code": "projects/-home-me-proj/0b7e-session.jsonl",
    "codex": "sessions/2026/11/01/rollout-2026-11-01T10-00-00-abc.jsonl",
    "gemini": "tmp/5f3a/chats/session-2026-11-01.json",
    "aider": ".aider.chat.history.md",
    "opencode": "opencode.db",
}


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


def test_fifo_in_the_memex_is_skipped_and_counted(memex: Path, tmp_path: Path) -> None:
    _fifo(memex / "notes" / "pipe.org")
    _fifo(memex / "projects" / "chat-pipe.org")
    r = _cli("index", "--memex", str(memex), "--index", str(tmp_path / "i.sqlite3"),
             "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["skipped"] == 2 and out["files"] > 10, out
    assert any("pipe.org: skipped, a FIFO" in p for p in out["problems"]), out
    r = _cli("read", "--memex", str(memex), "--index", str(tmp_path / "i.sqlite3"),
             "notes/pipe.org:1")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("kind", sorted([*FIFO_AT, "opencortex"]))
def test_fifo_in_each_transcript_root(kind: str, memex: Path, tmp_path: Path) -> None:
    if kind == "opencortex":  # the agent's own conversation records, inside a memex
        root = memex
        _fifo(root / "sessions" / "2026" / "11" / "2026-11-01-chat.org")
    else:
        root = tmp_path / kind
        _fifo(root / FIFO_AT[kind])
    src = f"{kind}:{root}"
    index = str(tmp_path / "r.sqlite3")
    r = _cli("recall", "--index-only", "--no-defaults", "--source", src, "--memex",
             str(memex), "--index", index, "--json", timeout=180)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["skipped"] == 1 and summary["records_added"] == 0, summary
    r = _cli("recall", "--no-defaults", "--source", src, "--memex", str(memex), "--index",
             index, "--json", "that session where we fixed the flaky login test",
             timeout=180)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr


def test_daemon_answers_while_a_recall_over_fifos_runs(memex: Path, tmp_path: Path,
                                                       live_factory: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    roots = []
    for kind, rel in FIFO_AT.items():
        _fifo(tmp_path / kind / rel)
        roots.append(f"{kind}:{tmp_path / kind}")
    # the person configured these roots: a client may only narrow recall to them
    monkeypatch.setenv("OPENCORTEX_RECALL_SOURCES", ",".join(roots))
    live = live_factory(memex)
    got: dict[str, Any] = {}

    def recall() -> None:
        got["recall"] = live.request("POST", "/v1/recall", {
            "cue": "the session about the flaky login test", "sources": roots},
            timeout=120)

    t = threading.Thread(target=recall)
    t.start()
    t0 = time.monotonic()
    while t.is_alive() and time.monotonic() - t0 < 5:
        st, body, _ = live.request("GET", "/v1/search?q=caching", timeout=30)
        assert st == 200 and body["hits"], body
        time.sleep(0.05)
    t.join(120)
    assert not t.is_alive(), "the recall over FIFO folders hung"
    st, body, _ = got["recall"]
    assert st == 200, body
    st, body, _ = live.request("GET", "/v1/search?q=caching", timeout=30)
    assert st == 200


def test_a_request_past_its_timeout_gets_504_and_the_daemon_stays_up(
        memex: Path, live_factory: Any) -> None:
    """A handler that cannot finish (here: the memex lock held by a wedged signal) is
    answered 504 within the timeout; other requests keep working."""
    live = live_factory(memex, request_timeout=1.0)
    lock = live.kernel.memex_lock
    held, release = threading.Event(), threading.Event()

    def wedge() -> None:
        with lock:
            held.set()
            release.wait(60)

    t = threading.Thread(target=wedge, daemon=True)
    t.start()
    held.wait(10)
    try:
        t0 = time.monotonic()
        st, body, _ = live.request("GET", "/v1/search?q=caching", timeout=30)
        assert st == 504 and "longer than 1 s" in body["error"], body
        assert time.monotonic() - t0 < 10
        for _ in range(3):
            assert live.request("GET", "/healthz")[0] == 200
            assert live.request("GET", "/v1/approvals")[0] == 200
    finally:
        release.set()
        t.join(10)
    st, body, _ = live.request("GET", "/v1/search?q=caching", timeout=30)
    assert st == 200 and body["hits"]
