"""Every MCP tool, resource and prompt, called through the official SDK's stdio client
against a real server process on a copy of the example memex: a test per tool, each
checking what the tool did to the files (not only what it answered).

``COVERED`` names the tools tested here; a tool the server lists without a test fails
``test_every_listed_tool_has_a_test``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memex"
CACHING = "notes/caching-strategies.org"
CACHING_ID = "6d4942f8-dde5-46fc-aa5e-559c341cc2d6"
TAILSCALE = "gtd.org::Inbox/Look into Tailscale ACL tags for the new server"
COVERED = {"search", "read", "query", "agenda", "capture", "append", "todo", "schedule",
           "deadline", "tag", "priority", "property", "new_note", "save_answer", "undo",
           "review", "links_suggest", "recollect",
           "answer"}  # answer: tests/mcp/test_mcp_server.py::test_answer_quotes_the_note_...


def _params(memex: Path, index: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "opencortex.mcp_server", "--memex", str(memex), "--index", str(index)],
        env=dict(os.environ))


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    sc = result.structured_content
    if sc is not None:
        return sc.get("result", sc) if set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


def _err(result: Any) -> str:
    assert result.is_error, result
    return result.content[0].text


def _cli(memex: Path, index: Path, *args: str) -> dict[str, Any]:
    """The person's own command (the CLI in another process, same index)."""
    out = subprocess.run([sys.executable, "-c", "from opencortex.cli import main; main()",
                          *args, "--memex",
                          str(memex), "--index", str(index), "--json"],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


async def _run(memex: Path, index: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with anyio.fail_after(240):
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()

            async def call(name: str, args: dict[str, Any]) -> Any:
                return await s.call_tool(name, args)

            seen["tools"] = {t.name: t for t in (await s.list_tools()).tools}
            seen["search"] = _data(await call("search", {"query": "cache invalidation"}))
            seen["read_uri"] = _data(await call("read", {
                "refs": [f"opencortex://node/{urllib.parse.quote(CACHING + ':5', safe='')}"],
                "depth": 0}))
            seen["query"] = _data(await call("query", {"expr": "todo:TODO tags:homelab"}))
            seen["query_bad"] = await call("query", {"expr": "todo:TODO", "today": "soon"})
            seen["agenda"] = _data(await call("agenda", {"days": 30, "today": "2026-11-02"}))
            cap = _data(await call("capture", {"text": "Quokka feeding\nTwice daily.",
                                               "tags": ["zoo"], "todo": "TODO",
                                               "to": "gtd.org"}))
            seen["capture"] = cap
            seen["capture_bad_tag"] = await call("capture", {"text": "Bad tag entry",
                                                             "tags": ["a b:c"]})
            ref = f"id:{cap['id']}"
            seen["append"] = _data(await call("append", {"node": ref,
                                                         "text": "* not a headline"}))
            seen["todo"] = _data(await call("todo", {"node": ref, "state": "NEXT"}))
            seen["todo_bad"] = await call("todo", {"node": ref, "state": "BOGUS"})
            seen["schedule"] = _data(await call("schedule", {"node": ref,
                                                             "date": "2026-12-10",
                                                             "repeat": "+1w"}))
            seen["schedule_bad"] = await call("schedule", {"node": ref, "date": "someday"})
            seen["deadline"] = _data(await call("deadline", {"node": ref,
                                                             "date": "2026-12-20 09:30"}))
            seen["tag"] = _data(await call("tag", {"node": ref,
                                                   "changes": ["+urgent", "-zoo"]}))
            seen["tag_bad"] = await call("tag", {"node": ref, "changes": ["+a:b"]})
            seen["priority"] = _data(await call("priority", {"node": ref, "level": "A"}))
            seen["property"] = _data(await call("property", {
                "node": ref, "key": "EFFORT", "value": "0:30\n* Injected headline"}))
            seen["property_bad"] = await call("property", {"node": ref, "key": "A B",
                                                           "value": "x"})
            seen["property_id"] = await call("property", {"node": ref, "key": "id",
                                                          "value": CACHING_ID})
            seen["file_after_edits"] = (memex / cap["file"]).read_text(encoding="utf-8")
            seen["new_note"] = _data(await call("new_note", {
                "title": "Quokka care", "body": "They like shade.", "tags": ["zoo"]}))
            seen["new_note_bad"] = await call("new_note", {"title": "Bad", "tags": ["x y"]})
            seen["save_answer"] = _data(await call("save_answer", {
                "node": f"opencortex://node/{CACHING_ID}", "question": "when to cache?",
                "answer": "Cache **reads**, not writes.\n# Not a heading",
                "citations": [f"{CACHING}:5"]}))
            seen["caching_after_save"] = (memex / CACHING).read_text(encoding="utf-8")
            seen["links_suggest"] = _data(await call("links_suggest",
                                                     {"node": f"id:{CACHING_ID}", "k": 3}))
            seen["review"] = _data(await call("review", {"start": "2026-11-23",
                                                         "end": "2026-11-30"}))
            seen["review_words"] = _data(await call("review", {"when": "last week",
                                                               "now": "2026-12-02"}))
            first = _data(await call("recollect", {"message": "that note about cache "
                                                   "invalidation strategies"}))
            seen["recollect"] = first
            # the person writes too (their own command, another process): not ours to undo
            seen["person"] = _cli(memex, index, "capture", "Person's own entry")
            note_file = memex / seen["new_note"]["file"]
            seen["note_existed"] = note_file.exists()
            seen["undo"] = _data(await call("undo", {"count": 2}))
            seen["note_after_undo"] = note_file.exists()
            seen["caching_after_undo"] = (memex / CACHING).read_text(encoding="utf-8")
            # a hand edit since our write: the writer refuses to undo over it
            path = memex / cap["file"]
            path.write_text(path.read_text(encoding="utf-8") + "\nhand edit\n",
                            encoding="utf-8")
            seen["undo_changed"] = await call("undo", {"count": 1})
            seen["after_refused_undo"] = path.read_text(encoding="utf-8")

            seen["templates"] = sorted(t.uri_template for t in
                                       (await s.list_resource_templates()).resource_templates)
            seen["resources"] = sorted(str(x.uri) for x in (await s.list_resources()).resources)
            seen["file_res"] = (await s.read_resource("opencortex://file/gtd.org")).contents[0]
            seen["file_res_nested"] = (await s.read_resource(
                "opencortex://file/" + urllib.parse.quote(CACHING, safe=""))).contents[0]
            seen["files_res"] = json.loads(
                (await s.read_resource("opencortex://files")).contents[0].text)
            seen["agenda_res"] = json.loads(
                (await s.read_resource("opencortex://agenda")).contents[0].text)
            seen["prompts"] = {p.name: p for p in (await s.list_prompts()).prompts}
            seen["prompt"] = await s.get_prompt("answer_from_notes",
                                                {"question": "what is RRF?"})
        # another connection: its undo never reaches the first one's writes
        async with stdio_client(_params(memex, index)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            seen["other_undo"] = await s.call_tool("undo", {"count": 5})
    return seen


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    base = tmp_path_factory.mktemp("mcp-tools")
    memex = base / "memex"
    shutil.copytree(EXAMPLE, memex)
    mp = pytest.MonkeyPatch()
    try:
        for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            mp.setenv(var, str(base / var.lower()))
        for k in list(os.environ):
            if k.startswith("OPENCORTEX_"):
                mp.delenv(k)
        mp.setenv("OPENCORTEX_RECALL_DEFAULTS", "0")
        mp.setenv("OPENCORTEX_NO_PROGRESS", "1")
        seen = anyio.run(_run, memex, base / "index.db")
    finally:
        mp.undo()
    return seen, memex


def test_every_listed_tool_has_a_test(run) -> None:
    tools = run[0]["tools"]
    assert set(tools) == COVERED, set(tools) ^ COVERED
    for name, tool in tools.items():
        assert tool.description and tool.annotations is not None, name
        props = tool.input_schema.get("properties", {})
        assert all(p.get("description") for p in props.values()), name
    assert tools["undo"].annotations.destructive_hint is True


def test_search(run) -> None:
    assert run[0]["search"]["hits"][0]["file"] == CACHING


def test_read_accepts_the_node_uri(run) -> None:
    node = run[0]["read_uri"]["nodes"][0]
    assert node["file"] == CACHING and node["id"] == CACHING_ID


def test_query(run) -> None:
    q = run[0]["query"]
    assert q["count"] >= 1 and all(n["todo"] == "TODO" for n in q["nodes"])
    assert TAILSCALE in [n["key"] for n in q["nodes"]]
    assert "today" in _err(run[0]["query_bad"])


def test_agenda(run) -> None:
    a = run[0]["agenda"]
    assert a["today"] == "2026-11-02" and {"scheduled", "deadlines", "overdue", "next"} <= set(a)


def test_capture_validates_tags(run) -> None:
    seen, memex = run
    assert seen["capture"]["id"] and seen["capture"]["file"] == "gtd.org"
    assert "not a valid Org tag" in _err(seen["capture_bad_tag"])
    assert "Bad tag entry" not in (memex / "gtd.org").read_text(encoding="utf-8")


def test_append_keeps_text_as_text(run) -> None:
    seen = run[0]
    assert seen["append"]["changed"] and seen["append"]["writes"][0]["op"] == "append"
    text = seen["file_after_edits"]
    assert "* not a headline" in text and "\n* not a headline" not in text


def test_todo(run) -> None:
    seen = run[0]
    assert seen["todo"]["writes"][0]["op"] == "todo"
    assert "NEXT [#A] Quokka feeding" in seen["file_after_edits"]  # (priority came next)
    assert "not a TODO keyword" in _err(seen["todo_bad"])


def test_schedule(run) -> None:
    seen = run[0]
    assert "SCHEDULED: <2026-12-10 Thu +1w>" in seen["file_after_edits"]
    assert "someday" in _err(seen["schedule_bad"])


def test_deadline(run) -> None:
    assert "DEADLINE: <2026-12-20 Sun 09:30>" in run[0]["file_after_edits"]


def test_tag(run) -> None:
    seen = run[0]
    head = next(ln for ln in seen["file_after_edits"].splitlines() if "Quokka feeding" in ln)
    assert head.rstrip().endswith(":urgent:") and ":zoo:" not in head
    assert "not a valid Org tag" in _err(seen["tag_bad"])


def test_priority(run) -> None:
    assert "NEXT [#A] Quokka feeding" in run[0]["file_after_edits"]


def test_property_is_one_line(run) -> None:
    seen = run[0]
    text = seen["file_after_edits"]
    assert ":EFFORT:" in text and "\n* Injected headline" not in text
    assert "not a valid property name" in _err(seen["property_bad"])
    assert "only you change it" in _err(seen["property_id"])  # links point at IDs
    assert text.count(CACHING_ID) == 0


def test_new_note(run) -> None:
    seen = run[0]
    n = seen["new_note"]
    assert n["file"].startswith("notes/") and n["id"] and seen["note_existed"]
    assert "not a valid Org tag" in _err(seen["new_note_bad"])


def test_save_answer_files_it_under_the_node(run) -> None:
    seen = run[0]
    s = seen["save_answer"]
    assert s["under"] == f"id:{CACHING_ID}" and s["file"] == CACHING
    text = seen["caching_after_save"]
    assert "** Answer: when to cache?" in text and "Cache *reads*, not writes." in text
    assert "\n# Not a heading" not in text and "[[id:" in text.split("Answer: when")[1]


def test_links_suggest(run) -> None:
    ls = run[0]["links_suggest"]
    assert ls["node"]["file"] == CACHING and 1 <= len(ls["suggestions"]) <= 3
    assert all(x["file"] != CACHING and x["passage"] for x in ls["suggestions"])


def test_review(run) -> None:
    seen = run[0]
    rv = seen["review"]
    assert rv["from"] == "2026-11-23" and rv["to"] == "2026-11-30"
    assert rv["captures"] or rv["done"] or rv["journal"]
    assert seen["review_words"]["from"] == "2026-11-23"


def test_recollect(run) -> None:
    first = run[0]["recollect"]
    assert first["session_id"] and first["state"] in ("presented", "asked", "offered")


def test_undo_takes_back_only_this_connections_writes(run) -> None:
    seen, memex = run
    undone = seen["undo"]["undone"]
    assert [u["op"] for u in undone] == ["undo", "undo"]
    assert "Answer: when to cache?" in undone[0]["description"]
    assert "new note" in undone[1]["description"]
    assert not seen["note_after_undo"]
    assert "Answer: when to cache?" not in seen["caching_after_undo"]
    # the person's own capture (after ours) is untouched
    assert "Person's own entry" in (memex / "gtd.org").read_text(encoding="utf-8")
    assert "changed since" in _err(seen["undo_changed"])
    assert "NEXT [#A] Quokka feeding" in seen["after_refused_undo"]
    assert "nothing to undo" in _err(seen["other_undo"])
    assert "NEXT [#A] Quokka feeding" in (memex / "gtd.org").read_text(encoding="utf-8")


def test_resources_nodes_files_and_agenda(run) -> None:
    seen = run[0]
    assert seen["templates"] == ["opencortex://file/{+path}", "opencortex://node/{id}"]
    assert seen["resources"] == ["opencortex://agenda", "opencortex://files"]
    gtd = seen["file_res"].text
    assert gtd.startswith("#+TITLE: Getting Things Done") and "* Inbox" in gtd
    assert seen["file_res_nested"].text.startswith("#+TITLE") or \
        "* Caching strategies" in seen["file_res_nested"].text
    files = {f["file"] for f in seen["files_res"]["files"]}
    assert {"gtd.org", CACHING} <= files
    assert {"scheduled", "deadlines", "overdue", "next"} <= set(seen["agenda_res"])


def test_prompts(run) -> None:
    seen = run[0]
    assert {"weekly_review", "answer_from_notes"} <= set(seen["prompts"])
    text = seen["prompt"].messages[0].content.text
    assert "what is RRF?" in text and "`search`" in text
