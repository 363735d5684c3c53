"""The web skill's HTTP GET: SSRF-checked, within size and time limits.

Every URL (and every redirect target) passes the guard's web check (http(s) only, no
credentials, no loopback / private / link-local names or literals unless
``allow_private``), and the connection itself resolves the host, refuses if *any*
resolved address is private, and connects to the address it checked (so a DNS answer
that changes between check and connect — rebinding — cannot slip through).  No proxies,
no ``file:``/``ftp:`` handlers, at most :data:`MAX_REDIRECTS` redirects.  Its own module so
that building the skills (every ``ask``) imports no http.client, urllib.request or ssl.
"""

from __future__ import annotations

import functools
import http.client
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..errors import WebError
from .base import Action
from .websearch import MAX_REDIRECTS, TARGET, USER_AGENT

__all__ = ["check_url", "get"]


# -- SSRF checks ------------------------------------------------------------------------
def check_url(url: str, allow_private: bool = False) -> str:
    """The guard's web check on ``url`` (scheme, host, credentials, private hosts)."""
    from ..guard import Guard, GuardPolicy, WebPolicy

    policy = GuardPolicy(web=WebPolicy(allow_private_hosts=allow_private))
    d = Guard(policy).check(Action("web", {"url": url}, origin=TARGET))
    if d.denied:
        raise WebError(d.reason)
    return str(d.action.args["url"])


def _private_ip(ip: str) -> bool:
    from ..guard.core import private_host

    return private_host(ip.split("%", 1)[0])


def _connect(address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
             source_address: Any = None, *, allow_private: bool = False) -> socket.socket:
    """Resolve, refuse private addresses, connect to an address that was checked."""
    host, port = address
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise WebError(f"cannot resolve {host}: {e}") from e
    if not infos:
        raise WebError(f"{host} resolved to no address")
    if not allow_private:
        bad = sorted({str(i[4][0]) for i in infos if _private_ip(str(i[4][0]))})
        if bad:
            raise WebError(f"refused web: {host} resolves to a local or private-network "
                           f"address ({', '.join(bad)}); set guard.web.allow_private_hosts "
                           "= true to allow it")
    err: OSError | None = None
    for family, kind, proto, _, sockaddr in infos:
        s = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                s.settimeout(timeout)
            if source_address:
                s.bind(source_address)
            s.connect(sockaddr)
            return s
        except OSError as e:
            err = e
            s.close()
    raise err or OSError(f"could not connect to {host}")


class _HTTP(http.client.HTTPConnection):
    def __init__(self, *a: Any, allow_private: bool = False, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self._create_connection = functools.partial(_connect, allow_private=allow_private)


class _HTTPS(http.client.HTTPSConnection):
    def __init__(self, *a: Any, allow_private: bool = False, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self._create_connection = functools.partial(_connect, allow_private=allow_private)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, allow_private: bool) -> None:
        super().__init__()
        self.allow_private = allow_private

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HTTP, allow_private=self.allow_private), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, allow_private: bool) -> None:
        super().__init__()
        self.allow_private = allow_private

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HTTPS, allow_private=self.allow_private), req,
                            context=self._context)  # type: ignore[attr-defined]


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def __init__(self, allow_private: bool) -> None:
        super().__init__()
        self.allow_private = allow_private

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        check_url(urllib.parse.urljoin(req.full_url, newurl), self.allow_private)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener(allow_private: bool) -> urllib.request.OpenerDirector:
    """Only http(s), our checked connections, bounded redirects; no proxies, no file:."""
    o = urllib.request.OpenerDirector()
    for h in (_HTTPHandler(allow_private), _HTTPSHandler(allow_private),
              _Redirects(allow_private), urllib.request.HTTPErrorProcessor(),
              urllib.request.HTTPDefaultErrorHandler()):
        o.add_handler(h)
    return o


def get(url: str, *, timeout: float, max_bytes: int, allow_private: bool,
         accept: str) -> tuple[bytes, str, str | None, str, bool]:
    """(body, content type, charset, final url, truncated) — within time and size."""
    url = check_url(url, allow_private)
    deadline = time.monotonic() + timeout
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": accept})
    try:
        r = _opener(allow_private).open(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise WebError(f"{url}: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, WebError):
            raise reason from None
        raise WebError(f"{url}: {reason}") from None
    except (OSError, http.client.HTTPException) as e:
        raise WebError(f"{url}: {type(e).__name__}: {e}") from None
    with r:
        ctype = (r.headers.get_content_type() or "").lower()
        charset = r.headers.get_content_charset()
        length = r.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes * 4:
            raise WebError(f"{url}: {int(length)} bytes is far over the {max_bytes}-byte limit")
        chunks: list[bytes] = []
        size = 0
        truncated = False
        while True:
            if time.monotonic() > deadline:
                raise WebError(f"{url}: took longer than {timeout:g}s; gave up")
            chunk = r.read1(min(65536, max_bytes + 1 - size))  # what has arrived
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                truncated = True
                break
        final = r.geturl()
    return b"".join(chunks)[:max_bytes], ctype, charset, final, truncated
