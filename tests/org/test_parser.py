"""Unit tests of the Org parser: headlines, sections, spans, settings, input forms."""

from __future__ import annotations

import pytest

from opencortex.org import OrgDocument, parse, parse_bytes, parse_file


def titles(doc: OrgDocument) -> list[str]:
    return [h.title for h in doc.headings]


# --------------------------------------------------------------- headlines

def test_headline_needs_star_then_space() -> None:
    doc = parse("*\n* \n*\tTab\n** real\nnot *\n*bold*\n")
    assert [(h.line, h.stars, h.title) for h in doc.headings] == [(2, 1, ""), (4, 2, "real")]


def test_todo_priority_comment_tags() -> None:
    doc = parse("** TODO [#B] COMMENT title here   :a:b@#%:\n")
    h = doc.headings[0]
    assert (h.todo, h.todo_type, h.priority, h.comment, h.title, h.tags) == (
        "TODO", "todo", "B", True, "title here", ["a", "b@#%"])


def test_todo_needs_following_space() -> None:
    doc = parse("* TODO\n* DONE\tTabbed\n* DONE x\n")
    assert [(h.todo, h.title) for h in doc.headings] == [
        (None, "TODO"), (None, "DONE\tTabbed"), ("DONE", "x")]
    assert doc.headings[2].todo_type == "done"


def test_comment_prefix_like_org() -> None:
    doc = parse("* COMMENTARY\n* COMMENT\n")
    assert [(h.comment, h.title) for h in doc.headings] == [(True, "ARY"), (True, "")]


def test_tags_only_and_archive() -> None:
    doc = parse("* :onlytag:\n* Old :ARCHIVE:x:\n* a :b: c\n")
    assert doc.headings[0].tags == ["onlytag"] and doc.headings[0].title == ""
    assert doc.headings[1].archived
    assert doc.headings[2].tags == [] and doc.headings[2].title == "a :b: c"


def test_custom_todo_keywords_and_done_default() -> None:
    doc = parse("#+TODO: BUG(b) FIXED(f@/!)\n#+SEQ_TODO: NEXT | DONE CANCELLED\n* BUG a\n* FIXED b\n* CANCELLED c\n* TODO d\n")
    assert doc.todo_keywords == ["BUG", "NEXT"]
    assert doc.done_keywords == ["FIXED", "DONE", "CANCELLED"]
    assert [h.todo for h in doc.headings] == ["BUG", "FIXED", "CANCELLED", None]
    assert [h.todo_type for h in doc.headings[:3]] == ["todo", "done", "done"]


def test_todo_line_inside_block_ignored() -> None:
    doc = parse("#+begin_example\n#+TODO: X | Y\n#+end_example\n* X a\n")
    assert doc.todo_keywords == ["TODO"] and doc.headings[0].todo is None


def test_setupfile_followed(tmp_path) -> None:
    (tmp_path / "setup.org").write_text("#+TODO: FIXME | FIXED\n#+STARTUP: odd\n")
    f = tmp_path / "main.org"
    f.write_text("#+SETUPFILE: setup.org\n* FIXME a\n*** b\n")
    doc = parse_file(f)
    assert doc.todo_keywords == ["FIXME"] and doc.headings[0].todo == "FIXME"
    assert [h.level for h in doc.headings] == [1, 2]


def test_startup_odd_levels() -> None:
    doc = parse("#+STARTUP: odd\n* a\n** b\n*** c\n**** d\n***** e\n")
    assert [h.level for h in doc.headings] == [1, 2, 2, 3, 3]
    assert [h.stars for h in doc.headings] == [1, 2, 3, 4, 5]


def test_parent_and_outline_path() -> None:
    doc = parse("* a\n*** b\n** c\n* d\n")
    assert [h.parent for h in doc.headings] == [None, 0, 0, None]
    assert doc.outline_path(doc.headings[2]) == ["a"]


# --------------------------------------------------------------- planning / drawers

def test_planning_and_properties() -> None:
    text = ("* H\n  SCHEDULED: <2026-11-30 Mon 10:00 +1w> DEADLINE: <2026-12-01 Tue -2d>\n"
            "  :PROPERTIES:\n  :ID:       abc\n  :header-args:emacs-lisp: :results silent\n"
            "  :Empty:\n  :END:\nBody\n")
    h = parse(text).headings[0]
    assert h.scheduled is not None and h.scheduled.repeater == "+1w" and h.scheduled.has_time
    assert h.deadline is not None and h.deadline.warning == "-2d"
    assert h.properties == [("ID", "abc"), ("header-args:emacs-lisp", ":results silent"),
                            ("Empty", "")]
    assert h.id == "abc" and h.get("id") == "abc"
    assert h.body == "Body"


def test_lowercase_planning_keyword_lands_in_closed_like_org() -> None:
    h = parse("* x\n  SCHEDULED: <2020-01-01 Wed> deadline: <2020-02-02>\n").headings[0]
    assert h.scheduled is not None and h.closed is not None and h.deadline is None


def test_planning_only_on_the_line_after_headline() -> None:
    h = parse("* x\n\nSCHEDULED: <2020-01-01 Wed>\n").headings[0]
    assert h.scheduled is None and h.planning_span is None
    assert h.body == "SCHEDULED: <2020-01-01 Wed>"


def test_property_drawer_must_follow_headline() -> None:
    h = parse("* x\n\n:PROPERTIES:\n:ID: a\n:END:\n").headings[0]
    assert h.properties == [] and h.drawer_span is None


def test_invalid_property_drawer_is_not_one() -> None:
    h = parse("* x\n:PROPERTIES:\nnot a property\n:END:\n").headings[0]
    assert h.properties == []


def test_unterminated_property_drawer_is_text() -> None:
    doc = parse("* x\n:PROPERTIES:\n:ID: a\n* y\n:END:\n")
    assert doc.headings[0].properties == []
    assert doc.headings[0].body == ":PROPERTIES:\n:ID: a"


def test_spans() -> None:
    text = "pre\n* H :t:\nSCHEDULED: <2026-01-01 Thu>\n:PROPERTIES:\n:ID: x\n:END:\n\nbody\n** K\nk\n* L"
    doc = parse(text)
    h, k, lh = doc.headings
    assert text[h.start:h.headline_end] == "* H :t:"
    assert text[slice(*h.planning_span)] == "SCHEDULED: <2026-01-01 Thu>\n"
    assert text[slice(*h.drawer_span)] == ":PROPERTIES:\n:ID: x\n:END:\n"
    assert text[h.body_start:h.end] == "\nbody\n"
    assert h.end == k.start and h.subtree_end == lh.start and k.subtree_end == lh.start
    assert lh.end == lh.subtree_end == len(text) and lh.headline_end == len(text)
    assert doc.preamble_end == h.start


# --------------------------------------------------------------- bodies

def test_body_normalisation() -> None:
    doc = parse("* a\n\n\n  text  \n\n more\n\n\n* b\n")
    assert doc.headings[0].body == "  text  \n\n more"
    assert doc.headings[1].body == ""


def test_unterminated_src_block_is_text() -> None:
    doc = parse("* a\n#+begin_src python\n[[x]]\n* b\n#+end_src\n")
    assert [lk.path for lk in doc.headings[0].links] == ["x"]


# --------------------------------------------------------------- input forms

def test_crlf() -> None:
    text = "#+TITLE: T\r\n* H :t:\r\n:PROPERTIES:\r\n:ID: x\r\n:END:\r\nbody [[a]]\r\nmore\r\n* K\r\n"
    doc = parse(text)
    h = doc.headings[0]
    assert (h.title, h.tags, h.properties, h.body) == ("H", ["t"], [("ID", "x")], "body [[a]]\nmore")
    assert doc.title == "T"
    assert text[h.start:h.headline_end] == "* H :t:"
    assert text[slice(*h.drawer_span)] == ":PROPERTIES:\r\n:ID: x\r\n:END:\r\n"
    assert text[h.links[0].offset:].startswith("[[a]]")
    assert doc.headings[1].start == text.index("* K")


def test_parse_bytes_invalid_utf8_and_nul() -> None:
    data = b"* a\xff\xfe b\n\x00x\n* c\n"
    doc = parse_bytes(data)
    assert [h.title for h in doc.headings] == ["a\udcff\udcfe b", "c"]
    assert any("invalid UTF-8 at byte 3" in e for e in doc.errors)
    assert any("NUL" in e for e in doc.errors)
    assert doc.text.encode("utf-8", "surrogateescape") == data
    assert doc.byte_offset(doc.headings[1].start) == data.index(b"* c")


def test_parse_file(tmp_path) -> None:
    p = tmp_path / "x.org"
    p.write_bytes("* é\n".encode())
    doc = parse_file(p)
    assert doc.path == str(p) and titles(doc) == ["é"] and doc.errors == []


def test_keywords_and_filetags() -> None:
    doc = parse("#+TITLE: A\n#+title: B\n#+FILETAGS: :x:y:\n#+begin_src\n#+TITLE: no\n#+end_src\n* h\n#+TITLE: C\n")
    assert doc.keywords["TITLE"] == ["A", "B", "C"]
    assert doc.filetags == ["x", "y"]
    assert doc.title == "A B C"


@pytest.mark.parametrize("text", ["", "\n", "   ", "* ", "#+TITLE:", ":PROPERTIES:"])
def test_tiny_inputs(text: str) -> None:
    parse(text)


def test_duplicate_id_lines_like_emacs() -> None:
    # Emacs 29 / Org 9.5.5: org-element :ID -> "second" (last line), while
    # org-entry-get / org-id-get -> "first" (first line); keys case-insensitive.
    doc = parse("* H\n:PROPERTIES:\n:ID: first\n:Foo: a\n:id: second\n:FOO: b\n:END:\nbody\n")
    h = doc.headings[0]
    assert h.id == "second"
    assert h.get("ID") == "first" and h.get("foo") == "a"
    assert parse("* H\n:PROPERTIES:\n:ID:\n:END:\n").headings[0].id is None
