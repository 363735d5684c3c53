"""The Telegram gateway against a local server speaking the Bot API's HTTP protocol."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from opencortex.memex import Memex
from opencortex.runtime import Runtime
from opencortex.telegram import TelegramError, TelegramGateway, split_message

TOKEN = "123456:SECRET-token_abcdefXYZ"
OWNER = 1001
STRANGER = 2002


class FakeBotAPI:
    """Serves queued updates by offset, records sendMessage bodies, and can be told to
    fail the next calls (``fail``: a list of (status, body))."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.offsets: list[int | None] = []
        self.fail: list[tuple[int, dict[str, Any]]] = []
        self.paths: list[str] = []
        self._next_id = 500
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                api.paths.append(self.path)
                m = re.fullmatch(r"/bot(?P<tok>[^/]+)/(?P<method>\w+)", self.path)
                if not m or m["tok"] != TOKEN:
                    return self._reply(401, {"ok": False, "error_code": 401,
                                             "description": "Unauthorized"})
                with api._lock:
                    if api.fail:
                        status, body = api.fail.pop(0)
                        return self._reply(status, body)
                body = json.loads(raw) if raw else {}
                if m["method"] == "getUpdates":
                    off = body.get("offset")
                    api.offsets.append(off)
                    res = [u for u in api.updates if off is None or u["update_id"] >= off]
                    return self._reply(200, {"ok": True, "result": res})
                if m["method"] == "sendMessage":
                    with api._lock:
                        api.sent.append(body)
                        api._next_id += 1
                        mid = api._next_id
                    return self._reply(200, {"ok": True, "result": {
                        "message_id": mid, "chat": {"id": body["chat_id"], "type": "private"},
                        "date": int(time.time()), "text": body["text"]}})
                return self._reply(404, {"ok": False, "error_code": 404,
                                         "description": "Not Found"})

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def message(self, chat_id: int, text: str) -> None:
        uid = 9000 + len(self.updates)
        self.updates.append({"update_id": uid, "message": {
            "message_id": uid, "from": {"id": chat_id, "is_bot": False, "first_name": "P"},
            "chat": {"id": chat_id, "type": "private"}, "date": int(time.time()),
            "text": text}})

    def to(self, chat_id: int) -> list[str]:
        return [s["text"] for s in list(self.sent) if s["chat_id"] == chat_id]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def api() -> Iterator[FakeBotAPI]:
    a = FakeBotAPI()
    yield a
    a.close()


@pytest.fixture
def logs() -> Iterator[Records]:
    h = Records()
    lg = logging.getLogger("opencortex.telegram")
    lg.addHandler(h)
    lg.setLevel(logging.DEBUG)
    yield h
    lg.removeHandler(h)


@pytest.fixture
def kernel(memex: Path, tmp_path: Path) -> Iterator[Any]:
    m = Memex(memex, tmp_path / "index.db")
    m.sync()
    k = Runtime(memex=m).kernel(approval_timeout=30)  # as `opencortex telegram` builds it
    yield k
    for p in k.approvals.pending():
        k.approvals.cancel(p.id, by="test")
    k.shutdown(timeout=10)
    m.close()


def wait_for(cond: Callable[[], Any], timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def gateway(kernel: Any, api: FakeBotAPI, **kw: Any) -> TelegramGateway:
    gw = TelegramGateway(kernel, TOKEN, [OWNER], api_base=api.base, poll_timeout=0, **kw)
    gw.sleep = lambda s: None
    return gw


def test_allowed_chat_gets_an_answer_citing_the_memex(kernel, api, logs):
    api.message(OWNER, "caching strategies")
    gw = gateway(kernel, api)
    assert gw.poll_once() == 1
    texts = wait_for(lambda: api.to(OWNER))
    assert "notes/caching-strategies.org" in "\n".join(texts)
    assert all(p.startswith(f"/bot{TOKEN}/") for p in api.paths)
    assert not any(TOKEN in line for line in logs.lines)


def test_disallowed_chat_is_ignored_and_logged(kernel, api, logs):
    api.message(STRANGER, "caching strategies")
    gw = gateway(kernel, api)
    assert gw.poll_once() == 0
    time.sleep(0.5)
    assert api.sent == []
    assert any("ignored" in line and str(STRANGER) in line for line in logs.lines)
    assert kernel.stats.received == 0


def test_offsets_advance_and_nothing_is_handled_twice(kernel, api):
    api.message(OWNER, "/help")
    api.message(OWNER, "/help")
    gw = gateway(kernel, api)
    assert gw.poll_once() == 2
    assert gw.poll_once() == 0
    assert api.offsets == [None, 9002]
    api.message(OWNER, "/start")
    assert gw.poll_once() == 1
    assert api.offsets[-1] == 9002 and gw.offset == 9003
    assert len(api.to(OWNER)) == 3


def test_429_waits_retry_after_then_succeeds(kernel, api, logs):
    api.fail = [(429, {"ok": False, "error_code": 429,
                       "description": "Too Many Requests: retry after 3",
                       "parameters": {"retry_after": 3}})]
    api.message(OWNER, "/help")
    gw = gateway(kernel, api)
    slept: list[float] = []
    gw.sleep = slept.append
    assert gw.poll_once() == 1
    assert slept == [3.0]
    assert len(api.to(OWNER)) == 1
    assert any("429" in line for line in logs.lines)
    assert not any(TOKEN in line for line in logs.lines)


def test_5xx_backs_off_and_gives_up_without_leaking_the_token(kernel, api, logs):
    api.fail = [(502, {"ok": False, "description": "Bad Gateway"})] * 3
    gw = gateway(kernel, api, retries=2, backoff=0.5)
    slept: list[float] = []
    gw.sleep = slept.append
    with pytest.raises(TelegramError) as e:
        gw.poll_once()
    assert slept == [0.5, 1.0]
    assert e.value.upstream_status == 502 and TOKEN not in str(e.value)
    assert not any(TOKEN in line for line in logs.lines)


def test_network_errors_are_redacted(kernel, logs):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here now
    gw = TelegramGateway(kernel, TOKEN, [OWNER], api_base=f"http://127.0.0.1:{port}",
                         poll_timeout=0, retries=1)
    gw.sleep = lambda s: None
    with pytest.raises(TelegramError) as e:
        gw.poll_once()
    assert TOKEN not in str(e.value)
    assert logs.lines and not any(TOKEN in line for line in logs.lines)
    assert gw.redact(f"http://x/bot{TOKEN}/getMe") == "http://x/bot<token>/getMe"


def test_long_replies_are_split(kernel, api):
    gw = gateway(kernel, api)
    text = "\n".join(f"line {i} " + "x" * 90 for i in range(100))  # ~10k chars
    gw.send(OWNER, text)
    parts = api.to(OWNER)
    assert len(parts) == 3
    assert all(len(p) <= 4096 for p in parts)
    assert "\n".join(parts) == text


def test_split_message_hard_cuts_and_counts_utf16():
    assert split_message("") == []
    assert split_message("hi") == ["hi"]
    parts = split_message("a" * 9000)
    assert [len(p) for p in parts] == [4096, 4096, 808]
    emoji = split_message("😀" * 3000)  # 2 UTF-16 units each
    assert [len(p) for p in emoji] == [2048, 952]


def test_approve_from_the_chat_runs_the_action(kernel, api):
    gw = gateway(kernel, api)
    api.message(OWNER, "run echo hi")
    gw.poll_once()
    note = wait_for(lambda: [t for t in api.to(OWNER) if "/approve " in t])
    ident = re.search(r"/approve (\w+)", note[0])[1]
    api.message(STRANGER, f"/approve {ident}")
    api.message(OWNER, f"/approve {ident}")
    gw.poll_once()
    wait_for(lambda: any(re.search(r"exited 0\s+hi", t) for t in api.to(OWNER)))
    assert api.to(STRANGER) == []
    assert any(f"Approved {ident}" in t for t in api.to(OWNER))


def test_run_stops_on_the_event(kernel, api):
    gw = TelegramGateway(kernel, TOKEN, [OWNER], api_base=api.base, poll_timeout=0)
    api.message(OWNER, "/help")
    stop = threading.Event()
    th = threading.Thread(target=gw.run, args=(stop,), daemon=True)
    th.start()
    wait_for(lambda: api.to(OWNER), timeout=10)
    stop.set()
    th.join(timeout=10)
    assert not th.is_alive()
    assert len(api.to(OWNER)) == 1


def test_a_telegram_answer_never_quotes_a_private_note(kernel, api, logs):
    """Telegram is not a trusted client by default: the physio's name sits in a :private:
    note, and the reply names neither it nor its file."""
    api.message(OWNER, "who is the physio treating my knee?")
    gw = gateway(kernel, api)
    assert gw.poll_once() == 1
    text = "\n".join(wait_for(lambda: api.to(OWNER), timeout=120))
    assert "Keller" not in text and "sleep-and-running" not in text, text


def test_a_notes_question_is_answered_from_the_note_cited(kernel, api, logs):
    api.message(OWNER, "how many eggs do I crack into the shakshuka?")
    gw = gateway(kernel, api)
    assert gw.poll_once() == 1
    text = "\n".join(wait_for(lambda: api.to(OWNER), timeout=120))
    assert "eggs" in text and "(notes/shakshuka.org:" in text
