"""The parser's fast paths must give exactly what the full element scan gives.

Plain-prose sections skip the element scanner (parser._NOT_PROSE decides), in
documents with radio targets too; here that test is forced to fail for every
section, and both parses are compared field by field, spans and link offsets
included.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencortex.org import parse, parser


def _dump(doc) -> tuple:
    return (doc.keywords, doc.todo_keywords, doc.done_keywords, doc.preamble_end,
            [repr(lk) for lk in doc.preamble_links], [repr(h) for h in doc.headings])


def _slow(text: str) -> tuple:
    saved = parser._NOT_PROSE
    parser._NOT_PROSE = re.compile(r"\n")  # every section "complex"
    try:
        return _dump(parse(text))
    finally:
        parser._NOT_PROSE = saved


HEAD = st.sampled_from(["* ", "** ", "*** TODO ", "* DONE [#A] ", "** COMMENT ", "* :t:"])
TITLE = st.lists(st.sampled_from(
    ["word", " ", "[[id:x][y]]", "<2026-01-01 Thu>", ":tag:", "http://a.b", "\t", "é"]), max_size=5
).map("".join)
PLANNING = st.sampled_from([
    "", "SCHEDULED: <2026-12-05 Tue>\n", "CLOSED: [2026-11-03 Sat 10:00]\n",
    "  DEADLINE: <2026-01-01 Thu +1w>\n", "CLOSED: [2026-11-03 Sat 10:00] SCHEDULED: <2026-12-05 Tue>\n",
    "scheduled: <2026-13-45 x>\n", "\n",
])
DRAWER = st.sampled_from([
    "", ":PROPERTIES:\n:ID:       abc\n:END:\n", "  :properties:\n  :id: a b  \n:Foo:\n  :end:  \n",
    ":PROPERTIES:\n:ID: x\nnot a prop\n:END:\n", ":PROPERTIES:\n:END:", ":PROPERTIES:\n",
])
LINE = st.sampled_from([
    "Plain prose line.", "", "   ", "See [[id:abc][x]].", "https://x.org/a.", "Note: x", "- item",
    "1. item", "#+begin_src\n#+end_src", ": fixed", "| a |", "*bold* start", "  indented",
    "Clock: no", "CLOCK: [2026-01-01]", "x^2 and a_b", "=verb [[id:q]]=", "[fn:1] def",
    "text\r", "\t", "2026 was", "-----", "#+TODO: A | B", "<2026-02-03 Tue> <<t>>",
    # radio targets: a document holding "<<<" takes the fast path too
    "Set <<<Radio Word>>> here.", "a radio  word, RADIO WORD.", "<<<x>>> and x",
])
BODY = st.lists(LINE, max_size=6).map(lambda ls: "".join(x + "\n" for x in ls))
SECTION = st.tuples(HEAD, TITLE, st.sampled_from(["\n", ""]), PLANNING, DRAWER, BODY).map("".join)
DOC = st.tuples(
    st.sampled_from(["", "#+TITLE: t\n", "#+TODO: A B | C\n\n"]), st.lists(SECTION, max_size=6),
    st.booleans(),
).map(lambda t: (t[0] + "".join(t[1])).replace("\n", "\r\n") if t[2] else t[0] + "".join(t[1]))


@pytest.mark.parametrize("text", [
    "* a\nprose\n\nmore [[id:x][y]]\n  \n",
    "* a\nSCHEDULED: <2026-01-01 Thu>\n:PROPERTIES:\n:ID: x\n:END:\nSee https://a.b/c.\n",
    "* a\nlast line without newline [[b]]",
    "* a\n  \n\t\nx <2026-01-01 Thu>\n\n\n* b\n",
    "* a\r\nwin [[id:q][r]]\r\n\r\n",
    "* a\n<<<Radio Word>>>\n\n* b\nthe radio word\n\nagain Radio Word\n* c\n- radio word\n",
])
def test_fast_path_examples(text: str) -> None:
    assert _dump(parse(text)) == _slow(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=DOC)
def test_fast_path_agrees_with_full_scan(text: str) -> None:
    assert _dump(parse(text)) == _slow(text)


def _full_keyword_path(text: str) -> tuple:
    """The parse with ElementScanner's plain-keyword shortcut off (every "#+" line
    through _element, _hash_plus and _keyword as before it)."""
    from opencortex.org import elements
    saved = elements._PLAIN_KEYWORD
    elements._PLAIN_KEYWORD = re.compile(r"(?!)")
    try:
        doc = parse(text)
        return _dump(doc), doc.clock_lines
    finally:
        elements._PLAIN_KEYWORD = saved


KEYWORD_LINES = [
    "#+TITLE: t", "#+cindex: index entry", "  #+kindex: C-c x  ", "#+TODO: A B | C",
    "#+NAME: n", "#+name: n", "#+CAPTION: c", "#+CAPTION[short]: long", "#+results:",
    "#+RESULTS[abc]: x", "#+ATTR_HTML: :width 1", "#+attr_latex: x", "#+HEADER: :x y",
    "#+HEADERS: :x", "#+PLOT: x", "#+TBLNAME: t", "#+DATA: d", "#+LABEL: l",
    "#+BEGIN_SRC sh", "#+END_SRC", "#+begin_quote", "#+end_quote", "#+BEGIN: dyn",
    "#+END:", "#+BEGINX: y", "#+begin_: z", "#+CALL: f()", "#+call: g()", "#+CALLX: h",
    "#+: empty key", "#+a:b: c", "#+a b: c", "#+key[x]: v", "#+nocolon", "#+STARTUP: odd",
    "#+LINK: gh https://github.com/", "# comment", "#+", "#+x:", "text [[gh:x]]", "- item",
    "", "CLOCK: [2026-01-01 Thu 10:00]", "| a |", ":DRAWER:", ":END:",
]


@pytest.mark.parametrize("text", [
    "#+TITLE: T\n#+cindex: x\n* a\n#+kindex: k\ntext\n",
    "* a\n#+NAME: n\n#+begin_src sh\necho\n#+end_src\n#+NAME: lone\n\n#+CAPTION[s]: l\n| x |\n",
    "* a\n- item\n  #+vindex: v\n  #+ATTR_HTML: :x\n  [[https://a.b]]\n#+: x\n#+a:b: c\n",
    "#+TODO: A B | C\n#+STARTUP: odd\n* A x\n*** C y\n#+BEGIN: d\n#+key: inside\n#+END:\n",
])
def test_plain_keyword_shortcut_examples(text: str) -> None:
    assert _dump(parse(text)) == _full_keyword_path(text)[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.sampled_from(KEYWORD_LINES), max_size=12), head=st.booleans())
def test_plain_keyword_shortcut_agrees_with_full_path(lines: list[str], head: bool) -> None:
    text = ("* h\n" if head else "") + "".join(x + "\n" for x in lines)
    doc = parse(text)
    assert (_dump(doc), doc.clock_lines) == _full_keyword_path(text)


def test_radio_targets_found_wherever_they_are() -> None:
    """The radio pass looks only at sections holding "<<<" (found once, by bisection):
    a target in the preamble, a list, a prose section and a headline is found, and its
    words become radio links everywhere, in document order."""
    text = ("Pre <<<alpha>>> here.\n* one\n- an item with <<<beta>>>\n* two <<<gamma>>>\n"
            "prose <<<delta>>> and <<<<odd>>>>\n* uses\nalpha, beta, gamma and delta.\n"
            "- beta in a list\n")
    doc = parse(text)
    uses = doc.headings[2]
    assert [(lk.type, lk.path) for lk in uses.links] == [
        ("radio", "alpha"), ("radio", "beta"), ("radio", "gamma"), ("radio", "delta"),
        ("radio", "beta")]
    base = text.index("alpha, beta")
    assert [lk.offset for lk in uses.links] == [
        base, base + 7, base + 13, base + 23, text.index("beta in a list")]
