"""Red team of the whole system from the outside: a real daemon on loopback, the real MCP
server over stdio and, where the model is the attacker, a real fake model server on
loopback. Each test is one finding (it failed before its fix) or one attack that held."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from opencortex.config import load_settings

from .edge_live import daemons, leaks, plant

pytest.importorskip("starlette")


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


def _quoted_by_the_person(memex: Path, index: Path) -> None:
    """The person asks at their own terminal (trusted: sees private notes); the answer
    quotes the private note and is recorded in the memex as a session record."""
    from opencortex.cli import cli

    res = CliRunner().invoke(cli, ["ask", "--memex", str(memex), "--index", str(index),
                                   "--json", "search my notes for the walrus code"])
    assert res.exit_code == 0, res.output
    assert "quixotic walrus" in res.output  # the person may see it
    recs = list(load_settings(memex=memex).sessions_path.rglob("*.org"))
    assert recs and any("quixotic walrus" in p.read_text() for p in recs)


def _mcp(memex: Path, index: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from opencortex.cli import main; main()", "mcp", "--memex", str(memex),
              "--index", str(index)], env=env)

    async def run() -> list[str]:
        out = []
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for name, args in calls:
                res = await s.call_tool(name, args)
                out.append(json.dumps([c.model_dump() for c in res.content], ensure_ascii=False))
        return out

    return anyio.run(run)


def test_a_trusted_session_quoting_a_private_note_is_withheld(memex: Path, tmp_path: Path,
                                                              live_factory: Any) -> None:
    """Finding: a private note quoted in a conversation of a client that may see it (the
    CLI, the TUI, a trusted gateway) was recorded in ``sessions/`` untagged, so every
    untrusted client got it back through search, nodes, recall and MCP."""
    plant(memex)
    index = tmp_path / "cli.sqlite3"
    _quoted_by_the_person(memex, index)
    live = live_factory(memex)
    seen = []
    for q in ("walrus", "quixotic", "7731", "Zanzibar"):
        st, body, _ = live.request("GET", "/v1/search?" + urllib.parse.urlencode(
            {"q": q, "k": 50}))
        assert st == 200
        seen.append(json.dumps(body).replace(f'"query": "{q}"', ""))  # its own words
    rec = "sessions/" + next(load_settings(memex=memex).sessions_path.rglob("*.org")
                             ).relative_to(load_settings(memex=memex).sessions_path).as_posix()
    for line in (5, 14):
        st, body, _ = live.request("GET", "/v1/nodes/" + urllib.parse.quote(f"{rec}:{line}",
                                                                             safe=""))
        seen.append(json.dumps(body))
    st, body, _ = live.request("POST", "/v1/recall", {"cue": "the walrus code"})
    assert st == 200, body
    seen.append(json.dumps(body).replace("walrus code", ""))
    seen += [t.replace("quixotic walrus", "<sent>") for t in _mcp(
        memex, tmp_path / "mcp.sqlite3", [("search", {"query": "quixotic walrus"}),
                                          ("recollect", {"message": "that walrus code"})])]
    found = [leaks(s.replace("the walrus code", "")) for s in seen]
    assert not any(found), [(f, s[:600]) for f, s in zip(found, seen, strict=True) if f]


def test_a_symlink_out_of_the_memex_is_not_read(memex: Path, tmp_path: Path,
                                                live_factory: Any) -> None:
    """Finding: an ``.org`` symlink that arrived by sync or clone (``notes/k.org ->
    ~/.ssh/id_ed25519``) was indexed through the link, so its target's text reached every
    client (search, nodes, MCP read) and the model's context. Writes already refused it."""
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    (outside / "id_ed25519").write_text("* key\nOBSIDIAN-PRIVATE-KEY-MATERIAL\n")
    (memex / "notes" / "k.org").symlink_to(outside / "id_ed25519")
    (memex / "inner.org").symlink_to(memex / "gtd.org")  # a link inside the memex: read
    live = live_factory(memex)
    assert any("leading out of the memex" in p for p in live.memex.sync().problems) or \
        live.memex.store.nodes_by_ref("notes/k.org:1") == []
    st, body, _ = live.request("GET", "/v1/search?q=OBSIDIAN-PRIVATE-KEY-MATERIAL&k=50")
    assert st == 200 and "MATERIAL" not in json.dumps(body).replace(
        '"query": "OBSIDIAN-PRIVATE-KEY-MATERIAL"', ""), body
    st, body, _ = live.request("GET", "/v1/nodes/" + urllib.parse.quote("notes/k.org:1",
                                                                         safe=""))
    assert st == 404, body
    st, body, _ = live.request("GET", "/v1/nodes/" + urllib.parse.quote("inner.org:12",
                                                                         safe=""))
    assert st == 200, body
    out = _mcp(memex, tmp_path / "mcp.sqlite3", [("read", {"refs": ["notes/k.org:1"]}),
                                                  ("search", {"query": "MATERIAL"})])
    assert not any("OBSIDIAN-PRIVATE" in o for o in out), out


def test_a_buffer_update_cannot_untag_a_private_note(memex: Path, live_factory: Any) -> None:
    """Finding: ``/v1/events`` buffer-update indexes the client's text for a file; a buffer
    with the ``:private:`` tags (or ``#+FILETAGS``) left out made the index call the file
    public, and node reads then returned the file's real, private text from disk."""
    plant(memex)
    live = live_factory(memex)
    buffers = {"diary.org": "* Cerulean armadillo diary\nnothing here\n",
               "secret.org": "* TODO Zanzibar vault combination\nx\n** Child inherits the tag\n",
               "umbrella.org": "* Public umbrella plan\nx\n** Hidden ledger\ny\n"
                               "** Public rain gauge\nz\n"}
    for f, text in buffers.items():
        st, body, _ = live.request("POST", "/v1/events", {"payload": {
            "sensor": "buffer-update", "file": f, "text": text}})
        assert st == 202, body
    time.sleep(1.5)  # the kernel indexes each buffer on its loop
    got = []
    for ref in ("diary.org:1", "secret.org:1", "secret.org:3", "umbrella.org:1",
                "umbrella.org:3", "Child inherits the tag", "Hidden ledger"):
        st, body, _ = live.request("GET", "/v1/nodes/" + urllib.parse.quote(ref, safe=""))
        assert st in (200, 404), body
        got.append(json.dumps(body).replace(ref, "<sent>"))
    found = [leaks(g.replace("Zanzibar vault combination", "")) for g in got]
    assert not any(found), [(f, g[:300]) for f, g in zip(found, got, strict=True) if f]


def _route_to_chat(srv: Any) -> None:
    from ..llm.conftest import Reply, completion

    route = {"action": "route", "intents": [{"target": "chat", "text": "hello"}]}
    srv.push(Reply(body=completion(json.dumps(route))))


def test_a_local_model_never_sees_private_notes_for_an_untrusted_client(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    """Finding: with a *local* model, a chat from an HTTP client (not trusted with private
    notes) put private notes (the agenda's private TODO) into the model's prompt, and the
    model's answer handed them to the client. The prompt is now built for the client."""
    from .edge_live import write_config

    plant(memex)
    from ..llm.conftest import FakeLLM

    srv = FakeLLM()
    try:
        write_config(tmp_path, monkeypatch, f"""
            [llm.providers.local]
            base_url = "{srv.url}"
            key_required = false
            models = {{ fast = "f", smart = "s" }}
            """)
        live = live_factory(memex)
        for path, body in (("/v1/chat", {"message": "hello there"}),
                           ("/v1/chat/completions", {"model": "opencortex", "messages": [
                               {"role": "user", "content": "hello there"}]})):
            _route_to_chat(srv)
            st, got, _ = live.request("POST", path, body)
            assert st == 200, got
        assert srv.seen, "the model was never asked"
        prompts = json.dumps([s.body for s in srv.seen])
        assert "Send revised chapter 7 outline" in prompts  # public notes are there
        assert not leaks(prompts), leaks(prompts)
    finally:
        srv.close()


def test_an_agent_answer_in_a_public_entry_quotes_no_private_note(
        memex: Path, tmp_path: Path, live_factory: Any) -> None:
    """Finding: an ``@agent`` headline in a file that is not private (one shared with a
    sync peer, say) ran with the person's view, so its answer wrote the private note's
    text into the public file, where every client read it. Under a private entry it still
    may."""
    plant(memex)
    (memex / "shared.org").write_text(
        "* Shared with Bob\n** TODO @agent search my notes for walrus code\n")
    (memex / "own.org").write_text(
        "* Mine :private:\n** TODO @agent search my notes for walrus code\n")
    live = live_factory(memex)
    for f in ("shared.org", "own.org"):
        st, body, _ = live.request("POST", "/v1/events", {"payload": {
            "sensor": "buffer-update", "file": f, "text": (memex / f).read_text()}})
        assert st == 202, body
    for _ in range(200):
        if all("Answer:" in (memex / f).read_text()  # the answer is the second write
               for f in ("shared.org", "own.org")):
            break
        time.sleep(0.1)
    shared, own = (memex / "shared.org").read_text(), (memex / "own.org").read_text()
    assert "Answer:" in shared and not leaks(shared), shared
    assert "quixotic walrus" in own, own
    st, body, _ = live.request("GET", "/v1/nodes/shared.org:1")
    assert st == 200 and not leaks(json.dumps(body)), body


def test_bad_text_and_sizes_get_4xx_not_500(memex: Path, live_factory: Any) -> None:
    """Findings: an unpaired surrogate (valid JSON ``"\\ud800"``) in a point-update id or a
    recall cue was a 500 (UnicodeEncodeError / TypeError); a recall session id of 100k
    characters was a 500 (file name too long); a 100k-character cue ran past every
    timeout."""
    live = live_factory(memex)
    cases = [
        ("/v1/events", b'{"payload": {"sensor": "point-update", "id": "\\ud800"}}'),
        ("/v1/recall", b'{"cue": "the thing \\udfff"}'),
        ("/v1/chat", b'{"message": "hi \\ud800 there"}'),
        ("/v1/recall", json.dumps({"session": "x" * 100_000, "reply": "yes"}).encode()),
    ]
    for path, raw in cases:
        st, body, _ = live.request("POST", path, raw=raw)
        assert 400 <= st < 500, (path, raw[:60], st, body)
    t0 = time.monotonic()
    st, body, _ = live.request("POST", "/v1/recall", {"cue": "word " * 20_000}, timeout=30)
    assert st == 400 and "at most" in json.dumps(body), body
    assert time.monotonic() - t0 < 10
    st, body, _ = live.request("GET", "/healthz")
    assert st == 200
