"""A model answer's first words reach each gateway as the model writes them — the HTTP SSE
chat, the OpenAI-compatible endpoint, the TUI and the CLI — from a real loopback model
server that streams slowly; the verified reply follows and is not shown twice."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from opencortex.llm import Gateway
from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.reason.reasoner import Reasoner, ReplyText
from opencortex.server import create_app
from opencortex.server.app import cancel_pending

from ..llm.conftest import FakeLLM, Reply, chunk, provider
from .conftest import TOKEN, Live, run_server

ANSWER = 'Hi! I\'m OpenCortex — "your" notes helper.\nAsk away.'
PAUSE = 0.8


def _slow_answer() -> Reply:
    """The proposal JSON in pieces, with a pause after the first words."""
    body = json.dumps({"action": "reply", "text": ANSWER}, ensure_ascii=False)
    cut = body.index("OpenCortex")
    return Reply(sse=[chunk({"role": "assistant", "content": ""}),
                      chunk({"content": body[:cut]}), PAUSE,
                      chunk({"content": body[cut:]}), chunk({}, "stop"), "data: [DONE]\n\n"])


@pytest.fixture
def llm():
    srv = FakeLLM()
    yield srv
    srv.close()
    assert not srv.errors, srv.errors


def _kernel(m: Memex, llm: FakeLLM) -> Kernel:
    gw = Gateway([provider(llm, max_retries=0, timeout=10.0)], profile="small", budget=20)
    return Kernel(m, reasoner=Reasoner(gw), record_sessions=False)


@pytest.fixture
def served(memex: Path, tmp_path: Path, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch):
    # a client trusted with private notes gets the words as they come; one that is not
    # gets them line by line, each line checked (tests/security/test_stream_egress.py)
    monkeypatch.setenv("OPENCORTEX_TRUSTED_CLIENTS", "http")
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    app = create_app(m, kernel=_kernel(m, llm), token=TOKEN, heartbeat=0, rate=0)
    server, t, port = run_server(app)
    yield Live(port, TOKEN, app, m)
    cancel_pending(app.state.kernel)
    server.should_exit = True
    t.join(30)
    app.state.kernel.shutdown(timeout=5)
    m.close()


def test_reply_text_is_decoded_as_it_streams() -> None:
    body = json.dumps({"action": "reply", "text": ANSWER}, ensure_ascii=False)
    r = ReplyText()
    pieces = [r.feed(body[i:i + 3]) for i in range(0, len(body), 3)]
    assert "".join(pieces) == ANSWER
    assert ReplyText().feed('{"action": "reply", "te') == ""


def test_http_sse_chat_streams_the_first_words(served: Live, llm: FakeLLM) -> None:
    llm.push(_slow_answer())
    seen: list[tuple[float, str, Any]] = []
    for event, data in served.stream("/v1/chat", {"message": "hi! who are you?",
                                                  "stream": True}):
        seen.append((time.monotonic(), event, json.loads(data)))
    deltas = [(t, d["text"]) for t, e, d in seen if e == "delta"]
    (reply_t, reply), = [(t, d["text"]) for t, e, d in seen if e == "reply"]
    assert deltas and deltas[0][1].startswith("Hi! I'm ")
    assert reply_t - deltas[0][0] >= PAUSE * 0.7  # the first words came before the rest
    assert "".join(t for _, t in deltas) == ANSWER == reply
    assert llm.last.body["stream"] is True


def test_openai_endpoint_streams_the_first_words_once(served: Live, llm: FakeLLM) -> None:
    llm.push(_slow_answer())
    times, content = [], []
    for _, data in served.stream("/v1/chat/completions", {
            "model": "opencortex", "stream": True,
            "messages": [{"role": "user", "content": "hi! who are you?"}]}):
        if data == "[DONE]":
            break
        delta = json.loads(data)["choices"][0]["delta"].get("content")
        if delta:
            times.append(time.monotonic())
            content.append(delta)
    assert "".join(content) == ANSWER  # the verified reply adds nothing already streamed
    assert content[0].startswith("Hi! I'm ") and times[-1] - times[0] >= PAUSE * 0.7


def test_tui_shows_the_words_as_they_come(memex: Path, tmp_path: Path, llm: FakeLLM) -> None:
    from opencortex.tui.app import ChatApp
    from opencortex.tui.backend import LocalBackend

    llm.push(_slow_answer())
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = _kernel(m, llm)
    written: list[tuple[float, str]] = []
    lines: list[str] = []
    try:
        app = ChatApp(LocalBackend(m, kernel=k), echo=lines.append,
                      write=lambda s: written.append((time.monotonic(), s)))
        app.send("hi! who are you?", wait=30).join(30)
    finally:
        k.shutdown(timeout=5)
        m.close()
    assert written and written[0][1].startswith("Hi! I'm ")
    assert "".join(s for _, s in written) == ANSWER
    assert written[-1][0] - written[0][0] >= PAUSE * 0.7
    assert ANSWER not in "\n".join(lines)  # not printed a second time


def test_cli_ask_prints_the_streamed_answer_once(memex: Path, tmp_path: Path, llm: FakeLLM,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from opencortex.cli import cli

    llm.push(_slow_answer())
    monkeypatch.setenv("OPENCORTEX_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("OPENCORTEX_LLM_MODEL", "m")
    monkeypatch.setenv("OPENCORTEX_LLM_PROFILE", "small")
    r = CliRunner().invoke(cli, ["ask", "hi! who are you?", "--memex", str(memex),
                                 "--index", str(tmp_path / "c.sqlite3")])
    assert r.exit_code == 0, r.output
    assert r.output.count("OpenCortex") == 1 and ANSWER in r.output
    assert llm.last.body["stream"] is True
