"""The chat's command language and both backends (in-process kernel, daemon over SSE)."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from opencortex.memex import Memex
from opencortex.tui.app import ChatApp, format_citations, format_hits, history_path
from opencortex.tui.backend import BackendError, LocalBackend, RemoteBackend, build_kernel


class FakeBackend:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.resolved: list[tuple[str, bool]] = []

    def chat(self, text: str, session: str, on_reply: Any, on_approval: Any,
             on_delta: Any = None) -> None:
        self.sent.append((text, session))
        if text == "run it":
            on_approval("ab12", "shell needs your approval")
            on_reply("Needs your approval (x): /approve ab12 or /deny ab12\nran", None)
        else:
            on_reply(f"echo {text}", {"citations": ["id:u-1", "notes/a.org::A"]})

    def search(self, query: str, k: int = 10) -> dict[str, Any]:
        return {"query": query, "hits": [{"id": "u-1", "file": "notes/a.org", "line": 3,
                                          "title": "A", "snippet": "about a"}], "notes": []}

    def resolve(self, ident: str, approved: bool) -> None:
        if ident == "nope":
            raise BackendError("no pending approval nope")
        self.resolved.append((ident, approved))

    def locate(self, ref: str) -> str | None:
        return {"id:u-1": "notes/a.org:3", "notes/a.org::A": "notes/a.org:3"}.get(ref)

    def close(self) -> None:
        pass


def make_app(backend: Any) -> tuple[ChatApp, list[str]]:
    out: list[str] = []
    return ChatApp(backend, session="s1", echo=out.append), out


def test_commands_map_to_messages_and_calls():
    b = FakeBackend()
    app, out = make_app(b)
    assert app.handle("/agenda", wait=5)
    assert app.handle("/recollect the NAS", wait=5)
    assert app.handle("hello", wait=5)
    assert [t for t, _ in b.sent] == ["what's on my agenda", "/recollect the NAS", "hello"]
    assert all(s == "s1" for _, s in b.sent)
    assert "  -> notes/a.org:3  id:u-1" in out and "  -> notes/a.org:3" in out
    out.clear()
    app.handle("/search a")
    assert out == ["notes/a.org:3  A  id:u-1", "    about a"]
    app.handle("/approve ab12")
    app.handle("/deny ab12")
    app.handle("/approve nope")
    assert b.resolved == [("ab12", True), ("ab12", False)]
    assert out[-1] == "error: no pending approval nope"
    app.handle("/approve")
    assert out[-1] == "usage: /approve ID"
    assert app.handle("") and not app.handle("/exit") and not app.handle("/quit")


def test_approval_notice_replaces_the_approval_line():
    app, out = make_app(FakeBackend())
    app.handle("run it", wait=5)
    app.close()
    assert out[0].startswith("[approval ab12] shell needs your approval")
    assert "/approve ab12 or /deny ab12" in out[0]
    assert out[1:] == ["ran"]


def test_format_helpers():
    assert format_citations(None, lambda r: None) == []
    assert format_citations({"citations": ["id:x", "f.org::H"]}, lambda r: None) == \
        ["id:x", "f.org::H"]
    assert format_hits({"query": "q", "hits": []}) == ["no hits for 'q'"]
    assert history_path().name == "chat_history"


# -- the in-process pipeline ------------------------------------------------------------
@pytest.fixture
def local(memex: Path, tmp_path: Path) -> Iterator[LocalBackend]:
    m = Memex(memex, tmp_path / "index.db")
    m.sync()
    b = LocalBackend(m, build_kernel(m, approval_timeout=30))
    yield b
    b.close()
    m.close()


def wait_for(cond: Callable[[], Any], timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_local_backend_answers_with_citations_and_approvals(local):
    app, out = make_app(local)
    app.handle("what are the two hard things in computer science?", wait=60)
    assert any(re.fullmatch(r"  -> notes/caching-strategies\.org:\d+  id:[0-9a-f-]+", s)
               for s in out)
    out.clear()
    app.handle("/search zfs")
    assert out[0].startswith("notes/zfs-snapshots.org:")
    th = app.send("run echo hi", wait=60)
    ident = re.search(r"\[approval (\w+)\]", "\n".join(out))[1]
    app.handle(f"/approve {ident}")
    th.join(60)
    assert any(re.search(r"exited 0\s+hi", s) for s in out)


def test_local_backend_answers_a_notes_question_from_the_note(local):
    app, out = make_app(local)
    app.handle("how many eggs do I crack into the shakshuka?", wait=120)
    text = "\n".join(out)
    assert "eggs" in text and "(notes/shakshuka.org:" in text


# -- a running daemon ---------------------------------------------------------------------
TOKEN = "tui-test-token-0123456789"


@pytest.fixture
def daemon(memex: Path, tmp_path: Path) -> Iterator[str]:
    uvicorn = pytest.importorskip("uvicorn")
    from opencortex.server import create_app
    from opencortex.server.app import cancel_pending

    m = Memex(memex, tmp_path / "daemon.db")
    m.sync()
    app = create_app(m, token=TOKEN, heartbeat=0, rate=0)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=10))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    wait_for(lambda: server.started, 10)
    yield f"http://127.0.0.1:{port}"
    cancel_pending(app.state.kernel)
    server.should_exit = True
    t.join(30)
    m.close()


def test_remote_backend_streams_searches_and_approves(daemon, monkeypatch):
    monkeypatch.setenv("OPENCORTEX_TOKEN", TOKEN)
    b = RemoteBackend(daemon)
    app, out = make_app(b)
    app.handle("what are the two hard things in computer science?", wait=60)
    assert any(re.fullmatch(r"  -> notes/caching-strategies\.org:\d+  id:[0-9a-f-]+", s)
               for s in out)
    out.clear()
    app.handle("/search zfs")
    assert out[0].startswith("notes/zfs-snapshots.org:")
    th = app.send("run echo hi", wait=60)
    ident = re.search(r"\[approval (\w+)\]", "\n".join(out))[1]
    app.handle(f"/approve {ident}")
    th.join(60)
    assert any(re.search(r"exited 0\s+hi", s) for s in out)
    app.handle("/approve nope")
    assert out[-1].startswith("error: HTTP 404")


def test_remote_backend_reports_a_wrong_token_and_a_bad_url(daemon):
    app, out = make_app(RemoteBackend(daemon, token="wrong"))
    app.handle("/search zfs")
    assert out[-1].startswith("error: HTTP 401")
    with pytest.raises(BackendError):
        RemoteBackend("ftp://x")
