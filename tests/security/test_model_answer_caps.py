"""A hostile model server on loopback cannot fill memory or hold a worker: the answer is
read up to a byte cap (JSON and streams alike; keep-alive comments count) and a
whole-answer time limit."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from opencortex.errors import GatewayError
from opencortex.llm import _http
from opencortex.llm.providers import Provider
from tests.llm.conftest import FAST, SMART, gateway


class Flood:
    """An HTTP server that answers every request with an endless body of ``unit``."""

    def __init__(self, ctype: str, unit: bytes, pause: float = 0.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.ctype, self.unit, self.pause = ctype, unit, pause
        self.sent = 0
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(c,), daemon=True).start()

    def _one(self, c: socket.socket) -> None:
        with c:
            c.recv(65536)
            c.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: {self.ctype}\r\n"
                      "Connection: close\r\n\r\n".encode())
            block = self.unit * max(1, 65536 // len(self.unit))
            try:
                while not self.stop.is_set():
                    c.sendall(block if not self.pause else self.unit)
                    self.sent += len(block) if not self.pause else len(self.unit)
                    if self.pause:
                        time.sleep(self.pause)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def flood() -> Iterator[Any]:
    made: list[Flood] = []

    def make(*a: Any, **kw: Any) -> Flood:
        made.append(Flood(*a, **kw))
        return made[-1]

    yield make
    for f in made:
        f.close()


def _provider(url: str) -> Provider:
    return Provider(name="hostile", base_url=url, models={"fast": FAST, "smart": SMART},
                    timeout=2.0, connect_timeout=1.0, max_retries=0, backoff=0.001)


@pytest.mark.parametrize(("ctype", "unit"), [("application/json", b'{"a":'),
                                             ("text/event-stream", b": keep-alive\n"),
                                             ("text/event-stream", b"data: x")])
def test_an_endless_answer_is_cut_at_the_cap(flood: Any, ctype: str, unit: bytes) -> None:
    srv = flood(ctype, unit)
    gw = gateway(_provider(srv.url))
    with pytest.raises(GatewayError, match="MiB"):
        if ctype == "application/json":
            gw.complete([{"role": "user", "content": "hi"}])
        else:
            list(gw.stream([{"role": "user", "content": "hi"}]))
    assert srv.sent < 4 * _http.MAX_ANSWER_BYTES


def test_a_dripping_answer_stops_at_the_time_limit(flood: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte every 50 ms never trips the read timeout; the whole-answer limit stops it."""
    monkeypatch.setattr(_http, "answer_deadline", lambda timeout: time.monotonic() + 1.0)
    srv = flood("text/event-stream", b":", pause=0.05)
    gw = gateway(_provider(srv.url))
    t = time.monotonic()
    with pytest.raises(GatewayError, match="time limit"):
        list(gw.stream([{"role": "user", "content": "hi"}]))
    assert time.monotonic() - t < 10
