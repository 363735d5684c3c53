"""Parse Org text into :class:`OrgDocument`: headlines, sections, links, keywords.

The pipeline is line-oriented and linear: find headlines (``^\\*+ ``), scan each
section's elements (elements.py), derive file settings from the keywords
(settings.py), then lex the object containers for links and timestamps
(objects.py).  CRLF files are parsed on an LF copy; spans are mapped back to
the real text so they can be used for byte-exact write-back.
"""

from __future__ import annotations

import bisect
import os
import re
from itertools import accumulate

from .elements import CELL, NOLB, ROW, Container, ElementScanner, PropertyDrawer
from .headline import HeadlineParts, parse_headline_line, parse_planning_line
from .links import LinkSyntax
from .model import Heading, Link, OrgDocument, Timestamp
from .objects import CELL as CELL_SET
from .objects import NO_LINE_BREAK, STANDARD, ObjectLexer, build_radio_regexp
from .settings import FileSettings, compute_settings

__all__ = ["parse", "parse_bytes", "parse_file"]

_SURROGATE = re.compile(r"[\udc80-\udcff]+")
_LEAD_BLANK = re.compile(r"\A(?:[ \t]*\n)+")
_SYNTAX = LinkSyntax.build()
_KIND_SETS = {"std": STANDARD, NOLB: NO_LINE_BREAK, CELL: CELL_SET}


class _Text:
    """The LF-normalised text, its lines, and the map back to real offsets."""

    def __init__(self, text: str) -> None:
        self.real_len = len(text)
        if "\r\n" in text:
            parts = text.split("\r\n")
            self.norm = "\n".join(parts)
            # norm index of each "\n" that replaced a "\r\n"
            self.crlf = [x - 1 for x in accumulate(map((1).__add__, map(len, parts[:-1])))]
        else:
            self.norm = text
            self.crlf = []
        self.lines = self.norm.split("\n")
        self.starts = [0, *accumulate(map((1).__add__, map(len, self.lines[:-1])))]

    def real(self, off: int) -> int:
        """Offset in the real text of an offset in the normalised text."""
        if not self.crlf:
            return off
        return off + bisect.bisect_left(self.crlf, off)

    def line_start(self, i: int) -> int:
        """Normalised offset of line ``i`` (len(norm) past the end)."""
        return self.starts[i] if i < len(self.starts) else len(self.norm)


def _headline_lines(t: _Text) -> list[int]:
    """Line numbers matching ``^\\*+ `` (a per-line first-char test beats a regexp scan)."""
    return [
        i for i, ln in enumerate(t.lines)
        if ln[:1] == "*" and ln.lstrip("*")[:1] == " "
    ]


def _read_setup_keywords(path: str) -> list[tuple[str, str]] | None:
    """Keyword elements of a #+SETUPFILE (None when unreadable)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    t = _Text(data.decode("utf-8", "surrogateescape"))
    sc = _scan(t, _headline_lines(t))[0]
    return [(k.key, k.value) for k in sc.keywords]


class _Section:
    """Where a headline's section parts are (line numbers, normalised text)."""

    __slots__ = ("body_line", "containers", "drawer", "planning_line")

    def __init__(self) -> None:
        self.planning_line: int | None = None
        self.drawer: PropertyDrawer | None = None
        self.body_line = 0
        self.containers: tuple[int, int] = (0, 0)


def _scan(t: _Text, heads: list[int]) -> tuple[ElementScanner, list[_Section], tuple[int, int]]:
    """Element pass over the whole document."""
    sc = ElementScanner(t.norm, t.lines, t.starts)
    nlines = len(t.lines)
    first_end = heads[0] if heads else nlines
    sc.first_section(0, first_end)
    pre = (0, len(sc.containers))
    sections: list[_Section] = []
    lines = t.lines
    for k, h in enumerate(heads):
        b = heads[k + 1] if k + 1 < len(heads) else nlines
        a = h + 1
        sec = _Section()
        c0 = len(sc.containers)
        i = a
        if sc.planning_at(a, b):
            sec.planning_line = a
            i = a + 1
            j = i
            while j < b and not lines[j].strip(" \t"):
                j += 1
            if j == i:
                sec.drawer = sc.property_drawer_at(i, b)
        else:
            sec.drawer = sc.property_drawer_at(a, b)
        if sec.drawer is not None:
            i = sec.drawer.end_line + 1
        sec.body_line = i
        sc.elements(i, b, 0)
        sec.containers = (c0, len(sc.containers))
        sections.append(sec)
    return sc, sections, pre


def _lex_containers(lexer: ObjectLexer, text: str, containers: list[Container]) -> None:
    if not containers or not lexer.may_hold(text, containers[0].beg, containers[-1].end):
        return
    for c in containers:
        if c.kind == ROW:
            lexer.lex_row(text, c.beg, c.end)
        else:
            lexer.lex(text, c.beg, c.end, _KIND_SETS[c.kind])


def _level(stars: int, odd: bool) -> int:
    return stars // 2 + 1 if odd else stars


def parse(text: str, path: str | None = None) -> OrgDocument:
    """Parse Org ``text`` (str as decoded from the file) into an :class:`OrgDocument`."""
    t = _Text(text)
    heads = _headline_lines(t)
    sc, sections, pre = _scan(t, heads)

    doc = OrgDocument(text=text, path=path)
    for kw in sc.keywords:
        doc.keywords.setdefault(kw.key, []).append(kw.value)
    settings = compute_settings(((k.key, k.value) for k in sc.keywords), path,
                                _read_setup_keywords)
    doc.todo_keywords = list(settings.todo_keywords)
    doc.done_keywords = list(settings.done_keywords)

    radio = None
    if "<<<" in t.norm:
        radio = _radio_targets(t, sc, heads, settings)
    lexer = ObjectLexer(_SYNTAX, settings.link_abbrevs, radio)

    def lex_range(c0: int, c1: int) -> None:
        _lex_containers(lexer, t.norm, sc.containers[c0:c1])

    lex_range(*pre)
    doc.preamble_links = _map_links(lexer.links, t)
    doc.preamble_end = t.real(t.line_start(heads[0])) if heads else len(text)

    todo_kws = settings.all_todo
    stack: list[tuple[int, int]] = []  # (stars, index) of open ancestors
    for k, h in enumerate(heads):
        sec = sections[k]
        line = t.lines[h]
        hp = parse_headline_line(line, todo_kws)
        lexer.links, lexer.stamps = [], []
        base = t.starts[h]
        lexer.lex(t.norm, base + hp.title_span[0], base + hp.title_span[1], NO_LINE_BREAK)
        lex_range(*sec.containers)
        next_line = heads[k + 1] if k + 1 < len(heads) else len(t.lines)
        heading = _make_heading(k, h, next_line, hp, sec, t, settings, lexer.links, lexer.stamps)
        while stack and stack[-1][0] >= hp.stars:
            stack.pop()
        heading.parent = stack[-1][1] if stack else None
        stack.append((hp.stars, k))
        doc.headings.append(heading)
    _subtree_ends(doc.headings, len(text))
    return doc


def _make_heading(k: int, h: int, next_line: int, hp: HeadlineParts, sec: _Section, t: _Text,
                  settings: FileSettings, links: list[Link], stamps: list[Timestamp]) -> Heading:
    """Assemble one :class:`Heading` with its spans mapped to the real text."""
    nl = len(t.lines)
    hd = Heading(
        index=k, level=_level(hp.stars, settings.odd_levels), stars=hp.stars, line=h + 1,
        title=hp.title, todo=hp.todo, priority=hp.priority, tags=hp.tags,
        comment=hp.comment, archived="ARCHIVE" in hp.tags,
    )
    if hp.todo is not None:
        hd.todo_type = "done" if hp.todo in settings.done_keywords else "todo"
    hd.start = t.real(t.starts[h])
    hd.headline_end = t.real(t.starts[h] + len(t.lines[h]))
    hd.end = t.real(t.line_start(next_line)) if next_line < nl else t.real_len
    if sec.planning_line is not None:
        p = sec.planning_line
        hd.planning_span = (t.real(t.starts[p]), _real_line_end(t, p))
        for key, ts in parse_planning_line(t.lines[p]).items():
            if isinstance(ts, Timestamp):
                setattr(hd, key, ts)
    if sec.drawer is not None:
        d = sec.drawer
        hd.drawer_span = (t.real(t.starts[d.begin]), _real_line_end(t, d.end_line))
        hd.properties = list(d.properties)
    hd.body_start = t.real(t.line_start(sec.body_line)) if sec.body_line < nl else t.real_len
    body_end = t.line_start(next_line) if next_line < nl else len(t.norm)
    body_beg = t.line_start(sec.body_line) if sec.body_line < nl else len(t.norm)
    body = t.norm[body_beg:body_end] if body_beg < body_end else ""
    hd.body = _LEAD_BLANK.sub("", body).rstrip(" \t\n\r")
    hd.links = _map_links(links, t)
    hd.timestamps = list(stamps)
    return hd


def _real_line_end(t: _Text, i: int) -> int:
    """Real offset just after line ``i`` and its newline."""
    if i + 1 < len(t.lines):
        return t.real(t.starts[i + 1])
    return t.real_len


def _map_links(links: list[Link], t: _Text) -> list[Link]:
    if t.crlf:
        for lk in links:
            lk.offset = t.real(lk.offset)
    return list(links)


def _subtree_ends(headings: list[Heading], text_len: int) -> None:
    """``subtree_end``: start of the next headline with no more stars (or the end)."""
    stack: list[Heading] = []
    for hd in headings:
        while stack and stack[-1].stars >= hd.stars:
            stack.pop().subtree_end = hd.start
        stack.append(hd)
    for hd in stack:
        hd.subtree_end = text_len


def _radio_targets(
    t: _Text, sc: ElementScanner, heads: list[int], settings: FileSettings
) -> re.Pattern[str] | None:
    """First pass for ``<<<radio>>>`` targets; returns org-target-link-regexp or None."""
    lexer = ObjectLexer(_SYNTAX, settings.link_abbrevs, None)
    _lex_containers(lexer, t.norm,
                    [c for c in sc.containers if t.norm.find("<<<", c.beg, c.end) != -1])
    todo_kws = settings.all_todo
    for h in heads:
        line = t.lines[h]
        if "<<<" in line:
            hp = parse_headline_line(line, todo_kws)
            base = t.starts[h]
            lexer.lex(t.norm, base + hp.title_span[0], base + hp.title_span[1], NO_LINE_BREAK)
    targets: list[str] = []
    for v in reversed(lexer.radio_targets):
        if v not in targets:
            targets.append(v)
    return build_radio_regexp(targets)


def parse_bytes(data: bytes, path: str | None = None) -> OrgDocument:
    """Parse raw file bytes; invalid UTF-8 and NUL bytes are recorded in ``errors``, not fatal."""
    text = data.decode("utf-8", "surrogateescape")
    errors: list[str] = []
    if not text.isascii():
        bad = list(_SURROGATE.finditer(text))
        if bad:
            first = len(text[: bad[0].start()].encode("utf-8", "surrogateescape"))
            count = sum(m.end() - m.start() for m in bad)
            errors.append(f"invalid UTF-8 at byte {first} ({count} invalid bytes)")
    nul = text.count("\x00")
    if nul:
        first = len(text[: text.index("\x00")].encode("utf-8", "surrogateescape"))
        errors.append(f"NUL bytes: {nul} (first at byte {first})")
    doc = parse(text, path)
    doc.errors[:0] = errors
    return doc


def parse_file(path: str | os.PathLike[str]) -> OrgDocument:
    """Read and parse an Org file."""
    p = os.fspath(path)
    with open(p, "rb") as fh:
        data = fh.read()
    return parse_bytes(data, p)
