"""The egress check sees a streamed answer as a stream, and private text in disguise.

A hostile local model answers an HTTP client (which may not see private notes) with a
private canary line, streamed a few characters per delta: each SSE event alone is too short
for a line or a passage to match, so per-event checking let all of it out before the
verified reply (withheld) came.  And the same canary base64-, hex-, URL- or rot13-encoded,
or split into encoded pieces, passed the content check as "not that text"."""

from __future__ import annotations

import base64
import codecs
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from opencortex.guard.egress import Prints, StreamGate, Taint, check
from opencortex.llm import Gateway
from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.reason.reasoner import Reasoner
from opencortex.server import create_app
from opencortex.server.app import cancel_pending

from ..llm.conftest import FakeLLM, Reply, chunk, provider
from ..server.conftest import TOKEN, Live, run_server
from .test_egress import CANARY, CANARY_WORD, PRIVATE, _plant

PUBLIC_LINE = "Here is what I found in your notes about the weekly review."


def _pieces(text: str, n: int = 3) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]


# -- the gate itself ------------------------------------------------------------------------
def test_the_stream_gate_never_releases_a_private_line_piece_by_piece() -> None:
    prints = Prints.of([PRIVATE])
    sent: list[str] = []
    gate = StreamGate(sent.append, lambda: prints)
    for p in _pieces(f"{PUBLIC_LINE}\n{CANARY}.\nand more after it\n"):
        gate.feed(p)
    assert "".join(sent) == PUBLIC_LINE + "\n"  # the public line, then the stream ends
    assert CANARY_WORD not in "".join(sent)


def test_the_stream_gate_stops_when_the_chain_turns_private() -> None:
    """A shell command in the same chain read a private file: nothing more streams."""
    taint = Taint()
    sent: list[str] = []
    gate = StreamGate(sent.append, lambda: None, taint)
    gate.feed(PUBLIC_LINE + "\n")
    taint.mark("`cat` read keeper.org, which holds private notes")
    gate.feed("anything at all\n")
    assert sent == [PUBLIC_LINE + "\n"]


# -- encodings ------------------------------------------------------------------------------
def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


@pytest.mark.parametrize("disguise", [
    _b64(CANARY), base64.urlsafe_b64encode(CANARY.encode()).decode(),
    CANARY.encode().hex(), CANARY.encode().hex().upper(),
    urllib.parse.quote(CANARY), urllib.parse.quote_plus(CANARY),
    codecs.encode(CANARY, "rot13"),
    "\n".join(_b64(CANARY)[i:i + 16] for i in range(0, len(_b64(CANARY)), 16)),
    f"part one: {_b64(CANARY[:36])} and part two: {_b64(CANARY[36:])}",
], ids=["base64", "urlsafe", "hex", "HEX", "url", "url+", "rot13", "wrapped", "split"])
def test_encoded_private_text_is_withheld(disguise: str) -> None:
    prints = Prints.of([PRIVATE])
    v = check(f"{PUBLIC_LINE}\nThe answer: {disguise}\n", prints)
    assert v.withheld, disguise
    assert PUBLIC_LINE in v.text and disguise.split("\n")[0] not in v.text


@pytest.mark.parametrize("public", [
    _b64("Some public text that nobody marked private at all, long enough."),
    "a sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "https://example.org/search?q=weekly%20review%20notes&lang=en",
    "internationalization and interoperability considerations",
])
def test_encoded_public_text_passes(public: str) -> None:
    v = check(f"{PUBLIC_LINE}\n{public}\n", Prints.of([PRIVATE]))
    assert not v.withheld and public in v.text


# -- a running daemon, a hostile model streaming ------------------------------------------
@pytest.fixture
def llm() -> Any:
    srv = FakeLLM()
    yield srv
    srv.close()


@pytest.fixture
def served(memex: Path, tmp_path: Path, llm: FakeLLM) -> Any:
    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    gw = Gateway([provider(llm, max_retries=0, timeout=10.0)], profile="small", budget=20)
    k = Kernel(m, reasoner=Reasoner(gw), record_sessions=False)
    app = create_app(m, kernel=k, token=TOKEN, heartbeat=0, rate=0)
    server, t, port = run_server(app)
    yield Live(port, TOKEN, app, m)
    cancel_pending(app.state.kernel)
    server.should_exit = True
    t.join(30)
    app.state.kernel.shutdown(timeout=5)
    m.close()


def _leaky_answer() -> Reply:
    body = json.dumps({"action": "reply", "text": f"{PUBLIC_LINE}\n{CANARY}.\nThat is all."})
    return Reply(sse=[chunk({"role": "assistant", "content": ""})]
                 + [chunk({"content": p}) for p in _pieces(body, 4)]
                 + [chunk({}, "stop"), "data: [DONE]\n\n"])


def test_http_sse_deltas_carry_no_private_text(served: Live, llm: FakeLLM) -> None:
    llm.push(_leaky_answer())
    events = list(served.stream("/v1/chat", {"message": "hi! who are you?", "stream": True}))
    deltas = "".join(json.loads(d)["text"] for e, d in events if e == "delta")
    assert deltas.startswith(PUBLIC_LINE), events  # what is public still streams
    everything = "".join(d for _, d in events)
    assert CANARY_WORD not in everything, everything
    assert "withheld" in everything


def test_openai_stream_carries_no_private_text(served: Live, llm: FakeLLM) -> None:
    llm.push(_leaky_answer())
    content = []
    for _, data in served.stream("/v1/chat/completions", {
            "model": "opencortex", "stream": True,
            "messages": [{"role": "user", "content": "hi! who are you?"}]}):
        if data == "[DONE]":
            break
        content.append(json.loads(data)["choices"][0]["delta"].get("content") or "")
    text = "".join(content)
    assert text.startswith(PUBLIC_LINE) and CANARY_WORD not in text, text
    assert "withheld" in text
