"""The HTTP response layer's egress check: every byte the app sends to a client that may
not see private notes passes ``Access.egress`` (``guard.egress``) here, whatever route made
it — JSON bodies string by string, each SSE event's data, any text body — so a route added
next month is covered without remembering to be.  Routes still withhold by path first
(``Access``); this is the check on the bytes themselves."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["EgressLayer"]


class EgressLayer:
    """Pure ASGI middleware: ``check`` maps JSON-like data (or a str) to what may leave."""

    def __init__(self, app: ASGIApp, check: Callable[[Any], Any]) -> None:
        self.app = app
        self.check = check
        self.state: Any = getattr(app, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        kind = ""
        body: list[bytes] = []

        async def send_(message: Message) -> None:
            nonlocal start, kind
            if message["type"] == "http.response.start":
                start = message
                ctype = dict(message.get("headers") or []).get(b"content-type", b"")
                kind = ("sse" if ctype.startswith(b"text/event-stream") else
                        "json" if b"json" in ctype else "text")
                if kind == "sse":
                    await send(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunk = message.get("body", b"")
            if kind == "sse":
                await send({**message, "body": self._event(chunk)})
                return
            body.append(chunk)
            if message.get("more_body"):
                return
            out = self._whole(b"".join(body), kind)
            assert start is not None
            headers = [(k, v) for k, v in start.get("headers") or [] if k != b"content-length"]
            headers.append((b"content-length", str(len(out)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": out})

        await self.app(scope, receive, send_)

    def _whole(self, data: bytes, kind: str) -> bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data  # not text (no route sends bytes): nothing a line could match
        if kind == "json":
            try:
                value = json.loads(text)
            except ValueError:
                return str(self.check(text)).encode()
            out = self.check(value)
            return data if out == value else json.dumps(out, ensure_ascii=False).encode()
        out = str(self.check(text))
        return data if out == text else out.encode()

    def _event(self, chunk: bytes) -> bytes:
        lines = chunk.decode("utf-8", "replace").split("\n")
        for i, line in enumerate(lines):
            if not line.startswith("data:"):
                continue
            raw = line[5:].lstrip(" ")
            try:
                value = json.loads(raw)
            except ValueError:
                lines[i] = "data: " + " ".join(str(self.check(raw)).split("\n"))
                continue
            out = self.check(value)
            if out != value:
                lines[i] = "data: " + json.dumps(out, ensure_ascii=False)
        return "\n".join(lines).encode()
