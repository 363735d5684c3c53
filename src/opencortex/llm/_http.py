"""The wire: one JSON POST over ``http.client`` with separate connect and read timeouts, and
a Server-Sent-Events line reader.

Why ``http.client`` rather than ``urllib``: it lets the connect timeout (a dead host should
fail fast) differ from the read timeout (a big local model may think for a minute), and it
reads a streamed body line by line.  Proxies from the environment (``https_proxy``,
``no_proxy``) are honoured for non-loopback hosts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .providers import is_loopback

if TYPE_CHECKING:
    import http.client

__all__ = ["error_detail", "open_post", "retry_after_seconds", "sse_data"]

_MAX_ERROR_BODY = 64 * 1024


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
        return conn, conn.getresponse()
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


def sse_data(resp: http.client.HTTPResponse) -> Iterator[str]:
    """The ``data`` payload of each Server-Sent Event (multi-line data joined with ``\\n``).

    Comments (``: keep-alive``, OpenRouter's ``: OPENROUTER PROCESSING``) and other fields are
    skipped.  Socket timeouts propagate as ``TimeoutError``.
    """
    buf: list[str] = []
    while True:
        raw = resp.readline()
        if not raw:
            break
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
