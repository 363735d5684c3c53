"""Links and timestamps: forms, types, and where Org does (not) see them."""

from __future__ import annotations

import datetime as dt

import pytest

from opencortex.org import format_timestamp, parse, parse_timestamp

from .conftest import links_of


def one(body: str) -> list[tuple[str, str]]:
    return links_of(parse("* h\n" + body), 0)


# --------------------------------------------------------------- forms and types

@pytest.mark.parametrize(("text", "expected"), [
    ("[[https://orgmode.org][Org]]", [("https", "//orgmode.org")]),
    ("[[file:notes.org::*Heading]]", [("file", "notes.org")]),
    ("[[./a.org]] [[../b]] [[/abs]] [[~/home]]",
     [("file", "./a.org"), ("file", "../b"), ("file", "/abs"), ("file", "~/home")]),
    ("[[(ref)]] [[#cid]] [[*Head line]] [[Some target]]",
     [("coderef", "ref"), ("custom-id", "cid"), ("fuzzy", "*Head line"), ("fuzzy", "Some target")]),
    ("[[id:abc-123]] [[unknown:foo]]", [("id", "abc-123"), ("fuzzy", "unknown:foo")]),
    ("see https://a.org/x.html, now", [("https", "//a.org/x.html")]),
    ("mailto:me@x.org. id:123 foo:bar", [("mailto", "me@x.org"), ("id", "123")]),
    ("<https://a.b/c d> and <id:x>", [("https", "//a.b/c d"), ("id", "x")]),
    ("https://en.wikipedia.org/wiki/Foo_(bar) end", [("https", "//en.wikipedia.org/wiki/Foo_(bar)")]),
    ("xhttps://no.example", []),
    ("[[https://x.org][desc with [[inner]] ]]", [("https", "//x.org")]),
    ("[[a\\]b]]", [("fuzzy", "a]b")]),
    ("[[file+sys:/x/y::3]]", [("file", "/x/y")]),
])
def test_link_forms(text: str, expected: list[tuple[str, str]]) -> None:
    assert one(text) == expected


def test_link_fields() -> None:
    lk = parse("* h\nx [[file:a.org::*H][Desc]] y").headings[0].links[0]
    assert (lk.type, lk.path, lk.search, lk.description, lk.format) == (
        "file", "a.org", "*H", "Desc", "bracket")
    assert lk.raw == "[[file:a.org::*H][Desc]]"
    assert lk.offset == len("* h\nx ")


def test_abbreviations() -> None:
    doc = parse("#+LINK: gh https://github.com/%s\n#+LINK: wp https://en.wikipedia.org/wiki/\n"
                "* h\n[[gh:org/x]] [[wp:Org]] [[gh]]\n")
    assert links_of(doc, 0) == [("https", "//github.com/org/x"),
                                ("https", "//en.wikipedia.org/wiki/Org"),
                                ("https", "//github.com/")]


def test_radio_targets_make_radio_links() -> None:
    doc = parse("* h\nA <<<Magic Word>>> here.\n* k\nthe magic  word, not magicwordy\n")
    assert links_of(doc, 1) == [("radio", "magic  word")]


def test_title_and_preamble_links() -> None:
    doc = parse("intro https://a.org\n* see [[x]] :t:\n")
    assert links_of(doc) == [("https", "//a.org")]
    assert links_of(doc, 0) == [("fuzzy", "x")]


# --------------------------------------------------------------- where links are not

@pytest.mark.parametrize("body", [
    "#+begin_src python\n[[x]]\n#+end_src",
    "#+BEGIN_EXAMPLE\nhttps://a.org\n#+END_EXAMPLE",
    "#+begin_export html\n[[x]]\n#+end_export",
    "#+begin_comment\n[[x]]\n#+end_comment",
    ": [[x]] fixed width",
    "# [[x]] comment",
    "#+TITLE: [[x]]",
    "=[[x]]= and ~https://a.org~",
    "src_python{print('[[x]]')}",
    "$[[x]]$ \\(https://a.org\\)",
    "{{{macro([[x]])}}}",
    "\\foo{[[x]]}",
    "  :PROPERTIES:\n  :URL: [[x]]\n  :END:",
    "CLOCK: [2020-01-01 Wed 10:00] https://a.org",
    "[cite:@key [[x]]]",
])
def test_no_links_where_org_parses_no_objects(body: str) -> None:
    assert one(body) == []


@pytest.mark.parametrize(("body", "expected"), [
    ("#+begin_quote\n[[x]]\n#+end_quote", [("fuzzy", "x")]),
    ("#+begin_verse\n[[x]]\n#+end_verse", [("fuzzy", "x")]),
    (":LOGBOOK:\n[[x]]\n:END:", [("fuzzy", "x")]),
    ("| a | [[x]] |\n|---+---|\n| https://a.org | b |", [("fuzzy", "x"), ("https", "//a.org")]),
    ("- tag [[t]] :: desc [[d]]\n  - nested https://a.org", [("fuzzy", "t"), ("fuzzy", "d"), ("https", "//a.org")]),
    ("*bold [[x]]* /it https://a.org/ [fn::note [[y]]]", [("fuzzy", "x"), ("https", "//a.org"), ("fuzzy", "y")]),
    ("\\alpha{[[x]]}", [("fuzzy", "x")]),
    ("=not closed [[x]]", [("fuzzy", "x")]),
    ("a=b [[x]] c=d", [("fuzzy", "x")]),
    ("[fn:1] definition [[x]]", [("fuzzy", "x")]),
    ("#+CAPTION: [[cap]]\n[[x]]", [("fuzzy", "x")]),
])
def test_links_where_org_parses_objects(body: str, expected: list[tuple[str, str]]) -> None:
    assert one(body) == expected


def test_unterminated_drawer_and_block_are_paragraphs() -> None:
    assert one(":LOGBOOK:\n[[x]]") == [("fuzzy", "x")]
    assert one("#+begin_example\n[[x]]") == [("fuzzy", "x")]


# --------------------------------------------------------------- timestamps

@pytest.mark.parametrize(("raw", "active", "start", "end", "rep", "warn"), [
    ("<2026-11-30 Mon>", True, dt.datetime(2026, 11, 30), None, None, None),
    ("[2026-11-30 lun. 14:05]", False, dt.datetime(2026, 11, 30, 14, 5), None, None, None),
    ("<2026-11-30 10:00-11:30>", True, dt.datetime(2026, 11, 30, 10), dt.datetime(2026, 11, 30, 11, 30), None, None),
    ("<2026-11-30 Mon>--<2026-12-02 Wed>", True, dt.datetime(2026, 11, 30), dt.datetime(2026, 12, 2), None, None),
    ("<2026-11-30 Mon +1w>", True, dt.datetime(2026, 11, 30), None, "+1w", None),
    ("<2026-11-30 Mon ++1d -2d>", True, dt.datetime(2026, 11, 30), None, "++1d", "-2d"),
    ("<2026-11-30 Mon .+2d/3d --1d>", True, dt.datetime(2026, 11, 30), None, ".+2d/3d", "--1d"),
    ("<2026-11-30 Mon]", True, dt.datetime(2026, 11, 30), None, None, None),
])
def test_parse_timestamp(raw, active, start, end, rep, warn) -> None:
    ts = parse_timestamp(raw)
    assert ts is not None
    assert (ts.raw, ts.active, ts.start, ts.end, ts.repeater, ts.warning) == (
        raw, active, start, end, rep, warn)


@pytest.mark.parametrize("raw", ["", "<2026-1-30>", "2026-11-30", "<%%(diary-float t 4 2)>", "<x>"])
def test_parse_timestamp_rejects(raw: str) -> None:
    assert parse_timestamp(raw) is None


def test_format_timestamp() -> None:
    assert format_timestamp(dt.date(2026, 11, 30)) == "<2026-11-30 Mon>"
    assert format_timestamp(dt.datetime(2026, 11, 30, 14, 5), active=False,
                            with_time=True) == "[2026-11-30 Mon 14:05]"
    assert format_timestamp(dt.date(2026, 11, 30), repeater="+1w") == "<2026-11-30 Mon +1w>"
    for v in (dt.date(2026, 1, 1), dt.datetime(2026, 2, 3, 4, 5)):
        assert parse_timestamp(format_timestamp(v, with_time=True)).start.date() == \
            (v if isinstance(v, dt.date) and not isinstance(v, dt.datetime) else v.date())


def test_body_timestamps_exclude_planning() -> None:
    h = parse("* h <2026-01-01>\nSCHEDULED: <2026-01-02>\nat [2026-01-03 Sat] =<2026-01-04>=\n").headings[0]
    assert [ts.start.day for ts in h.timestamps] == [1, 3]
