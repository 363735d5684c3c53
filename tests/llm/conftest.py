"""A real OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test.

Each test queues ``Reply`` objects; every request is recorded and checked against the request
shape OpenAI documents (violations fail the test at teardown).  When the queue is empty the
server answers a plain "ok" completion.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from opencortex.llm import Gateway, Provider

FAST, SMART = "test-fast", "test-smart"


@dataclass
class Reply:
    """What the server sends for one request."""

    status: int = 200
    body: Any = None
    """dict → JSON; str/bytes → sent as is; None → a plain "ok" completion."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (to trigger client timeouts)."""
    sse: list[Any] | None = None
    """Streamed answer: dict → ``data: {json}``; str → raw SSE text; float → pause (s)."""
    cut: bool = False
    """Drop the connection after the SSE events, without the terminating chunk."""


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def completion(text: str | None = "ok", *, tool_calls: list[dict] | None = None,
               finish: str = "stop", model: str = "served-model") -> dict[str, Any]:
    """A response body exactly as OpenAI documents ``chat.completion``."""
    msg: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "chatcmpl-123", "object": "chat.completion", "created": 1700000000,
            "model": model, "system_fingerprint": "fp_1",
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}}


def tool_call(name: str, arguments: str, id: str = "call_abc") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chunk(delta: dict[str, Any], finish: str | None = None,
          model: str = "served-model") -> dict[str, Any]:
    """One ``chat.completion.chunk`` as OpenAI streams it."""
    return {"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1700000000,
            "model": model, "system_fingerprint": "fp_1",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def text_stream(*pieces: str, finish: str = "stop") -> list[Any]:
    return ([chunk({"role": "assistant", "content": ""})]
            + [chunk({"content": p}) for p in pieces]
            + [chunk({}, finish), "data: [DONE]\n\n"])


def _shape_errors(body: Any) -> list[str]:
    """Request-shape checks from OpenAI's "Create chat completion" reference."""
    errs = []
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        errs.append("model missing")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        errs.append("messages missing")
    else:
        for m in msgs:
            if m.get("role") not in {"system", "developer", "user", "assistant", "tool"}:
                errs.append(f"bad role {m.get('role')!r}")
            if "content" not in m:
                errs.append("message without content key")
            if m.get("role") == "tool" and not m.get("tool_call_id"):
                errs.append("tool message without tool_call_id")
            for tc in m.get("tool_calls") or []:
                if tc.get("type") != "function" or not isinstance(
                        tc.get("function", {}).get("arguments"), str):
                    errs.append(f"bad assistant tool_call {tc!r}")
    if "stream" in body and not isinstance(body["stream"], bool):
        errs.append("stream not a bool")
    rf = body.get("response_format")
    if rf is not None:
        if rf.get("type") == "json_schema":
            js = rf.get("json_schema") or {}
            if not js.get("name") or not isinstance(js.get("schema"), dict):
                errs.append(f"bad json_schema response_format {rf!r}")
        elif rf.get("type") != "json_object":
            errs.append(f"bad response_format {rf!r}")
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if t.get("type") != "function" or not fn.get("name") or not isinstance(
                fn.get("parameters"), dict):
            errs.append(f"bad tool {t!r}")
    return errs


class FakeLLM:
    """The scripted server; ``url`` is its ``/v1`` base URL."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                    fake.errors.append(f"request body is not JSON: {raw[:100]!r}")
                with fake.lock:
                    fake.seen.append(Seen(self.path, dict(self.headers.items()), body))
                    reply = fake.replies.popleft() if fake.replies else Reply()
                if self.path != "/v1/chat/completions":
                    fake.errors.append(f"unexpected path {self.path}")
                    reply = Reply(404, {"error": {"message": "not found"}})
                fake.errors.extend(_shape_errors(body))
                if reply.delay and fake.stop.wait(reply.delay):
                    return
                try:
                    self._answer(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                self.close_connection = True

            def _answer(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.sse is not None:
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for ev in reply.sse:
                        if isinstance(ev, float):
                            if fake.stop.wait(ev):
                                return
                            continue
                        text = ev if isinstance(ev, str) else f"data: {json.dumps(ev)}\n\n"
                        data = text.encode()
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                    if reply.cut:
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.wfile.write(b"0\r\n\r\n")
                    return
                body = reply.body if reply.body is not None else completion()
                if isinstance(body, dict | list):
                    data = json.dumps(body).encode()
                    ctype = "application/json"
                else:
                    data = body.encode() if isinstance(body, str) else body
                    ctype = "text/plain"
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,),
                                       daemon=True)
        self.thread.start()

    def push(self, *replies: Reply) -> FakeLLM:
        self.replies.extend(replies)
        return self

    @property
    def last(self) -> Seen:
        assert self.seen, "the server received no request"
        return self.seen[-1]

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def make_server() -> Iterator[Callable[[], FakeLLM]]:
    servers: list[FakeLLM] = []

    def make() -> FakeLLM:
        servers.append(FakeLLM())
        return servers[-1]

    yield make
    for s in servers:
        s.close()
    errors = [e for s in servers for e in s.errors]
    assert not errors, f"the fake server saw malformed requests: {errors}"


@pytest.fixture
def server(make_server: Callable[[], FakeLLM]) -> FakeLLM:
    return make_server()


def provider(srv: FakeLLM, name: str = "local", **kw: Any) -> Provider:
    """A provider for a fake server with test-sized timeouts and backoff."""
    opts: dict[str, Any] = {"models": {"fast": FAST, "smart": SMART}, "timeout": 2.0,
                            "connect_timeout": 1.0, "max_retries": 2, "backoff": 0.001,
                            "max_backoff": 5.0}
    opts.update(kw)
    return Provider(name=name, base_url=srv.url, **opts)


class Sleeps(list):
    """Records requested back-off delays instead of sleeping (keeps tests fast)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def gateway(*providers: Provider, sleeps: Sleeps | None = None, **kw: Any) -> Gateway:
    return Gateway(providers, sleep=sleeps if sleeps is not None else Sleeps(), **kw)
