"""Parse Org text into :class:`OrgDocument`: headlines, sections, links, keywords.

The pipeline is line-oriented and linear: find headlines (``^\\*+ ``), scan each
section's elements (elements.py), derive file settings from the keywords
(settings.py), then lex the object containers for links and timestamps
(objects.py).  CRLF files are parsed on an LF copy; spans are mapped back to
the real text so they can be used for byte-exact write-back.

Speed: most sections of a real memex are plain prose -- no line starts with a
character that can open an element (``#``, ``:``, ``|``, ``-``, ``+``, ``*``, a
digit bullet, ``CLOCK:``...).  Such a section is a run of paragraphs separated
by blank lines, which one regexp ``search`` per section establishes; those
paragraphs are lexed for objects only when a cheap test finds a link or
timestamp trigger in them.  Other sections go through the full element scanner.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import fields
from itertools import accumulate

from .elements import CELL, NOLB, ROW, Container, ElementScanner, PropertyDrawer
from .headline import headline_regexp, parse_headline_line, parse_planning_line, split_headline
from .links import LinkSyntax
from .model import Heading, Link, OrgDocument, Timestamp
from .objects import CELL as CELL_SET
from .objects import NO_LINE_BREAK, STANDARD, ObjectLexer, build_radio_regexp
from .settings import compute_settings

__all__ = ["parse", "parse_bytes", "parse_file"]

_SURROGATE = re.compile(r"[\udc80-\udcff]+")
_LEAD_BLANK = re.compile(r"(?:[ \t]*\n)+")
_SYNTAX = LinkSyntax.build()
_KIND_SETS = {"std": STANDARD, NOLB: NO_LINE_BREAK, CELL: CELL_SET}
# headline starts after the first line (the first line is tested on its own)
_HEADLINE = re.compile(r"\n\*+ ")
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):", re.I)
# A line (found from the newline before it) that may be anything but a paragraph
# line: a superset of what ElementScanner dispatches on (``elements``/``_element``)
# or treats as a paragraph separator (``_SEPARATOR``), blank lines excepted.
_NOT_PROSE = re.compile(r"\n[ \t]*(?:[#:|+*%\[\\-]|[0-9]+[.)]|clock:)", re.I)
_TRIM = " \t\n\r"
_HEADING_FIELDS = (
    "index", "level", "stars", "line", "title", "todo", "todo_type", "priority", "tags",
    "comment", "archived", "properties", "scheduled", "deadline", "closed", "body", "links",
    "timestamps", "parent", "start", "headline_end", "end", "subtree_end", "planning_span",
    "drawer_span", "body_start",
)
if tuple(f.name for f in fields(Heading)) != _HEADING_FIELDS:  # parse() builds it positionally
    raise ImportError("opencortex.org.model.Heading fields changed: update parser.parse")


class _Text:
    """The LF-normalised text, its lines, and the map back to real offsets."""

    __slots__ = ("crlf", "lines", "norm", "real_len", "starts")

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
    """Line numbers matching ``^\\*+ `` (one C-speed regexp scan for ``\\n*+ ``)."""
    norm, starts, first = t.norm, t.starts, t.lines[0]
    out = [0] if first[:1] == "*" and first.lstrip("*")[:1] == " " else []
    if "\n*" in norm:
        line_of = bisect.bisect_left
        out.extend(line_of(starts, m.start() + 1) for m in _HEADLINE.finditer(norm))
    return out


def _read_setup_keywords(path: str) -> list[tuple[str, str]] | None:
    """Keyword elements of a #+SETUPFILE (None when unreadable)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    t = _Text(data.decode("utf-8", "surrogateescape"))
    sc = _scan(t, _headline_lines(t), True)[0]
    return [(k.key, k.value) for k in sc.keywords]


# A section: (planning line | None, property drawer | None, body line,
#             containers (c0, c1) of the element scanner, or None for plain prose)
_Section = tuple[int | None, PropertyDrawer | None, int, tuple[int, int] | None]


def _scan(t: _Text, heads: list[int], fast: bool) -> tuple[ElementScanner, list[_Section], tuple[int, int]]:
    """Element pass over the whole document (``fast``: plain-prose sections skip the scanner)."""
    norm, lines, starts = t.norm, t.lines, t.starts
    sc = ElementScanner(norm, lines, starts)
    nlines = len(lines)
    first_end = heads[0] if heads else nlines
    sc.first_section(0, first_end)
    pre = (0, len(sc.containers))
    sections: list[_Section] = []
    containers = sc.containers
    planning = _PLANNING.match
    not_prose = _NOT_PROSE.search
    drawer_at = sc.property_drawer_at
    n_norm = len(norm)
    nheads = len(heads)
    for k in range(nheads):
        h = heads[k]
        b = heads[k + 1] if k + 1 < nheads else nlines
        a = h + 1
        pl: int | None = None
        drawer = None
        i = a
        if a < b:
            if planning(lines[a]):
                pl = a
                i = a + 1
                if i < b and lines[i].strip(" \t"):
                    drawer = drawer_at(i, b)
            else:
                drawer = drawer_at(a, b)
            if drawer is not None:
                i = drawer.end_line + 1
        if i >= b:
            sections.append((pl, drawer, i, None))
            continue
        if fast and not_prose(norm, starts[i] - 1, starts[b] if b < nlines else n_norm) is None:
            sections.append((pl, drawer, i, None))
            continue
        c0 = len(containers)
        sc.elements(i, b, 0)
        sections.append((pl, drawer, i, (c0, len(containers))))
    return sc, sections, pre


def _lex_containers(lexer: ObjectLexer, text: str, containers: list[Container]) -> None:
    if not containers or not lexer.may_hold(text, containers[0].beg, containers[-1].end):
        return
    for c in containers:
        if c.kind == ROW:
            lexer.lex_row(text, c.beg, c.end)
        else:
            lexer.lex(text, c.beg, c.end, _KIND_SETS[c.kind])


def _lex_prose(lexer: ObjectLexer, t: _Text, i: int, b: int) -> None:
    """Lex lines [i, b) of a plain-prose section: paragraphs between blank lines."""
    lines, starts, norm = t.lines, t.starts, t.norm
    end = starts[b] if b < len(starts) else len(norm)
    if not lexer.may_hold(norm, starts[i], end):
        return
    k = i
    while k < b:
        if not lines[k].strip(" \t"):
            k += 1
            continue
        j = k + 1
        while j < b and lines[j].strip(" \t"):
            j += 1
        # like ElementScanner._paragraph: up to and including the last line's newline
        lexer.lex(norm, starts[k], starts[j - 1] + len(lines[j - 1]) + 1, STANDARD)
        k = j


def _level(stars: int, odd: bool) -> int:
    return stars // 2 + 1 if odd else stars


def parse(text: str, path: str | None = None) -> OrgDocument:
    """Parse Org ``text`` (str as decoded from the file) into an :class:`OrgDocument`."""
    t = _Text(text)
    norm, lines, starts = t.norm, t.lines, t.starts
    heads = _headline_lines(t)
    sc, sections, pre = _scan(t, heads, "<<<" not in norm)

    doc = OrgDocument(text=text, path=path)
    for kw in sc.keywords:
        doc.keywords.setdefault(kw.key, []).append(kw.value)
    settings = compute_settings(((k.key, k.value) for k in sc.keywords), path,
                                _read_setup_keywords)
    doc.todo_keywords = list(settings.todo_keywords)
    doc.done_keywords = list(settings.done_keywords)

    radio = None
    if "<<<" in norm:
        radio = _radio_targets(t, sc, heads, settings)
    lexer = ObjectLexer(_SYNTAX, settings.link_abbrevs, radio)
    containers = sc.containers

    _lex_containers(lexer, norm, containers[pre[0]:pre[1]])
    doc.preamble_links = _map_links(lexer.links, t)
    doc.preamble_end = t.real(t.line_start(heads[0])) if heads else len(text)

    head_re = headline_regexp(tuple(settings.all_todo))
    done_kws = settings.done_keywords
    odd = settings.odd_levels
    crlf = bool(t.crlf)
    real = t.real
    nl = len(lines)
    n_norm = len(norm)
    real_len = t.real_len
    lead_blank = _LEAD_BLANK.match
    lex = lexer.lex
    headings: list[Heading] = []
    append = headings.append
    stack: list[tuple[int, int]] = []  # (stars, index) of open ancestors
    nheads = len(heads)
    for k in range(nheads):
        h = heads[k]
        pl, drawer, body_line, cspan = sections[k]
        line = lines[h]
        stars, title, todo, priority, comment, tags, (ts0, te0) = split_headline(line, head_re)
        links: list[Link] = []
        stamps: list[Timestamp] = []
        lexer.links, lexer.stamps = links, stamps
        base = starts[h]
        if ts0 < te0:
            lex(norm, base + ts0, base + te0, NO_LINE_BREAK)
        next_line = heads[k + 1] if k + 1 < nheads else nl
        if cspan is not None:
            _lex_containers(lexer, norm, containers[cspan[0]:cspan[1]])
        elif body_line < next_line:
            _lex_prose(lexer, t, body_line, next_line)

        end_n = starts[next_line] if next_line < nl else n_norm
        body_beg = starts[body_line] if body_line < nl else n_norm
        scheduled = deadline = closed = None
        planning_span = drawer_span = None
        if pl is not None:
            for key, ts in parse_planning_line(lines[pl]).items():
                if isinstance(ts, Timestamp):
                    if key == "scheduled":
                        scheduled = ts
                    elif key == "deadline":
                        deadline = ts
                    else:
                        closed = ts
            planning_span = (starts[pl], starts[pl + 1] if pl + 1 < nl else n_norm)
        if drawer is not None:
            properties = list(drawer.properties)
            e = drawer.end_line + 1
            drawer_span = (starts[drawer.begin], starts[e] if e < nl else n_norm)
        else:
            properties = []
        body = ""
        if body_beg < end_n:
            m = lead_blank(norm, body_beg, end_n)
            body = norm[m.end() if m else body_beg:end_n].rstrip(_TRIM)
        while stack and stack[-1][0] >= stars:
            stack.pop()
        parent = stack[-1][1] if stack else None
        stack.append((stars, k))
        start, headline_end, body_start = base, base + len(line), body_beg
        if crlf:
            start, headline_end = real(base), real(base + len(line))
            end_n = real(end_n) if next_line < nl else real_len
            if planning_span is not None:
                planning_span = (real(planning_span[0]), real(planning_span[1]))
            if drawer_span is not None:
                drawer_span = (real(drawer_span[0]), real(drawer_span[1]))
            body_start = real(body_beg) if body_line < nl else real_len
            for lk in links:
                lk.offset = real(lk.offset)
        # positional: keyword arguments cost 3x more here (order checked at import)
        append(Heading(
            k, stars // 2 + 1 if odd else stars, stars, h + 1, title, todo,
            None if todo is None else "done" if todo in done_kws else "todo",
            priority, tags, comment, "ARCHIVE" in tags, properties,
            scheduled, deadline, closed, body, links, stamps, parent,
            start, headline_end, end_n, 0, planning_span, drawer_span, body_start,
        ))
    doc.headings = headings
    _subtree_ends(headings, len(text))
    return doc


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
    t: _Text, sc: ElementScanner, heads: list[int], settings
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
