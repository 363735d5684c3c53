"""Chat skills that read the raw memex for an untrusted HTTP client.

/links, /review, /save and the GTD questions/writes ran over every node, so an HTTP client
(token holder) got a :private: note's title, schedule and body passages, and could write
into a private note.  Each test talks to a real daemon over loopback HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .edge_live import PRIVATE_ID, daemons, leaks, plant


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


def _chat(live: Any, message: str, session: str = "rt3") -> tuple[int, str]:
    out: dict[str, Any] = {}

    def go() -> None:
        out["r"] = live.request("POST", "/v1/chat", {"message": message, "session": session})

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(120)
    assert "r" in out, f"no answer to {message!r} within 120 s"
    st, body, _ = out["r"]
    text = json.dumps(body, ensure_ascii=False)
    return st, text.replace(json.dumps(message, ensure_ascii=False)[1:-1], "<sent>")


def _leak_nothing(live: Any, messages: list[str], session: str | None = None,
                  expect: str = "") -> None:
    """Each message answered (``expect`` in the answer), naming nothing private."""
    for m in messages:
        st, text = _chat(live, m, session=session or f"g{abs(hash(m))}")
        assert st == 200 and expect in text, text
        assert not leaks(text), f"{m!r} leaked {leaks(text)}: {text[:600]}"


def test_links_suggestions_quote_a_private_note_body(memex: Path, live_factory: Any) -> None:
    """/links on a public note lists its nearest notes with a passage of each: the private
    note's body was one of them."""
    plant(memex)
    (memex / "walrus.org").write_text(
        "* Walrus codes and vault combinations\n"
        "Which walrus code opens which vault combination? Quixotic codes.\n",
        encoding="utf-8")
    live = live_factory(memex)
    _leak_nothing(live, ["/links Walrus codes and vault combinations"], session="rt3",
                  expect="Notes close to")


def test_links_on_a_private_note_names_it(memex: Path, live_factory: Any) -> None:
    plant(memex)
    live = live_factory(memex)
    _leak_nothing(live, [f"/links {ref}" for ref in (f"id:{PRIVATE_ID}", "secret.org:1",
                                                       "diary.org:2")], session="rt3")


def test_review_lists_private_entries(memex: Path, live_factory: Any) -> None:
    plant(memex)
    p = memex / "secret.org"
    p.write_text(p.read_text().replace("* TODO Zanzibar", "* DONE Zanzibar").replace(
        "SCHEDULED: <2026-11-03 Tue>",
        "CLOSED: [2026-11-03 Tue 10:00] SCHEDULED: <2026-11-03 Tue>"), encoding="utf-8")
    live = live_factory(memex)
    _leak_nothing(live, ["/review 2026-11-03"], session="rt3", expect="Review of")


def test_gtd_question_names_a_private_task(memex: Path, live_factory: Any) -> None:
    plant(memex)
    live = live_factory(memex)
    _leak_nothing(live, ["when is the Zanzibar thing due?",
                         "what's scheduled for 3 November 2026?"])


def test_gtd_and_save_write_into_a_private_note(memex: Path, live_factory: Any) -> None:
    """An untrusted client may not write into a private note (MCP capture under one is
    refused); GTD changes and /save did, and named the note in the reply."""
    plant(memex)
    before = (memex / "secret.org").read_bytes()
    live = live_factory(memex)
    msgs = ["the Zanzibar vault combination is done", "add a note to Zanzibar vault: hello",
            "what's next", "/save Zanzibar vault combination", f"/save id:{PRIVATE_ID}"]
    for m in msgs:
        st, text = _chat(live, m, session="w1")
        assert st == 200
        # the client named the title itself: only what it did not say is a leak
        text = text.replace("Zanzibar vault combination", "<sent>")
        assert not leaks(text), f"{m!r} leaked {leaks(text)}: {text[:600]}"
        assert (memex / "secret.org").read_bytes() == before, f"{m!r} wrote into it"
