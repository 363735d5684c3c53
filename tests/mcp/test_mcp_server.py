"""The MCP server end to end, through the official SDK's own stdio client."""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

CACHING = "notes/caching-strategies.org"
CACHING_ID = "6d4942f8-dde5-46fc-aa5e-559c341cc2d6"
READ_ONLY = {"search", "read", "query", "agenda", "review", "links_suggest", "recollect", "answer"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memex"


def _params(memex: Path, index: Path, log: Path | None = None) -> StdioServerParameters:
    args = ["-m", "opencortex.mcp_server", "--memex", str(memex), "--index", str(index)]
    if log is not None:
        args += ["--log-file", str(log)]
    return StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))


def _data(result: Any) -> dict[str, Any]:
    """A tool result's JSON (structured content when given, else the text block)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        sc = result.structured_content
        return sc.get("result", sc) if set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


async def _session(memex: Path, index: Path, log: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with anyio.fail_after(90):
        async with stdio_client(_params(memex, index, log)) as (r, w), \
                ClientSession(r, w) as s:
            init = await s.initialize()
            seen["server"] = init.server_info.name
            seen["tools"] = {t.name: t for t in (await s.list_tools()).tools}
            seen["templates"] = [t.uri_template for t in
                                 (await s.list_resource_templates()).resource_templates]
            seen["search"] = _data(await s.call_tool("search", {"query": "cache invalidation",
                                                                "k": 5}))
            seen["answer"] = _data(await s.call_tool(
                "answer", {"question": "how many eggs do I crack into the shakshuka?"}))
            seen["answer_private"] = _data(await s.call_tool(  # a :private: note's fact
                "answer", {"question": "who is the physio treating my knee?"}))
            seen["read"] = _data(await s.call_tool("read", {"refs": [f"id:{CACHING_ID}"],
                                                            "depth": 0}))
            seen["agenda"] = _data(await s.call_tool("agenda", {"days": 30,
                                                                "today": "2026-11-02"}))
            seen["capture"] = _data(await s.call_tool(
                "capture", {"text": "Quokka feeding schedule\nTwice daily.", "todo": "TODO",
                            "tags": ["zoo"]}))
            seen["search2"] = _data(await s.call_tool("search", {"query": "quokka"}))
            first = _data(await s.call_tool("recollect", {"message": "that note about "
                                                          "cache invalidation strategies"}))
            second = _data(await s.call_tool("recollect", {"message": "yes, that's it",
                                                           "session_id": first["session_id"]}))
            seen["recollect"] = (first, second)
            bad = await s.call_tool("recollect", {"message": "x", "session_id": "nope"})
            seen["recollect_bad"] = bad
            missing = await s.call_tool("read", {"refs": ["no such node anywhere"]})
            seen["read_missing"] = missing
            res = await s.read_resource(f"opencortex://node/{CACHING_ID}")
            seen["resource"] = res.contents[0]
            ref = urllib.parse.quote(f"{CACHING}:5", safe="")
            seen["resource_by_key"] = (await s.read_resource(f"opencortex://node/{ref}")
                                       ).contents[0]
    return seen


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, Path]:
    """One server process for the whole module (spawning one costs ~2 s)."""
    base = tmp_path_factory.mktemp("mcp")
    memex = base / "memex"
    shutil.copytree(EXAMPLE, memex)
    log = base / "mcp.log"
    mp = pytest.MonkeyPatch()
    try:
        for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            mp.setenv(var, str(base / var.lower()))
        for k in list(os.environ):
            if k.startswith("OPENCORTEX_"):
                mp.delenv(k)
        mp.setenv("OPENCORTEX_RECALL_DEFAULTS", "0")  # never the host's own transcripts
        seen = anyio.run(_session, memex, base / "index.db", log)
    finally:
        mp.undo()
    return seen, memex, log


def test_tools_listed_with_annotations_and_described_inputs(session) -> None:
    seen, _, _ = session
    tools = seen["tools"]
    assert seen["server"] == "opencortex"
    assert {"search", "read", "agenda", "capture", "recollect", "answer"} <= set(tools)
    for name, tool in tools.items():
        ann = tool.annotations
        assert ann is not None and ann.destructive_hint is (name == "undo"), name
        assert ann.read_only_hint is (name in READ_ONLY), name
        assert tool.description, name
        props = tool.input_schema["properties"]
        assert props and all(p.get("description") for p in props.values()), name
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["read"].input_schema["required"] == ["refs"]


def test_search_finds_the_caching_note(session) -> None:
    res = session[0]["search"]
    hits = res["hits"]
    assert hits and hits[0]["file"] == CACHING
    h = hits[0]
    assert {"id", "key", "file", "line", "outline", "title", "snippet"} <= set(h)
    assert h["outline"][0] == "Caching strategies" and h["outline"][-1] == h["title"]
    assert "cach" in h["snippet"].lower()
    assert "why" not in h


def test_answer_quotes_the_note_that_answers_and_cites_it(session) -> None:
    a = session[0]["answer"]
    assert a["answered"] and "eggs" in a["answer"]
    assert "(notes/shakshuka.org:" in a["answer"]
    assert any(c.startswith("id:") or c.startswith("notes/shakshuka.org::")
               for c in a["citations"])


def test_an_mcp_clients_answer_never_quotes_a_private_note(session) -> None:
    """MCP is not a trusted client by default: the physio's name sits in a :private: note."""
    a = session[0]["answer_private"]
    text = json.dumps(a)
    assert "Keller" not in text and "sleep-and-running.org" not in text, text[:400]


def test_read_returns_the_note_text(session) -> None:
    res = session[0]["read"]
    node = res["nodes"][0]
    assert node["file"] == CACHING and node["depth"] == 0
    assert "cache invalidation" in node["text"] and "Cache-aside" in node["text"]
    assert res["used"] <= res["budget"]


def test_read_of_a_missing_node_is_a_tool_error(session) -> None:
    bad = session[0]["read_missing"]
    assert bad.is_error and "no node matches" in bad.content[0].text


def test_agenda_returns_items(session) -> None:
    a = session[0]["agenda"]
    assert {"scheduled", "deadlines", "overdue", "next"} <= set(a)
    assert a["today"] == "2026-11-02" and a["days"] == 30
    items = [n for k in ("scheduled", "deadlines", "overdue", "next") for n in a[k]]
    assert items and all({"file", "line", "title", "todo"} <= set(n) for n in items)


def test_capture_writes_an_entry_that_search_finds(session) -> None:
    seen, memex, _ = session
    c = seen["capture"]
    assert c["key"] and c["file"].endswith(".org") and c["id"]
    text = (memex / c["file"]).read_text(encoding="utf-8")
    assert "TODO Quokka feeding schedule" in text and ":zoo:" in text
    hits = seen["search2"]["hits"]
    assert hits and hits[0]["title"] == "Quokka feeding schedule"
    assert hits[0]["key"] == c["key"]


def test_recollect_presents_then_the_person_identifies(session) -> None:
    first, second = session[0]["recollect"]
    assert first["state"] == "presented", first["text"]
    story = first["round"]["story"]
    assert story and all(c["cite"]["excerpt"] in c["text"] for c in story)
    assert any("caching" in c["cite"]["locator"].lower() for c in story)
    assert second["session_id"] == first["session_id"] and second["state"] == "identified"
    assert second["round"]["recalled"]["identified_by"] == "yes, that's it"
    bad = session[0]["recollect_bad"]
    assert bad.is_error and "no recall session" in bad.content[0].text


def test_node_resource_is_the_org_text(session) -> None:
    seen = session[0]
    assert "opencortex://node/{id}" in seen["templates"]
    for res in (seen["resource"], seen["resource_by_key"]):
        assert res.mime_type == "text/x-org"
        assert res.text.startswith("* Caching strategies")
        assert f":ID:       {CACHING_ID}" in res.text


def test_logs_go_to_the_log_file_not_stdout(session) -> None:
    # The session working at all proves stdout carried only protocol messages.
    log = session[2]
    assert "synced" in log.read_text(encoding="utf-8")


def test_stdout_carries_only_json_rpc_and_logs_go_to_stderr(memex: Path,
                                                             tmp_path: Path) -> None:
    """Raw pipes, no SDK: every stdout line is a JSON-RPC message; the logs are on stderr."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "opencortex.mcp_server", "--memex", str(memex),
         "--index", str(tmp_path / "index.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout

    def ask(msg: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        if "id" not in msg:
            return {}
        reply = json.loads(proc.stdout.readline())
        assert reply["jsonrpc"] == "2.0" and reply["id"] == msg["id"], reply
        return reply

    try:
        init = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert init["result"]["serverInfo"]["name"] == "opencortex"
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        found = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "search", "arguments": {"query": "caching"}}})
        assert not found["result"].get("isError")
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for line in rest.splitlines():  # anything after the last reply must be protocol too
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert "synced" in err


def test_mcp_command_help() -> None:
    from click.testing import CliRunner

    from opencortex.cli.mcp_cmd import mcp as mcp_cmd

    out = CliRunner().invoke(mcp_cmd, ["--help"])
    assert out.exit_code == 0
    assert "--memex" in out.output and "--index" in out.output and "--log-file" in out.output
