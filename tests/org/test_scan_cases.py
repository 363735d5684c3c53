"""Cases for the scanner's and lexer's shortcuts (the parser-speed work of issue 27).

Each shortcut must give what the plain scan gives: closing lines indexed by an
unanchored search must still need nothing but blanks before them on their line,
emphasis closers found from the marker must still need a non-blank before them,
"#+" lines classified by one match must keep Org's order of tests, item lines
with and without "::" must split the same, and a document holding radio targets
now takes the plain-prose fast path, where its targets must still be found.
"""

from __future__ import annotations

import pytest

from opencortex.org import parse


def _links(text: str) -> list[list[tuple[str, str]]]:
    return [[(lk.type, lk.path) for lk in h.links] for h in parse(text).headings]


@pytest.mark.parametrize(("text", "links"), [
    # "#+END_SRC" after other text closes nothing: the block is a paragraph, its link parsed
    ("* a\n#+BEGIN_SRC sh\n[[https://a.b/2]]\nx #+END_SRC\n", [[("https", "//a.b/2")]]),
    # indented, lower-case closing line: a closed (opaque) block, no link
    ("* a\n#+BEGIN_SRC sh\n[[https://a.b/2]]\n  #+end_src\n", [[]]),
    ("* a\n#+begin_quote\n[[https://a.b/3]]\n#+END_QUOTE\n", [[("https", "//a.b/3")]]),
    # a dynamic block's contents are parsed, an example block's are not
    ("* a\n#+CALL: f()\n#+BEGIN: clocktable\n[[https://a.b/8]]\n#+END:\n#+NAME: n\n"
     "#+begin_example\n[[https://a.b/9]]\n#+end_example\n", [[("https", "//a.b/8")]]),
])
def test_blocks_close_only_on_their_own_line(text: str, links: list) -> None:
    assert _links(text) == links


def test_verbatim_closer_needs_a_non_blank_before_it() -> None:
    # "x=" closes the first verbatim (hiding its link); "x= [[...]]" opens nothing
    assert _links("* a\n=code [[https://a.b/4]] x= and x= [[https://a.b/5]]\n") == [
        [("https", "//a.b/5")]]
    assert _links("* a\n*bold [[https://a.b/6]]* +s [[https://a.b/7]]+\n") == [
        [("https", "//a.b/6"), ("https", "//a.b/7")]]


def test_hash_plus_lines_keep_keywords() -> None:
    doc = parse("#+TITLE: T\n#+call: f()\n#+begin: x\n#+end:\n#+FILETAGS: :a:\n* h\n")
    assert doc.keywords == {"TITLE": ["T"], "FILETAGS": [":a:"]}


def test_item_tags_with_and_without_double_colon() -> None:
    text = ("* a\n- [[https://a.b/10][t]] :: desc [[https://a.b/11]]\n- plain [[https://a.b/12]]\n"
            "1. x :: y [[https://a.b/13]]\n")
    assert _links(text) == [[("https", f"//a.b/{n}") for n in (10, 11, 12, 13)]]


def test_table_cells_are_lexed() -> None:
    doc = parse("* a\n| [[https://a.b/14]] | x |\n|---+---|\n| y | <2026-01-02 Fri> |\n")
    assert [(lk.type, lk.path) for lk in doc.headings[0].links] == [("https", "//a.b/14")]
    assert [ts.raw for ts in doc.headings[0].timestamps] == ["<2026-01-02 Fri>"]


def test_radio_targets_in_plain_prose_sections() -> None:
    # every section here is plain prose but the last (a list): targets are collected
    # from prose paragraphs and linked in prose and list alike, case-insensitively
    text = "* a\nDefine <<<Radio Word>>> here.\n\n* b\nThe radio  word again.\n- a Radio Word item\n"
    assert _links(text) == [[], [("radio", "radio  word"), ("radio", "Radio Word")]]
    # no target defined: the same words are plain text
    assert _links(text.replace("<<<Radio Word>>>", "Radio Word")) == [[], []]
