"""A notes question over the HTTP gateways of a real daemon on loopback: /v1/chat and the
OpenAI-compatible /v1/chat/completions answer it from the note, cited; an HTTP client (not
trusted with private notes) asking about a private note gets none of its text."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .edge_live import daemons, leaks, plant

QUESTION = "how many eggs do I crack into the shakshuka?"


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


def test_http_chat_and_the_openai_endpoint_answer_a_notes_question_cited(
        memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    st, body, _ = live.request("POST", "/v1/chat", {"message": QUESTION, "session": "n1"},
                               timeout=120)
    assert st == 200, body
    assert "eggs" in body["reply"] and "(notes/shakshuka.org:" in body["reply"]
    assert [i["target"] for i in body["data"]["intents"]] == ["notes"]
    assert any(c.startswith(("id:", "notes/shakshuka.org::"))
               for c in body["data"]["citations"])
    st, body, _ = live.request("POST", "/v1/chat/completions", {
        "model": "opencortex", "messages": [{"role": "user", "content": QUESTION}]},
        timeout=120)
    assert st == 200, body
    text = body["choices"][0]["message"]["content"]
    assert "eggs" in text and "(notes/shakshuka.org:" in text


def test_an_http_client_asking_about_a_private_note_gets_none_of_it(
        memex: Path, live_factory: Any) -> None:
    plant(memex)
    (memex / "alarm.org").write_text(textwrap.dedent("""\
        * Alarm panel :private:
        The alarm panel code is the quixotic walrus code, changed in spring.
        """), encoding="utf-8")
    live = live_factory(memex)
    for q in ("what is the quixotic walrus code?", "what's the alarm panel code?",
              "what did the Cerulean armadillo do?"):
        for path, body in (("/v1/chat", {"message": q, "session": "p1"}),
                           ("/v1/chat/completions", {"model": "opencortex", "messages": [
                               {"role": "user", "content": q}]})):
            st, out, _ = live.request("POST", path, body, timeout=120)
            assert st == 200, out
            text = (" ".join(out["replies"]) + str((out["data"] or {}).get("citations"))
                    if path == "/v1/chat" else out["choices"][0]["message"]["content"])
            assert not leaks(text), (q, path, leaks(text), text[:500])
            assert "alarm.org" not in text and "secret.org" not in text
