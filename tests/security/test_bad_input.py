"""Bad input at the edge: a 4xx (or a clean CLI/MCP error) that says what to fix — never a
500, a traceback, or a 202 that fails later in the loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.conftest import APPROVER

from .edge_live import daemons


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)

HUGE_LINE = "gtd.org:99999999999999999999"
CLI = [sys.executable, "-c", "from opencortex.cli import main; main()"]
DEEP = b"[" * 100_000 + b"]" * 100_000


def _post_routes(app: Any) -> list[str]:
    """Every POST route of the app, with path parameters filled in."""
    out = []
    for r in app.app.routes:
        if "POST" in (r.methods or ()):
            out.append(r.path.replace("{id}", "abc123").replace("{ref:path}", "gtd.org"))
    return out


def test_deep_json_on_every_post_route_is_400(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    routes = _post_routes(live.app)
    assert {"/v1/events", "/v1/chat", "/v1/chat/completions", "/v1/recall"} <= set(routes)
    for path in routes:
        for raw in (DEEP, b'{"a": ' * 50_000 + b"1" + b"}" * 50_000):
            # an approval route hears only the person (approver token): sent as the person
            st, body, _ = live.request("POST", path, raw=raw,
                                       headers={"X-OpenCortex-Approver": APPROVER})
            assert st == 400, (path, st, body)
            assert "deeper than 64" in body["error"], body
    # brackets inside strings do not count; ordinary nesting passes the scan
    st, body, _ = live.request("POST", "/v1/chat", {"message": "[[[[" * 100, "session": "s"})
    assert st == 200, body
    assert live.request("GET", "/healthz")[0] == 200


def test_huge_line_in_a_node_ref(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    st, body, _ = live.request("GET", "/v1/nodes/" + HUGE_LINE)
    assert st == 400 and "out of range" in body["error"], body
    st, body, _ = live.request("GET", "/v1/nodes/gtd.org:%C2%B2")  # a non-ASCII digit
    assert st == 404, body
    st, body, _ = live.request("GET", "/v1/nodes/gtd.org%00:3")
    assert st == 400 and "NUL" in body["error"], body
    st, body, _ = live.request("GET", "/v1/search?q=caching%00")
    assert st == 400 and "NUL" in body["error"], body
    st, body, _ = live.request("GET", "/v1/nodes/gtd.org:16")
    assert st == 200, body


def test_cli_read_huge_line_is_a_clean_error(memex: Path, tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "read", "--memex", str(memex),
                        "--index", str(tmp_path / "i.sqlite3"), HUGE_LINE],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr and "out of range" in r.stderr, r.stderr
    r = subprocess.run([*CLI, "read", "--json", "--memex",
                        str(memex), "--index", str(tmp_path / "i.sqlite3"), HUGE_LINE],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ))
    out = json.loads(r.stdout)
    assert out["ok"] is False and "out of range" in out["error"], out


def test_events_bad_payloads_are_refused_up_front(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    before = live.kernel.stats.received
    bad = [
        ({"sensor": "buffer-update", "file": "gtd\x00.org", "text": "* x\n"}, "NUL"),
        ({"sensor": "buffer-update", "file": "gtd.org", "text": "* a\x00b\n"}, "NUL"),
        ({"sensor": "buffer-update", "file": "gtd.org", "text": 5}, "string"),
        ({"sensor": "point-update", "file": "gtd.org", "line": "abc"}, "whole number"),
        ({"sensor": "point-update", "file": "gtd.org", "line": 10**30}, "out of range"),
        ({"sensor": "point-update", "file": "gtd.org", "line": 0}, "out of range"),
        ({"sensor": "point-update", "file": "gtd.org", "line": 10**6}, "the file has"),
        ({"sensor": "point-update", "file": "gtd.org", "line": True}, "whole number"),
        ({"sensor": "point-update", "id": "no-such-node-id"}, "no node matches"),
        ({"sensor": "point-update", "id": HUGE_LINE}, "out of range"),
        ({"sensor": "point-update"}, "payload.id or payload.file"),
        ({"sensor": "heartbeat", "embed": "lots"}, "integer"),
        ({"payload": {"sensor": "user-input", "text": "hi"}, "meta": {"session": 7}},
         "meta.session"),
    ]
    for payload, words in bad:
        st, body, _ = live.request("POST", "/v1/events", payload)
        assert 400 <= st < 500, (payload, st, body)
        assert words in body["error"], (payload, body)
    assert live.kernel.stats.received == before, "a refused event reached the kernel"
    st, body, _ = live.request("POST", "/v1/events",
                               {"sensor": "point-update", "file": "gtd.org", "line": "12"})
    assert st == 202, body


def test_mcp_bad_refs_and_dates_are_tool_errors(memex: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "opencortex.mcp_server", "--memex", str(memex), "--index",
        str(tmp_path / "m.sqlite3")], env=dict(os.environ))

    async def go() -> list[Any]:
        with anyio.fail_after(90):
            async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                return [await s.call_tool("read", {"refs": [HUGE_LINE]}),
                        await s.call_tool("agenda", {"days": 366, "today": "9999-12-31"}),
                        await s.call_tool("search", {"query": "a\x00b"}),
                        await s.call_tool("capture", {"text": "x\x00y"})]

    for res, words in zip(anyio.run(go), ("out of range", "9999-12-31", "NUL", "NUL"),
                          strict=True):
        text = " ".join(getattr(c, "text", "") for c in res.content)
        assert res.is_error and words in text, text


@pytest.mark.parametrize("n", [1, 100])
def test_deep_json_unit(n: int) -> None:
    from opencortex.schema import ValidationError, json_depth, loads

    assert json_depth(b'{"a": "[[[["}') == 1
    assert json_depth(b'["\\"[", [1]]') == 2
    doc = "[" * n + "]" * n
    if n <= 64:
        assert loads(doc) is not None
    else:
        with pytest.raises(ValidationError):
            loads(doc)


def test_node_ref_url_encoded_overflow(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    st, body, _ = live.request("GET", "/v1/nodes/" + urllib.parse.quote(HUGE_LINE, safe=""))
    assert st == 400, body
