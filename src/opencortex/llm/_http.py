"""The wire: one JSON POST over ``http.client`` with separate connect and read timeouts, and
a Server-Sent-Events line reader.

Why ``http.client`` rather than ``urllib``: it lets the connect timeout (a dead host should
fail fast) differ from the read timeout (a big local model may think for a minute), and it
reads a streamed body line by line.  Proxies from the environment (``https_proxy``,
``no_proxy``) are honoured for non-loopback hosts.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import AnswerLimit
from .providers import is_loopback

if TYPE_CHECKING:
    import http.client

__all__ = ["MAX_ANSWER_BYTES", "AnswerLimit", "answer_deadline", "error_detail", "open_post",
           "read_answer", "retry_after_seconds", "sse_data"]

_MAX_ERROR_BODY = 64 * 1024
MAX_ANSWER_BYTES = 16 << 20
"""A model's whole answer (JSON or stream) is read up to this many bytes: a hostile or
broken server cannot fill memory."""
_MAX_LINE = 4 << 20
_CHUNK = 64 * 1024


def answer_deadline(read_timeout: float) -> float:
    """When reading an answer must stop (monotonic): the read timeout bounds each silence,
    this bounds the whole answer, so a server dripping a byte at a time cannot hold a
    worker forever (10 minutes, or 5 read timeouts when that is longer)."""
    return time.monotonic() + max(600.0, 5 * read_timeout)


def _check(total: int, deadline: float | None) -> None:
    if total > MAX_ANSWER_BYTES:
        raise AnswerLimit(f"the answer passed {MAX_ANSWER_BYTES >> 20} MiB; stopped reading")
    if deadline is not None and time.monotonic() > deadline:
        raise AnswerLimit("the answer took longer than the whole-answer time limit; "
                          "stopped reading")


class _Watchdog:
    """Shuts the socket down at ``deadline``: a read that keeps getting a byte before each
    read timeout would otherwise never return (``readline`` waits for its newline)."""

    def __init__(self, sock: socket.socket | None, deadline: float | None) -> None:
        self.fired = False
        self._timer: threading.Timer | None = None
        if sock is not None and deadline is not None:
            self._sock = sock
            self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def check(self) -> None:
        if self.fired:
            raise AnswerLimit("the answer took longer than the whole-answer time limit; "
                              "stopped reading")


def read_answer(resp: http.client.HTTPResponse, deadline: float | None = None,
                sock: socket.socket | None = None) -> bytes:
    """The body, read in chunks up to :data:`MAX_ANSWER_BYTES` and ``deadline`` (with
    ``sock``, enforced even inside a read that keeps receiving a byte at a time)."""
    out = bytearray()
    dog = _Watchdog(sock or getattr(resp, "oc_socket", None), deadline)
    try:
        while True:
            try:
                chunk = resp.read(_CHUNK)
            except (OSError, ValueError):
                dog.check()
                raise
            dog.check()
            if not chunk:
                return bytes(out)
            out += chunk
            _check(len(out), deadline)
    finally:
        dog.cancel()


def _connection(url: str, connect_timeout: float) -> tuple[http.client.HTTPConnection, str]:
    """A connection for ``url`` (via the environment's proxy if one applies) and the request
    target to send on it."""
    import http.client
    import urllib.request

    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme not in ("http", "https") or not host:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = parts.port or (443 if scheme == "https" else 80)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    proxy = None
    if not is_loopback(url) and not urllib.request.proxy_bypass(host):
        proxy = urllib.request.getproxies().get(scheme)
    if scheme == "https":
        import ssl

        ctx = ssl.create_default_context()
        if proxy:
            pp = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                pp.hostname or "", pp.port or 8080, timeout=connect_timeout, context=ctx)
            conn.set_tunnel(host, port)
        else:
            conn = http.client.HTTPSConnection(host, port, timeout=connect_timeout, context=ctx)
        return conn, target
    if proxy:
        pp = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        return (http.client.HTTPConnection(pp.hostname or "", pp.port or 8080,
                                           timeout=connect_timeout), url)
    return http.client.HTTPConnection(host, port, timeout=connect_timeout), target


def open_post(url: str, body: bytes, headers: dict[str, str], *, connect_timeout: float,
              read_timeout: float) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """POST and return the open connection and its response (status and headers read).

    Raises ``TimeoutError``/``OSError``/``http.client.HTTPException`` as they come; the caller
    classifies them and must close the connection.
    """
    conn, target = _connection(url, connect_timeout)
    try:
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(read_timeout)
        conn.timeout = read_timeout
        conn.request("POST", target, body=body, headers=headers)
        sock = conn.sock
        resp = conn.getresponse()
        # the response keeps reading from this socket after the connection lets go of it
        # (Connection: close): the whole-answer watchdog needs it
        setattr(resp, "oc_socket", sock)  # noqa: B010
        return conn, resp
    except BaseException:
        conn.close()
        raise


def error_detail(resp: http.client.HTTPResponse) -> str:
    """The server's own error message (OpenAI shape ``{"error": {"message": ...}}``) or its text."""
    try:
        raw = resp.read(_MAX_ERROR_BODY)
    except (OSError, ValueError):
        return resp.reason or ""
    return detail_from_body(raw) or resp.reason or ""


def detail_from_body(raw: bytes | str | dict[str, Any]) -> str:
    payload: Any = raw
    if not isinstance(raw, dict):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        try:
            payload = json.loads(text)
        except ValueError:
            return " ".join(text.split())[:300]
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("error")
            if msg:
                return " ".join(str(msg).split())[:300]
        elif err:
            return " ".join(str(err).split())[:300]
    return json.dumps(payload)[:300]


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date (RFC 9110); None if absent/garbled."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    import email.utils
    import time

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def sse_data(resp: http.client.HTTPResponse, deadline: float | None = None,
             sock: socket.socket | None = None) -> Iterator[str]:
    """The ``data`` payload of each Server-Sent Event (multi-line data joined with ``\\n``).

    Comments (``: keep-alive``, OpenRouter's ``: OPENROUTER PROCESSING``) and other fields are
    skipped.  Socket timeouts propagate as ``TimeoutError``; past :data:`MAX_ANSWER_BYTES`
    (comments and keep-alives count) or ``deadline``, :class:`AnswerLimit`.
    """
    dog = _Watchdog(sock or getattr(resp, "oc_socket", None), deadline)
    try:
        yield from _sse_lines(resp, deadline, dog)
    finally:
        dog.cancel()


def _sse_lines(resp: http.client.HTTPResponse, deadline: float | None,
               dog: _Watchdog) -> Iterator[str]:
    buf: list[str] = []
    total = 0
    while True:
        try:
            raw = resp.readline(_MAX_LINE)
        except (OSError, ValueError):
            dog.check()
            raise
        dog.check()
        if not raw:
            break
        total += len(raw)
        _check(total, deadline)
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if buf:
                yield "\n".join(buf)
                buf = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name != "data":
            continue
        buf.append(value[1:] if value.startswith(" ") else value)
    if buf:
        yield "\n".join(buf)
