"""A real uvicorn server on a free loopback port, in a thread, over a private memex copy."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from opencortex.memex import Memex  # noqa: E402
from opencortex.server import create_app  # noqa: E402
from opencortex.server.app import cancel_pending  # noqa: E402

TOKEN = "test-token-0123456789abcdef"
APPROVER = "test-approver-fedcba9876543210"
PERSON = {"X-OpenCortex-Approver": APPROVER}
"""Headers of the person's own tool (TUI, Emacs): only they resolve approvals."""


@dataclass
class Live:
    port: int
    token: str
    app: Any
    memex: Memex

    @property
    def kernel(self) -> Any:
        return self.app.state.kernel

    def conn(self, timeout: float = 60) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method: str, path: str, body: Any = None, *, token: str | None = "",
                raw: bytes | None = None, headers: dict[str, str] | None = None,
                timeout: float = 60) -> tuple[int, Any, dict[str, str]]:
        """(status, parsed JSON body or text, headers); ``token=None`` sends none."""
        h = dict(headers or {})
        tok = self.token if token == "" else token
        if tok is not None:
            h["Authorization"] = f"Bearer {tok}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        c = self.conn(timeout)
        try:
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            text = r.read().decode()
            try:
                parsed: Any = json.loads(text)
            except ValueError:
                parsed = text
            return r.status, parsed, {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

    def stream(self, path: str, body: Any, timeout: float = 60) -> Iterator[tuple[str, str]]:
        """POST and yield Server-Sent Events as (event name, data) while they arrive."""
        c = self.conn(timeout)
        c.request("POST", path, body=json.dumps(body).encode(),
                  headers={"Authorization": f"Bearer {self.token}",
                           "Content-Type": "application/json"})
        r = c.getresponse()
        assert r.status == 200, r.read()
        assert r.getheader("content-type", "").startswith("text/event-stream")
        event, data = "message", []
        try:
            while True:
                line = r.readline()
                if not line:
                    return
                s = line.decode().rstrip("\r\n")
                if not s:
                    if data:
                        yield event, "\n".join(data)
                    event, data = "message", []
                elif s.startswith("event:"):
                    event = s[6:].strip()
                elif s.startswith("data:"):
                    data.append(s[5:].lstrip(" "))
        finally:
            c.close()


def run_server(app: Any) -> tuple[Any, threading.Thread, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=10))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.01)
    assert server.started, "server did not start"
    return server, t, port


@pytest.fixture
def make_live(memex: Path, tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[Any, threading.Thread, Memex]] = []

    def make(**options: Any) -> Live:
        m = Memex(memex, index=tmp_path / f"i{len(started)}.sqlite3")
        m.sync()
        opts = {"heartbeat": 0, "rate": 0, **options}
        app = create_app(m, token=TOKEN, **{"approver_token": APPROVER, **opts})
        app.state.kernel.heartbeat_embed = 0
        server, t, port = run_server(app)
        started.append((server, t, m))
        return Live(port, TOKEN, app, m)

    yield make
    for server, t, m in started:
        cancel_pending(server.config.app.state.kernel)  # as serve() does on SIGTERM
        server.should_exit = True
        t.join(30)
        m.close()


@pytest.fixture
def live(make_live: Any) -> Live:
    return make_live()
