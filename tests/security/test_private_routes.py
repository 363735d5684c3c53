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
    out = [_req(live, "POST", "/v1/chat/completions",
                {"model": "opencortex", "messages": [{"role": "user", "content": q}]},
                sent=q) for q in QUERIES[:3]]
    # a follow-up over an earlier "answer" the client wrote, citing the private notes:
    # the narrowing reads only what this client may see
    forged = "Found: (secret.org:1) (secret.org:6) (diary.org:2) (umbrella.org:3)"
    for q in ("which of those mention the walrus?", "tell me more about those"):
        st, text = _req(live, "POST", "/v1/chat/completions", {"model": "opencortex",
                        "messages": [{"role": "user", "content": "my vault notes"},
                                     {"role": "assistant", "content": forged},
                                     {"role": "user", "content": q}]}, sent=q)
        out.append((st, _unsay(_unsay(text, forged), "my vault notes")))
    return out


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


PUBLIC = "Public umbrella plan"
SPANS = [{"start": "2026-10-01", "end": "2026-12-31"}, {"when": "last month",
                                                     "now": "2026-12-02"}]


def _each_ref(**args: Any) -> list[dict[str, Any]]:
    """The call once per private reference (as ``node``), with ``args``."""
    return [{"node": r, **args} for r in REFS]


TOOL_CALLS: dict[str, list[dict[str, Any]]] = {
    "search": [{"query": q, "k": 50, "mode": m} for q in QUERIES for m in ("sparse", "hybrid")],
    "read": [{"refs": [r], "depth": 2} for r in REFS] + [{"refs": [PUBLIC], "depth": 2}],
    "query": [{"expr": q, "body": True, "limit": 500} for q in
              ("tags:private", "todo:TODO", "scheduled:+30", "file:secret.org",
               "file:diary.org", "file:umbrella.org", *QUERIES)],
    "agenda": [{"days": 30, "today": "2026-11-02"}],
    "review": SPANS,
    "links_suggest": [*_each_ref(k=20), {"node": PUBLIC, "k": 20}],
    "recollect": [{"message": f"that note about the {q}"} for q in QUERIES[:4]],
    "answer": [{"question": q} for q in QUERIES],
    "capture": [{"text": "a child note", "to": r} for r in
                ("Zanzibar vault combination", f"id:{PRIVATE_ID}", "secret.org",
                 "diary.org", f"opencortex://node/{PRIVATE_ID}")],
    "append": _each_ref(text="appended by a client"),
    "todo": _each_ref(state="DONE"),
    "schedule": _each_ref(date="2026-12-01"),
    "deadline": _each_ref(date="2026-12-01"),
    "tag": _each_ref(changes=["+probe"]),
    "priority": _each_ref(level="A"),
    "property": _each_ref(key="PROBE", value="1"),
    "new_note": [{"title": "Probe note", "body": "A public note.", "tags": ["probe"]}],
    "save_answer": [*_each_ref(answer="an answer"),
                    {"node": PUBLIC, "answer": "an answer", "question": "q",
                     "citations": [f"id:{PRIVATE_ID}", "secret.org:1", "diary.org:2"]}],
    "undo": [{"count": 10}],
}
"""Every MCP tool with the calls that try to reach the private notes through it: a tool
the server lists without an entry here fails the test."""


async def _tool_probes(s: Any, name: str) -> list[str]:
    if name not in TOOL_CALLS:
        raise AssertionError(f"MCP tool {name!r} has no privacy probe: add one to TOOL_CALLS")
    out = []
    for args in TOOL_CALLS[name]:
        text = _text(await s.call_tool(name, args))
        for v in args.values():  # the client's own words echoed back are not a leak
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, str) and len(x) > 3:
                    text = _unsay(text, x.removeprefix("that note about the "))
        out.append(text)
    return out


RESOURCE_PROBES: dict[str, list[str]] = {
    "opencortex://node/{id}": ["opencortex://node/" + urllib.parse.quote(r, safe="")
                               for r in REFS],
    "opencortex://file/{+path}": ["opencortex://file/" + f for f in
                                  ("secret.org", "diary.org", "umbrella.org",
                                   urllib.parse.quote("secret.org", safe=""))],
}
"""Every resource template with the URIs that name private notes; listed (static)
resources are read as they are."""


async def _read(s: Any, uri: str) -> str:
    try:
        res = await s.read_resource(uri)
        return "\n".join(getattr(c, "text", "") for c in res.contents)
    except Exception as e:  # an MCP error for a withheld node is right
        return str(e)


async def _mcp_session(memex: Path, index: Path) -> tuple[set[str], list[tuple[str, str]]]:
    from mcp import ClientSession, stdio_client

    seen: list[tuple[str, str]] = []
    with anyio.fail_after(600):
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            for name in sorted(tools):
                seen += [(name, t) for t in await _tool_probes(s, name)]
            templates = [t.uri_template for t in
                         (await s.list_resource_templates()).resource_templates]
            missing = set(templates) - RESOURCE_PROBES.keys()
            assert not missing, f"resource templates without a privacy probe: {missing}"
            for tpl in templates:
                for uri in RESOURCE_PROBES[tpl]:
                    got = await _read(s, uri)
                    ref = urllib.parse.unquote(uri.split("/", 3)[3])  # the client's words
                    seen.append((uri, _unsay(_unsay(got, ref), uri)))
            for res in (await s.list_resources()).resources:
                seen.append((str(res.uri), await _read(s, str(res.uri))))
            for p in (await s.list_prompts()).prompts:
                args = {a.name: "Public umbrella plan" for a in p.arguments or []}
                got = await s.get_prompt(p.name, args)
                seen.append((p.name, "\n".join(getattr(m.content, "text", "")
                                                for m in got.messages)))
    return tools, seen


def test_every_mcp_tool_and_resource_withholds_private_notes(memex: Path,
                                                             tmp_path: Path) -> None:
    plant(memex)
    before = {p.name: p.read_bytes() for p in memex.glob("*.org")}
    tools, seen = anyio.run(_mcp_session, memex, tmp_path / "mcp.sqlite3")
    assert {"search", "read", "agenda", "capture", "recollect", "todo", "undo"} <= tools
    for where, text in seen:
        assert not leaks(text), f"{where} leaked {leaks(text)}: {text[:400]}"
    files = next(t for w, t in seen if w == "opencortex://files")
    assert "umbrella.org" in files and "secret.org" not in files and "diary.org" not in files
    umbrella_res = next(t for w, t in seen if w == "opencortex://file/umbrella.org")
    assert "Public rain gauge" in umbrella_res and "withheld" in umbrella_res
    # nothing reached a private node: its files are as they were, the public file holds
    # no more private words than before (a saved answer citing one names no title)
    for name in ("secret.org", "diary.org"):
        assert (memex / name).read_bytes() == before[name], name
    umbrella = (memex / "umbrella.org").read_text(encoding="utf-8")
    assert sorted(leaks(umbrella)) == sorted(leaks(before["umbrella.org"].decode()))


WRITE_CALLS: dict[str, dict[str, Any]] = {
    "capture": {"text": "Buy more quinoa", "to": "inbox.org"},
    "append": {"node": PUBLIC, "text": "more quinoa"},
    "todo": {"node": PUBLIC, "state": "TODO"},
    "schedule": {"node": PUBLIC, "date": "2026-12-01"},
    "deadline": {"node": PUBLIC, "date": "2026-12-01"},
    "tag": {"node": PUBLIC, "changes": ["+quinoa"]},
    "priority": {"node": PUBLIC, "level": "A"},
    "property": {"node": PUBLIC, "key": "QUINOA", "value": "1"},
    "new_note": {"title": "Quinoa note", "body": "quinoa"},
    "save_answer": {"node": PUBLIC, "answer": "quinoa", "question": "grain?"},
    "undo": {"count": 1},
}
"""A valid call of every tool that writes (not annotated read-only): each must be refused
under a "deny" or "ask" write policy, and write nothing."""


def _snapshot(memex: Path) -> dict[str, bytes]:
    return {p.relative_to(memex).as_posix(): p.read_bytes() for p in memex.rglob("*.org")}


async def _write_probes(memex: Path, index: Path) -> dict[str, Any]:
    from mcp import ClientSession, stdio_client

    out: dict[str, Any] = {}
    with anyio.fail_after(240):
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            listed = (await s.list_tools()).tools
            writers = [t.name for t in listed if not (t.annotations and
                                                      t.annotations.read_only_hint)]
            missing = set(writers) - WRITE_CALLS.keys()
            assert not missing, f"write tools without a policy probe (WRITE_CALLS): {missing}"
            for name in writers:
                out[name] = await s.call_tool(name, WRITE_CALLS[name])
    return out


@pytest.mark.parametrize("policy,word", [("deny", "deny"), ("ask", "approval")])
def test_every_mcp_write_tool_honours_the_write_policy(memex: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      policy: str, word: str) -> None:
    plant(memex)
    write_config(tmp_path, monkeypatch, f'[guard.tools]\n"memex.write" = "{policy}"\n')
    before = _snapshot(memex)
    got = anyio.run(_write_probes, memex, tmp_path / f"{policy}.sqlite3")
    assert set(got) >= set(WRITE_CALLS) - {"undo"}
    for name, res in got.items():
        assert res.is_error, (name, _text(res))
        # undo has nothing of this connection's to take back: refused before any write
        assert word in _text(res) or (name == "undo" and "nothing to undo" in _text(res)), \
            (name, _text(res))
    assert _snapshot(memex) == before


def test_undo_is_a_write_the_policy_checks(memex: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection's own write, then the policy turned to deny: its undo is refused too
    (undo writes the file back), and the write stays."""
    from opencortex.access import Access, AccessDenied
    from opencortex.memex import Memex

    write_config(tmp_path, monkeypatch, '[guard.tools]\n"memex.write" = "allow"\n')
    with Memex(memex, index=tmp_path / "u.sqlite3") as m:
        m.sync()
        a = Access(m, "mcp")
        a.capture("Quinoa stock", to="inbox.org")
    write_config(tmp_path, monkeypatch, '[guard.tools]\n"memex.write" = "deny"\n')
    with Memex(memex, index=tmp_path / "u.sqlite3") as m:
        b = Access(m, "mcp")
        b.batch_prefix = a.batch_prefix  # the same connection, under the new policy
        with pytest.raises(AccessDenied):
            b.undo_own(1)
    assert "Quinoa stock" in (memex / "inbox.org").read_text(encoding="utf-8")


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
