"""A private note asked for through every HTTP route and every MCP tool and resource:
none returns its text or title to a client not trusted with private notes.

The route and tool lists are read from the running app and server: a route or tool
added later without a probe here makes the test fail until it is covered."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from .edge_live import PRIVATE_ID, daemons, leaks, plant, write_config


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)

mcp = pytest.importorskip("mcp")

QUERIES = ("quixotic walrus", "Zanzibar vault combination", "Heliotrope marmalade",
           "Obsidian pangolin ledger", "Cerulean armadillo", "7731")
REFS = (PRIVATE_ID, f"id:{PRIVATE_ID}", "secret.org:1", "secret.org:6", "secret.org:8",
        "Zanzibar vault combination", "secret.org::Zanzibar vault combination",
        "Child inherits the tag", "diary.org:2", "umbrella.org:3", "Hidden ledger")
Probe = Callable[[Any], list[tuple[int, str]]]


def _req(live: Any, method: str, path: str, body: Any = None, sent: str = "") -> tuple[int, str]:
    """(status, body text) with the client's own words (``sent``) taken out: a reply that
    echoes the query is not a leak."""
    st, parsed, _ = live.request(method, path, body)
    text = parsed if isinstance(parsed, str) else json.dumps(parsed, ensure_ascii=False)
    return st, _unsay(text, sent)


def _unsay(text: str, sent: str) -> str:
    if sent:
        import re

        text = re.sub(re.escape(sent), "<sent>", text, flags=re.I)
    return text


def _get(path: str) -> Probe:
    return lambda live: [_req(live, "GET", path)]


def _search(live: Any) -> list[tuple[int, str]]:
    return [_req(live, "GET", f"/v1/search?{urllib.parse.urlencode({'q': q, 'k': 50, 'mode': m})}",
                 sent=q) for q in QUERIES for m in ("sparse", "hybrid")]


def _nodes(live: Any) -> list[tuple[int, str]]:
    out = [_req(live, "GET", "/v1/nodes/" + urllib.parse.quote(r, safe=""), sent=r)
           for r in REFS]
    # the public parent: its own text, without the private child's subtree
    st, text = _req(live, "GET", "/v1/nodes/" + urllib.parse.quote("Public umbrella plan"))
    assert st == 200 and "rain gauge" in text and "withheld" in text, text
    return [*out, (st, text)]


def _chat(live: Any) -> list[tuple[int, str]]:
    msgs = [*QUERIES, "what is on my agenda", "what is next"]
    return [_req(live, "POST", "/v1/chat", {"message": q, "session": f"p{i}"}, sent=q)
            for i, q in enumerate(msgs)]


def _completions(live: Any) -> list[tuple[int, str]]:
    return [_req(live, "POST", "/v1/chat/completions",
                 {"model": "opencortex", "messages": [{"role": "user", "content": q}]},
                 sent=q) for q in QUERIES[:3]]


def _events(live: Any) -> list[tuple[int, str]]:
    return [_req(live, "POST", "/v1/events", {"sensor": "point-update", "id": PRIVATE_ID}),
            _req(live, "POST", "/v1/events",
                 {"sensor": "point-update", "file": "secret.org", "line": 3})]


def _approvals_resolve(live: Any) -> list[tuple[int, str]]:
    return [_req(live, "POST", "/v1/approvals/0000", {"approve": False})]


def _recall(live: Any) -> list[tuple[int, str]]:
    return [_req(live, "POST", "/v1/recall", {"cue": f"that note about the {q}"}, sent=q)
            for q in QUERIES[:4]]


PROBES: dict[tuple[str, str], Probe] = {
    ("GET", "/healthz"): _get("/healthz"),
    ("GET", "/openapi.json"): _get("/openapi.json"),
    ("GET", "/v1/models"): _get("/v1/models"),
    ("GET", "/v1/approvals"): _get("/v1/approvals"),
    ("POST", "/v1/approvals/{id}"): _approvals_resolve,
    ("POST", "/v1/events"): _events,
    ("POST", "/v1/chat"): _chat,
    ("POST", "/v1/chat/completions"): _completions,
    ("GET", "/v1/search"): _search,
    ("GET", "/v1/nodes/{ref:path}"): _nodes,
    ("POST", "/v1/recall"): _recall,
    ("GET", "/v1/skills"): _get("/v1/skills"),
    ("POST", "/v1/skills/trust"): lambda live: [
        _req(live, "POST", "/v1/skills/trust", {"name": "secret"})],
}


def _routes(app: Any) -> set[tuple[str, str]]:
    return {(m, r.path) for r in app.app.routes for m in (r.methods or ()) if m != "HEAD"}


def test_every_http_route_withholds_private_notes(memex: Path, live_factory: Any) -> None:
    plant(memex)
    live = live_factory(memex)
    routes = _routes(live.app)
    missing = routes - PROBES.keys()
    assert not missing, f"routes without a privacy probe (add one to PROBES): {missing}"
    # chat last: its turns are recorded as conversations, which recall may then quote
    # (the client's own words, not a leak)
    for key in sorted(routes, key=lambda r: (r[1].startswith("/v1/chat"), r)):
        for st, text in PROBES[key](live):
            assert st < 500, (key, st, text)
            assert not leaks(text), f"{key} leaked {leaks(text)}: {text[:400]}"


def test_an_unknown_route_fails_the_enumeration(memex: Path, live_factory: Any) -> None:
    from starlette.routing import Route

    live = live_factory(memex)
    live.app.app.routes.append(Route("/v1/new-thing", lambda r: None, methods=["GET"]))
    assert ("GET", "/v1/new-thing") in _routes(live.app) - PROBES.keys()


def test_trusted_http_client_and_cli_see_private_notes(memex: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        live_factory: Any) -> None:
    """The control: the same probes find the note when the client is trusted, so the
    test above is not passing because the note is unfindable."""
    from opencortex.access import Access
    from opencortex.memex import Memex

    plant(memex)
    with Memex(memex, index=tmp_path / "cli.sqlite3") as m:
        m.sync()
        cli = Access(m, "cli")
        assert cli.search("quixotic walrus", "sparse").hits
        assert "7731" in cli.node_text(PRIVATE_ID)
        http = Access(m, "http")
        assert not http.search("quixotic walrus", "sparse").hits
    write_config(tmp_path, monkeypatch, '[guard]\ntrusted_clients = ["http"]\n')
    live = live_factory(memex)
    st, text = _req(live, "GET", "/v1/search?q=quixotic+walrus&mode=sparse")
    assert st == 200 and "Zanzibar vault" in text
    st, text = _req(live, "GET", f"/v1/nodes/{PRIVATE_ID}")
    assert st == 200 and "7731" in text


# -- MCP ------------------------------------------------------------------------------------
def _params(memex: Path, index: Path) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "opencortex.mcp_server", "--memex", str(memex), "--index", str(index)],
        env=dict(os.environ))


def _text(result: Any) -> str:
    parts = [json.dumps(result.structured_content, ensure_ascii=False)
             if result.structured_content is not None else ""]
    parts += [getattr(c, "text", "") for c in result.content]
    return "\n".join(parts)


async def _tool_probes(s: Any, name: str) -> list[str]:
    calls: dict[str, list[dict[str, Any]]] = {
        "search": [{"query": q, "k": 50, "mode": m} for q in QUERIES
                   for m in ("sparse", "hybrid")],
        "read": [{"refs": [r], "depth": 2} for r in REFS]
        + [{"refs": ["Public umbrella plan"], "depth": 2}],
        "agenda": [{"days": 30, "today": "2026-11-02"}],
        "capture": [{"text": "a child note", "to": r} for r in
                    ("Zanzibar vault combination", f"id:{PRIVATE_ID}")],
        "recollect": [{"message": f"that note about the {q}"} for q in QUERIES[:4]],
    }
    if name not in calls:
        raise AssertionError(f"MCP tool {name!r} has no privacy probe: add one")
    out = []
    for args in calls[name]:
        text = _text(await s.call_tool(name, args))
        for v in args.values():  # the client's own words echoed back are not a leak
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, str) and len(x) > 3:
                    text = _unsay(text, x.removeprefix("that note about the "))
        out.append(text)
    return out


async def _mcp_session(memex: Path, index: Path) -> tuple[set[str], list[tuple[str, str]]]:
    from mcp import ClientSession, stdio_client

    seen: list[tuple[str, str]] = []
    with anyio.fail_after(240):
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            for name in sorted(tools):
                seen += [(name, t) for t in await _tool_probes(s, name)]
            templates = [t.uri_template for t in
                         (await s.list_resource_templates()).resource_templates]
            assert templates == ["opencortex://node/{id}"], templates
            for ref in REFS:
                uri = "opencortex://node/" + urllib.parse.quote(ref, safe="")
                try:
                    res = await s.read_resource(uri)
                    got = "\n".join(getattr(c, "text", "") for c in res.contents)
                except Exception as e:  # an MCP error for a withheld node is right
                    got = str(e)
                seen.append((uri, _unsay(_unsay(got, ref), uri)))
    return tools, seen


def test_every_mcp_tool_and_resource_withholds_private_notes(memex: Path,
                                                             tmp_path: Path) -> None:
    plant(memex)
    before = {p: p.read_bytes() for p in memex.glob("*.org")}
    tools, seen = anyio.run(_mcp_session, memex, tmp_path / "mcp.sqlite3")
    assert {"search", "read", "agenda", "capture", "recollect"} <= tools
    for where, text in seen:
        assert not leaks(text), f"{where} leaked {leaks(text)}: {text[:400]}"
    # capture under a private node is refused (the node is not visible), nothing written
    assert (memex / "secret.org").read_bytes() == before[memex / "secret.org"]


async def _capture_once(memex: Path, index: Path) -> Any:
    from mcp import ClientSession, stdio_client

    with anyio.fail_after(90):
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await s.call_tool("capture", {"text": "Buy more quinoa", "to": "inbox.org"})


def test_mcp_capture_honours_memex_write_ask(memex: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, monkeypatch, '[guard.tools]\n"memex.write" = "ask"\n')
    inbox = memex / "inbox.org"
    before = inbox.read_bytes() if inbox.exists() else None
    res = anyio.run(_capture_once, memex, tmp_path / "ask.sqlite3")
    assert res.is_error and "approval" in _text(res), _text(res)
    assert (inbox.read_bytes() if inbox.exists() else None) == before
    write_config(tmp_path, monkeypatch, '[guard.tools]\n"memex.write" = "deny"\n')
    res = anyio.run(_capture_once, memex, tmp_path / "deny.sqlite3")
    assert res.is_error and "deny" in _text(res)
    write_config(tmp_path, monkeypatch, '[guard.tools]\n"memex.write" = "allow"\n')
    res = anyio.run(_capture_once, memex, tmp_path / "allow.sqlite3")
    assert not res.is_error and "Buy more quinoa" in inbox.read_text()
