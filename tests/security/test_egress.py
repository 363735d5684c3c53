"""Issue 23: privacy follows the bytes, not the path — one egress check.

A private canary reaches an exit by each path (shell output, a git diff, an archived or
symlinked record, a session record, a summary, recall's phrasing, an ``@agent`` answer in
a synced file) and never reaches a client that may not see private notes or a non-local
model.  The model is a real OpenAI-compatible server on loopback, configured as not local,
recording what it received."""

from __future__ import annotations

import json
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from opencortex.memex import Memex

from .edge_live import daemons, write_config

CANARY = "The lighthouse keeper hums 4471 verses to the quiet moon every night"
CANARY_WORD = "4471"
PRIVATE = f"""\
* Lighthouse diary :private:
{CANARY}.
Another private line that is long enough to be fingerprinted too.
"""


def _plant(memex: Path) -> None:
    (memex / "keeper.org").write_text(PRIVATE, encoding="utf-8")


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


# -- the check itself ---------------------------------------------------------------------
def test_prints_catch_a_reformatted_line_and_an_embedded_passage() -> None:
    from opencortex.guard.egress import Prints, check

    p = Prints.of([CANARY])
    for leaked in (f"  - {CANARY.upper()}  ", f"+{CANARY}", f"| {CANARY} |",
                   "he said that the lighthouse keeper hums 4471 verses to the quiet moon"):
        got = check(f"intro line\n{leaked}\nafter", p)
        assert got.withheld and CANARY_WORD not in got.text and "withheld" in got.text
        assert got.text.startswith("intro line\n") and got.text.endswith("\nafter")
    assert not check("a public line about moons and lighthouses in general", p).withheld


def test_short_common_lines_are_not_fingerprints() -> None:
    from opencortex.guard.egress import Prints, check

    p = Prints.of([":PROPERTIES:\n:END:\n- [ ] call mum\n#+begin_src python\nDone.\n"])
    assert not p
    assert not check(":END:\n- [ ] call mum\nDone.", p).withheld


def test_provenance_withholds_whole_and_json_is_checked_string_by_string() -> None:
    from opencortex.guard.egress import Carried, Prints, check, check_value

    got = check(Carried("nothing that matches", True, "`cat` read keeper.org"), Prints())
    assert got.withheld and "cat` read keeper.org" in got.text
    value, cut = check_value({"reply": f"x\n{CANARY}", "n": 3, "items": [CANARY, "ok"]},
                             Prints.of([CANARY]))
    assert cut and value["n"] == 3 and value["items"][1] == "ok"
    assert CANARY_WORD not in json.dumps(value)


def test_prints_follow_the_index(memex: Path, tmp_path: Path) -> None:
    """Kept with the index: a sync, a verified write and an unsaved buffer update them."""
    from opencortex.guard.egress import check

    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    assert not check(CANARY, m.private_prints().prints).withheld
    _plant(memex)
    m.sync()
    snap = m.private_prints()
    assert check(CANARY, snap.prints).withheld and "keeper.org" in snap.files
    # the writer's own write (a tag added) counts at once
    (memex / "plain.org").write_text("* Plain\nA second secret sentence for the tag test now.\n")
    m.sync()
    assert not check("A second secret sentence for the tag test now.",
                     m.private_prints().prints).withheld
    m.tag("plain.org::Plain", ["+private"])
    assert check("A second secret sentence for the tag test now.",
                 m.private_prints().prints).withheld
    # an unsaved buffer that drops the tag
    m.index_text("keeper.org", PRIVATE.replace(":private:", ""))
    assert not check(CANARY, m.private_prints().prints).withheld
    m.close()


def test_shell_read_names_the_private_file(memex: Path) -> None:
    from opencortex.guard.egress import shell_read

    _plant(memex)
    files = frozenset({"keeper.org"})
    root = memex.resolve()
    assert shell_read(["cat", "keeper.org"], root, root, files)
    assert shell_read(["rg", "moon"], root, root, files)  # the tree under the memex
    assert shell_read(["cat", str(root / "keeper.org")], Path("/"), root, files)
    assert shell_read(["cat", "gtd.org"], root, root, files) is None
    assert shell_read(["date"], root, root, files) is None
    assert shell_read(["rg", "keeper.org", "gtd.org"], root, root, files)  # a pattern that is a path counts


# -- the HTTP response layer: every route, whatever it returns -------------------------------
def test_every_http_route_passes_the_egress_layer(memex: Path, live_factory: Any) -> None:
    """Each route's endpoint is replaced by one that returns the canary (JSON, text, SSE):
    the client sees none of it — the check sits in the response layer, not in routes."""
    from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse

    _plant(memex)
    live = live_factory(memex)
    routes = [r for r in live.app.app.routes if getattr(r, "methods", None)]
    assert len(routes) >= 10
    kinds = ["json", "text", "sse"]
    for i, r in enumerate(routes):
        kind = kinds[i % 3]

        async def leak(request: Any, kind: str = kind) -> Any:
            if kind == "json":
                return JSONResponse({"answer": f"Sure:\n{CANARY}", "nested": [CANARY]})
            if kind == "text":
                return PlainTextResponse(f"Sure:\n{CANARY}\n")

            async def gen() -> Any:
                yield f"event: delta\ndata: {json.dumps({'text': CANARY})}\n\n".encode()
                yield f"event: raw\ndata: {CANARY}\n\n".encode()

            return StreamingResponse(gen(), media_type="text/event-stream")

        r.endpoint = leak
        r.app = __import__("starlette.routing", fromlist=["request_response"]
                           ).request_response(leak)
        method = sorted(m for m in r.methods if m != "HEAD")[0]
        path = r.path.replace("{ref:path}", "x").replace("{id}", "x").replace("{name}", "x")
        st, body, _ = live.request(method, path, {} if method == "POST" else None)
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        assert CANARY_WORD not in text and "withheld" in text, (r.path, kind, st, text[:300])


def test_a_trusted_http_client_gets_the_bytes(memex: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             live_factory: Any) -> None:
    _plant(memex)
    write_config(tmp_path, monkeypatch, '[guard]\ntrusted_clients = ["http"]\n')
    live = live_factory(memex)
    st, body, _ = live.request("GET", "/v1/nodes/keeper.org%3A1")
    assert st == 200 and CANARY_WORD in json.dumps(body)


# -- shell output that read a private file, and its session record ---------------------------
def _shell_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str = "") -> None:
    write_config(tmp_path, monkeypatch, textwrap.dedent("""\
        [guard.tools]
        shell = "allow"
        [guard.shell]
        allow = ["cat", "rg"]
        """) + extra)


def test_shell_output_of_a_private_file_never_reaches_http(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    _plant(memex)
    _shell_config(tmp_path, monkeypatch)
    live = live_factory(memex)
    for i, msg in enumerate(("run cat keeper.org", "run rg lighthouse")):
        st, body, _ = live.request("POST", "/v1/chat", {"message": msg, "session": f"sh{i}"})
        text = json.dumps(body, ensure_ascii=False)
        assert st == 200 and CANARY_WORD not in text, text[:500]
        assert "withheld" in text and "keeper.org" in text, text[:500]
    # the turns are recorded, tagged private, and /v1/search does not serve them
    records = list(live.memex.settings.sessions_path.rglob("*sh0*.org"))
    assert records and all(":private:" in p.read_text() for p in records)
    live.kernel.submit({"payload": {"sensor": "heartbeat", "embed": 0},
                        "meta": {"source": "test"}}).result(60)
    st, body, _ = live.request("GET", "/v1/search?q=lighthouse+keeper+hums&mode=sparse&k=50")
    assert st == 200 and CANARY_WORD not in json.dumps(body)
    # the client's own words may come back; no tool or assistant turn of those sessions
    assert all("person:" in h["title"] for h in body["hits"]
               if "sessions/" in h.get("file", "")), body


def test_a_turn_that_carried_private_text_is_a_private_record(memex: Path, tmp_path: Path
                                                               ) -> None:
    """A session record of an untrusted client's turn that carried private text (by
    provenance) is tagged private, though the client itself got it withheld."""
    from opencortex.guard.egress import Taint
    from opencortex.pipeline.kernel import Kernel

    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m)
    taint = Taint()
    taint.mark("test read keeper.org")
    got: list[str] = []
    sig = k.submit({"payload": {"sensor": "tool-output", "tool": "shell", "command": "x",
                                "returncode": 0, "text": "no match here at all"},
                    "meta": {"source": "test", "session": "tainted-1", "gateway": "http",
                             "taint": taint, "reply": lambda t, d=None: got.append(t)}})
    assert sig is not None
    sig.result(30)
    assert got and "withheld" in got[0] and "no match" not in got[0]
    rec = next(m.settings.sessions_path.rglob("*tainted-1*.org")).read_text()
    assert ":private:" in rec
    k.shutdown()
    m.close()


# -- @agent answers in a synced (non-private) file ------------------------------------------
def test_agent_answer_in_a_public_file_carries_no_private_text(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from opencortex.pipeline.kernel import Kernel

    _plant(memex)
    _shell_config(tmp_path, monkeypatch)
    f = memex / "synced.org"
    text = "* Shared board\n* @agent run cat keeper.org\n"
    f.write_text(text)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m, record_sessions=False)
    k.submit({"sensor": "buffer-update", "file": "synced.org", "text": text}).result(30)
    deadline = time.time() + 60
    while "Answer:" not in f.read_text():
        assert time.time() < deadline, k.ring.tail(20)
        time.sleep(0.05)
    time.sleep(0.3)
    out = f.read_text()
    assert CANARY_WORD not in out and "withheld" in out, out
    k.shutdown()
    m.close()


# -- git spans and diffs, archived and symlinked records: bytes nobody tagged -----------------
def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_a_git_diff_of_a_private_file_is_withheld(memex: Path, tmp_path: Path) -> None:
    from opencortex.access import Access

    _plant(memex)
    _git(memex, "init", "-q")
    _git(memex, "add", "keeper.org")
    _git(memex, "commit", "-qm", "diary")
    diff = _git(memex, "log", "-p", "-L", "2,2:keeper.org")
    assert CANARY in diff
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    for client in ("http", "mcp", "telegram", "org"):
        out = Access(m, client).egress({"excerpt": diff})
        assert CANARY_WORD not in out["excerpt"] and "withheld" in out["excerpt"]
    assert Access(m, "cli").egress(diff) == diff  # the person sees their own history
    m.close()


def test_archived_and_symlinked_copies_are_caught_by_content(memex: Path,
                                                            tmp_path: Path) -> None:
    """A session record of a private session, archived outside the memex after the
    original went, and a session file that is a symlink out of the memex: their bytes
    are the private text's, so the content check withholds them."""
    from opencortex.access import Access

    _plant(memex)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    archived = outside / "archived-session.org"
    archived.write_text(f"* person\n#+begin_example\n{CANARY}\n#+end_example\n")
    (memex / "sessions").mkdir(exist_ok=True)
    (memex / "sessions" / "linked.org").symlink_to(archived)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    for path in (archived, memex / "sessions" / "linked.org"):
        out = Access(m, "http").egress(path.read_text())
        assert CANARY_WORD not in out and "withheld" in out
    m.close()


# -- prompts to a non-local model -----------------------------------------------------------
class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        type(self).seen.append(body)
        req = json.loads(body)
        content = "Summary [1]." if "response_format" not in req else json.dumps(
            {"claims": [], "terms": [], "meant": None})
        out = json.dumps({"id": "x", "object": "chat.completion", "model": req["model"],
                          "choices": [{"index": 0, "finish_reason": "stop", "message": {
                              "role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a: object) -> None:
        pass


@pytest.fixture
def remote_model() -> Iterator[tuple[str, list[str]]]:
    """A model server on loopback that the config calls not local (as a remote one is)."""
    seen: list[str] = []
    handler = type("Rec", (_Recorder,), {"seen": seen})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", seen
    srv.shutdown()
    srv.server_close()


def _remote_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str,
                   extra: str = "") -> None:
    write_config(tmp_path, monkeypatch, textwrap.dedent(f"""\
        [llm]
        cascade = ["far"]
        [llm.providers.far]
        base_url = "{url}"
        local = false
        models = {{ fast = "m", smart = "m" }}
        """) + extra)


def test_a_prompt_to_a_non_local_model_carries_no_private_text(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        remote_model: tuple[str, list[str]]) -> None:
    from opencortex.llm import Message, gateway_from_settings

    url, seen = remote_model
    _remote_config(tmp_path, monkeypatch, url)
    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    gw = gateway_from_settings(m.settings)
    gw.complete([Message("user", f"Phrase this story:\n[0] excerpt: {CANARY}")])
    assert seen and CANARY_WORD not in seen[-1] and "withheld" in seen[-1]
    n = len(seen)
    with pytest.raises(Exception, match="not local"):
        gw.complete([Message("user", "a summary of private items", private=True)])
    assert len(seen) == n  # nothing was sent
    m.close()


def test_remote_ok_lets_the_person_opt_in(memex: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          remote_model: tuple[str, list[str]]) -> None:
    from opencortex.llm import Message, gateway_from_settings

    url, seen = remote_model
    _remote_config(tmp_path, monkeypatch, url, "[guard]\nremote_ok = true\n")
    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    gateway_from_settings(m.settings).complete([Message("user", CANARY)])
    assert CANARY_WORD in seen[-1]
    m.close()


def test_review_summary_of_private_items_is_not_sent(memex: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     remote_model: tuple[str, list[str]]
                                                     ) -> None:
    from opencortex.insight.review import review
    from opencortex.insight.review_summary import summarise

    url, seen = remote_model
    _remote_config(tmp_path, monkeypatch, url)
    (memex / "keeper.org").write_text(
        "* DONE Pay the Quillfeather debt :private:\nCLOSED: [2026-11-03 Tue 10:00]\n")
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    import datetime as dt

    rv = review(m, dt.date(2026, 11, 3), dt.date(2026, 11, 4))
    assert any("Quillfeather" in i.title for i in rv.items)
    summarise(rv, m.settings)
    assert not any("Quillfeather" in s for s in seen) and rv.summary is None
    m.close()


# -- MCP: every tool and resource through the one wrapper ----------------------------------
def _mcp_args() -> dict[str, dict[str, Any]]:
    """One call per MCP tool: the first of the privacy probe's calls (that table fails its
    own test for a tool without one)."""
    from tests.security.test_private_routes import TOOL_CALLS

    return {name: calls[0] for name, calls in TOOL_CALLS.items()}


def test_every_mcp_tool_result_passes_the_egress_check(memex: Path, tmp_path: Path) -> None:
    """Each tool's work is made to return the canary: what the client gets holds none of
    it.  A tool added without a probe here fails the test until it has one."""
    import anyio

    pytest.importorskip("mcp")
    from opencortex.mcp_server import build_server

    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    server = build_server(m)
    t = server.opencortex_tools  # type: ignore[attr-defined]

    args = _mcp_args()
    # every method the tools call on the facade returns the canary (a tool may call one of
    # another name: todo -> edit, schedule -> dates)
    for attr in [a for a in dir(t) if not a.startswith("_") and callable(getattr(t, a))]:
        setattr(t, attr, lambda *a, **k: {"text": f"Sure:\n{CANARY}", "n": [CANARY]})

    async def run() -> list[str]:
        tools = {x.name for x in await server.list_tools()}
        assert tools == args.keys(), f"tools without a probe: {tools ^ args.keys()}"
        out = []
        for name in sorted(tools):
            res = await server.call_tool(name, args[name])
            out.append(json.dumps(res.model_dump(), ensure_ascii=False))
        t.node_text = lambda ref: f"* x\n{CANARY}\n"
        got = await server.read_resource("opencortex://node/x")
        out.append(json.dumps([getattr(c, "content", str(c)) for c in got]))
        return out

    for text in anyio.run(run):
        assert CANARY_WORD not in text and "withheld" in text, text[:400]
    m.close()


# -- Telegram: the one send --------------------------------------------------------------------
def test_telegram_send_passes_the_egress_check(memex: Path, tmp_path: Path) -> None:
    from opencortex.runtime import Runtime
    from opencortex.telegram import TelegramGateway
    from tests.telegram.test_gateway import OWNER, TOKEN, FakeBotAPI

    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Runtime(memex=m).kernel()
    api = FakeBotAPI()
    try:
        gw = TelegramGateway(k, TOKEN, [OWNER], api_base=api.base, poll_timeout=0)
        gw.send(OWNER, f"here you go:\n{CANARY}\nbye")
        sent = "\n".join(api.to(OWNER))
        assert CANARY_WORD not in sent and "withheld" in sent and "bye" in sent, sent
    finally:
        api.close()
        k.shutdown(timeout=10)
        m.close()


# -- recall's phrasing by a non-local model ---------------------------------------------------
def test_recall_phrasing_of_a_private_record_is_not_sent(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         remote_model: tuple[str, list[str]]
                                                         ) -> None:
    """The person's own recall opens a session record with a private turn; its story is
    phrased by a model only if that model is local: the non-local one receives nothing."""
    from opencortex.llm import gateway_from_settings
    from opencortex.recall.index import Root
    from opencortex.sessions.recorder import SessionRecorder
    from tests.recall.test_recall_concurrency import _engine

    url, seen = remote_model
    _remote_config(tmp_path, monkeypatch, url)
    root = tmp_path / "memex"
    root.mkdir()
    rec = SessionRecorder(root)
    rec.record("s-phr-1", "person", "where did I put the zebra vault plans")
    rec.record("s-phr-1", "assistant", f"The zebra vault plans say {CANARY}.",
               tag="private")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    engine = _engine(m, "cli", kind="opencortex")
    engine.base_roots = [Root("opencortex", str(root))]
    engine._gateway = gateway_from_settings(m.settings)
    rnd = engine.start("zebra vault plans", invoked=True)
    assert rnd.state == "presented" and CANARY_WORD in json.dumps(rnd.to_dict())
    assert not any(CANARY_WORD in s for s in seen), seen
    m.close()


def test_the_persons_conversations_do_not_make_public_text_private(memex: Path,
                                                                   tmp_path: Path) -> None:
    """Every turn of a CLI conversation is recorded tagged private (the CLI could see
    private notes); quoting a public note there must not withhold that note from others."""
    from opencortex.access import Access
    from opencortex.sessions.recorder import SessionRecorder

    public = "The rain gauge on the north terrace reads ten millimetres today."
    (memex / "weather.org").write_text(f"* Weather\n{public}\n")
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    rec = SessionRecorder(m.settings.sessions_path)  # where the agent's records live
    rec.record("cli-1", "assistant", f"Your note says: {public}", tag="private")
    m.sync()
    assert not any(f.startswith("sessions/") for f in m.private_prints().files)
    assert Access(m, "http").egress(public) == public
    m.close()
