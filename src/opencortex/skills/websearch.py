"""Web delegate skill: fetch a page as readable text (trafilatura: main content, no
boilerplate) and search a SearXNG-compatible JSON endpoint — both with size and time limits
and SSRF protection.

SSRF: every URL (and every redirect target) passes the guard's web check (http(s) only, no
credentials, no loopback / private / link-local names or literals unless
``allow_private``), and the connection itself resolves the host, refuses if *any*
resolved address is private, and connects to the address it checked (so a DNS answer
that changes between check and connect — rebinding — cannot slip through).  No proxies,
no ``file:``/``ftp:`` handlers, at most :data:`MAX_REDIRECTS` redirects.
"""

from __future__ import annotations

import functools
import http.client
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ..errors import WebError
from .base import Action, Context, Proposal, Rejection, Skill

__all__ = ["MAX_REDIRECTS", "TARGET", "WebError", "fetch_readable", "format_results",
           "search", "search_endpoint", "skill"]

TARGET = "web"
MAX_REDIRECTS = 5
USER_AGENT = "OpenCortex/0.1 (+local agent)"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = ("text/plain", "text/markdown")


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


def _get(url: str, *, timeout: float, max_bytes: int, allow_private: bool,
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


# -- readable text ------------------------------------------------------------------------
_TITLE_OPEN = re.compile(r"<title", re.I)
_TITLE_CLOSE = re.compile(r"</title>", re.I)


def _title_of(html: str) -> str:
    """The first ``<title …>…</title>``'s text.  Each search runs once from where the last
    ended: ``<title[^>]*>(.*?)</title>`` retried at every ``<title`` of a page that never
    closes one scanned the rest of the page each time (quadratic: a hostile page of
    ``<title>`` repeated took minutes)."""
    m = _TITLE_OPEN.search(html)
    if not m:
        return ""
    gt = html.find(">", m.end())
    end = _TITLE_CLOSE.search(html, gt + 1) if gt >= 0 else None
    if end is None:
        return ""
    import html as html_mod

    return " ".join(html_mod.unescape(html[gt + 1:end.start()]).split())


def html_to_text(html: str, url: str | None = None) -> tuple[str, str]:
    """(title, main text) of an HTML document: trafilatura's main-content extraction,
    falling back to its whole-page text for pages too small to have a "main" part."""
    import trafilatura

    doc = trafilatura.bare_extraction(html, url=url, with_metadata=True,
                                      include_comments=False, include_tables=True)
    title = (getattr(doc, "title", None) or "") if doc is not None else ""
    text = (getattr(doc, "text", None) or "") if doc is not None else ""
    if not text.strip():
        text = trafilatura.html2txt(html) or ""
    return " ".join((_title_of(html) or title).split()), text.strip()


def fetch_readable(url: str, *, timeout: float = 15.0, max_bytes: int = 2_000_000,
                   allow_private: bool = False) -> tuple[str, str]:
    """GET ``url`` (SSRF-checked, at most ``max_bytes``, within ``timeout`` seconds in
    total) and return ``(title, readable text)``.  HTML and plain text only; a body over
    the limit is cut at ``max_bytes`` and what arrived is used."""
    body, ctype, charset, final, _ = _get(
        url, timeout=timeout, max_bytes=max_bytes, allow_private=allow_private,
        accept="text/html,application/xhtml+xml,text/plain;q=0.8")
    if ctype in _TEXT_TYPES:
        text = body.decode(charset or "utf-8", "replace")
        return "", text.strip()
    if ctype and ctype not in _HTML_TYPES:
        raise WebError(f"{final}: {ctype} is not a web page (only HTML or plain text is read)")
    html = body.decode(charset or _sniff_charset(body) or "utf-8", "replace")
    return html_to_text(html, final)


def _sniff_charset(body: bytes) -> str | None:
    m = re.search(rb"<meta[^>]+charset=[\"']?([\w-]+)", body[:4096], re.I)
    if not m:
        return None
    name = m.group(1).decode("ascii", "replace")
    try:
        import codecs

        codecs.lookup(name)
        return name
    except LookupError:
        return None


# -- search ---------------------------------------------------------------------------
def search(query: str, endpoint: str, *, timeout: float = 10.0, max_bytes: int = 1_000_000,
           limit: int = 10, allow_private: bool = False) -> list[dict[str, str]]:
    """Results of ``GET {endpoint}/search?q=...&format=json`` (SearXNG's JSON API) as
    ``[{title, url, snippet}]``; only http(s) result URLs are kept.  ``allow_private``:
    the endpoint is a configured local service (a self-hosted SearXNG usually is)."""
    q = " ".join(str(query).split())
    if not q:
        raise WebError("an empty search query")
    url = endpoint.rstrip("/") + "/search?" + urllib.parse.urlencode({"q": q, "format": "json"})
    body, ctype, charset, final, truncated = _get(
        url, timeout=timeout, max_bytes=max_bytes, allow_private=allow_private,
        accept="application/json")
    if truncated:
        raise WebError(f"{final}: the search answer is over {max_bytes} bytes")
    try:
        data = json.loads(body.decode(charset or "utf-8", "replace"))
    except ValueError as e:
        raise WebError(f"{final}: not a JSON search answer ({ctype or 'no type'}): {e}") \
            from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise WebError(f"{final}: the JSON has no 'results' list (is this a SearXNG "
                       "endpoint with format=json enabled?)")
    out: list[dict[str, str]] = []
    for r in results:
        if not isinstance(r, dict):
            continue
        link = str(r.get("url") or "")
        if not re.match(r"^https?://", link, re.I):
            continue
        out.append({"title": " ".join(str(r.get("title") or link).split()),
                    "url": link,
                    "snippet": " ".join(str(r.get("content") or "").split())[:400]})
        if len(out) >= limit:
            break
    return out


def format_results(query: str, results: list[dict[str, str]]) -> str:
    """A readable reply: numbered results, each with its URL."""
    if not results:
        return f"No web results for {query!r}."
    lines = [f"Web results for {query!r}:"]
    for i, r in enumerate(results, 1):
        lines.append(f"{i}. {r['title']} — {r['url']}")
        if r.get("snippet"):
            lines.append(f"   {r['snippet']}")
    return "\n".join(lines)


def search_endpoint(config: Any) -> str | None:
    """The configured endpoint (``[web] search_endpoint``, else the
    ``OPENCORTEX_SEARCH_ENDPOINT`` environment variable): from Settings' typed ``web``
    section, or parsed from a raw config mapping."""
    from ..config import WebSettings

    web = getattr(config, "web", None)
    if isinstance(web, WebSettings):
        return web.search_endpoint
    table = config.get("web") if isinstance(config, Mapping) else None
    return WebSettings.parse(table if isinstance(table, Mapping) else {}).search_endpoint


# -- skill ------------------------------------------------------------------------------
_URL = re.compile(r"https?://[^\s<>\"')\]]+", re.I)
_SEARCH = re.compile(r"^\s*(?:please\s+)?(?:search\s+(?:the\s+)?(?:web|internet|online)\s+"
                     r"(?:for\s+)?|web\s*search\s*(?:for\s+)?|look\s+up\s+online\s+|"
                     r"search\s+online\s+for\s+)[:,-]?\s*(?P<q>.+?)\s*\??$", re.I | re.S)


def _args(ctx: Context) -> dict[str, str] | None:
    p = ctx.signal.payload
    if p.get("sensor") == "delegation" and p.get("target") == TARGET:
        args = v if isinstance(v := p.get("args"), dict) else {}
        url = args.get("url") or p.get("url")
        query = args.get("query") or p.get("query")
        if url:
            return {"url": str(url).strip()}
        if query:
            return {"query": " ".join(str(query).split())}
        m = _URL.search(ctx.text)
        return {"url": m.group(0)} if m else {"query": " ".join(ctx.text.split())}
    if ctx.signal.type == "request" and (m := _SEARCH.match(ctx.text)):
        return {"query": " ".join(m.group("q").split())}
    return None


def _trigger(ctx: Context) -> bool:
    return _args(ctx) is not None


def _offline(ctx: Context) -> Proposal:
    a = _args(ctx) or {}
    if a.get("url"):
        return {"action": "web", "url": a["url"]}
    return {"action": "websearch", "query": a.get("query", "")}


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    kind = p.get("action")
    if kind == "web":
        url = str(p.get("url") or "").strip()
        if not _URL.fullmatch(url):
            return Rejection("a web proposal needs one http(s) URL")
        return Action("web", {"url": url}, origin=TARGET)
    if kind == "websearch":
        q = " ".join(str(p.get("query") or "").split())
        if not q:
            return Rejection("a web search needs a query")
        if len(q) > 400:
            return Rejection("a web search query must be under 400 characters")
        return Action("websearch", {"query": q}, origin=TARGET)
    return None


def skill() -> Skill:
    return Skill(
        "websearch", 74, trigger=_trigger, offline=_offline, symbolic=_symbolic,
        tools=["web", "websearch"],
        description="Search the web (SearXNG JSON endpoint) or read a page as text "
                    "(guarded: ask by default; no private hosts).")
