"""Web delegate skill: fetch a page as readable text (trafilatura: main content, no
boilerplate) and search a SearXNG-compatible JSON endpoint — both with size and time limits
and SSRF protection.

SSRF: every URL and redirect target is checked, and so is every address connected to
(``web_http``: imported by the first fetch, so an ``ask`` that fetches nothing loads no
HTTP client).
"""

from __future__ import annotations

import json
import re
import urllib.parse
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
    from .web_http import get

    body, ctype, charset, final, _ = get(
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
    from .web_http import get

    body, ctype, charset, final, truncated = get(
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
