"""Red team (issue 23, third pass): the readers of text on its way out were quadratic.

- the egress check's encoded-run reader added each base64-looking piece of a blob wrapped
  over spaces to a growing string (every piece copied the blob so far), and searched back
  from every ``%XX`` to the start of its word: a note of ``AAAAAAAAAAAAAAAA `` or
  ``%41%41…`` (a synced file, read back by ``GET /v1/nodes``) cost seconds per response;
- the stream gate added every streamed piece to the unfinished line and searched it
  again for a line break, and the streamed-answer reader (``ReplyText``) added every piece
  to its buffer and searched all of it for the ``"text"`` key: a hostile model answering
  a character at a time without a line break (or without the key) made each piece cost
  the whole answer so far.

Measured as in test_linear_parsers: CPU time at n and 4n, at most 6x."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opencortex.guard.egress import Prints, StreamGate
from opencortex.reason.reasoner import ReplyText

from .test_egress import PRIVATE
from .test_linear_parsers import _grows

PRINTS = Prints.of([PRIVATE])


def _encoded(s: str) -> object:
    """The encoded-run reader of the check (``check`` itself also reads the text's words and
    letters, linear and ten times the cost, and remembers its verdict per text)."""
    return PRINTS._encoded_hits(s)


def _pieces(feed: Callable[[str], object], prefix: str = "") -> Callable[[str], object]:
    """``s`` fed one character at a time (after ``prefix`` in one piece)."""
    def run(s: str) -> object:
        if prefix:
            feed(prefix)
        for c in s:
            feed(c)
        return None
    return run


def _gate(s: str) -> object:
    gate = StreamGate(lambda _t: None, lambda: PRINTS)
    return _pieces(gate.feed)(s)


def _reply_text(prefix: str) -> Callable[[str], object]:
    def run(s: str) -> object:
        return _pieces(ReplyText().feed, prefix)(s)
    return run


@pytest.mark.parametrize(("name", "fn", "delim", "n"), [
    ("egress: base64 pieces over spaces", _encoded, "AAAAAAAAAAAAAAAA ", 200_000),
    ("egress: URL-encoded word", _encoded, "%41", 50_000),
    ("egress: byte escapes", _encoded, "\\x41", 50_000),
    ("egress: byte escapes, 7 at a time", _encoded, "0x41 " * 7 + "y", 50_000),
    ("stream gate: no line break", _gate, "a", 25_000),
    ("reply text: before the key", _reply_text(""), "{ ", 25_000),
    ("reply text: blanks after the key", _reply_text('{"text"'), " ", 10_000),
    ("reply text: inside the text", _reply_text('{"text": "'), "ab", 50_000),
])
def test_outgoing_text_readers_are_linear(name: str, fn: Callable[[str], object], delim: str,
                                          n: int) -> None:
    slow = _grows(fn, delim, n)
    assert slow is None, f"{name} grows faster than linear: {slow}"


def _title(s: str) -> object:
    from opencortex.skills.websearch import _title_of

    return _title_of(s)


@pytest.mark.parametrize("delim", ["<title>", "<title", "<TITLE a=b>x"])
def test_a_web_pages_title_is_found_in_linear_time(delim: str) -> None:
    """A fetched page is untrusted: ``<title>`` repeated with no ``</title>`` made the
    title regexp scan the rest of the page from every one of them."""
    assert _grows(_title, delim, 40_000) is None


def test_the_title_is_still_the_first_closed_one() -> None:
    assert _title("<html><TITLE lang=en>A &amp; B\n page</title><title>x</title>") == \
        "A & B page"
    assert _title("<title>never closed") == ""


# -- found by this pass, not fixed yet (issue 23 follow-up) ------------------------------------
def _think(s: str) -> object:
    from opencortex.llm.schema import extract_json

    return extract_json(s)


def _markup(s: str) -> object:
    from opencortex.skills.notes_answer import _plain

    return _plain(s)


def _agenda_ranges(s: str) -> object:
    import re

    from opencortex.memory.agenda_stamps import _TR

    return [_TR.match(s, m.start()) for m in re.finditer("<", s)]


def _skill_blocks(s: str) -> object:
    from opencortex.guard.trust import python_blocks

    return list(python_blocks(s))


def _scan_id(s: str) -> object:
    from opencortex.retrieval.scan import _ID

    return _ID.match(":id: x" + s + "y")


# found quadratic by the red team (a lazy .*? retried from every opener to the end of the
# text or line); each now reads its input once
@pytest.mark.parametrize(("name", "fn", "delim", "n"), [
    ("model answer <think> never closed (llm.schema.extract_json)", _think, "<think>", 2000),
    ("note line of emphasis openers (notes_answer._MARKUP)", _markup, "*a ", 2000),
    ("agenda range per stamp (agenda_stamps._TR)", _agenda_ranges, "<2026-01-01 x ", 2000),
    ("skill file src openers (guard.trust.python_blocks)", _skill_blocks,
     "#+begin_src python\n", 4000),
    (":id: line of blanks (retrieval.scan._ID)", _scan_id, " ", 2000),
])
def test_the_once_quadratic_readers_of_untrusted_text_are_linear(name: str, fn: Callable[[str], object],
                                                   delim: str, n: int) -> None:
    slow = _grows(fn, delim, n)
    assert slow is None, f"{name} grows faster than linear: {slow}"
