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
from itertools import accumulate, compress, repeat
from operator import add, attrgetter

from .elements import CELL, NOLB, ROW, Container, ElementScanner, property_drawer_in
from .headline import _TAGS, headline_regexp, parse_planning_line, split_headline
from .links import LinkSyntax
from .model import Heading, Link, OrgDocument, Timestamp
from .objects import CELL as CELL_SET
from .objects import NO_LINE_BREAK, STANDARD, ObjectLexer, build_radio_regexp
from .settings import FileSettings, compute_settings

__all__ = ["parse", "parse_bytes", "parse_file"]

_SURROGATE = re.compile(r"[\udc80-\udcff]+")
_LEAD_BLANK = re.compile(r"(?:[ \t]*\n)+")
# a section of one paragraph (group 1: its lines, with the last newline if any)
_ONE_PARA = re.compile(
    r"(?:[ \t]*\n)*+((?:[ \t]*[^ \t\n][^\n]*(?:\n|\Z))++)(?:[ \t]*\n)*+[ \t]*\Z"
)
# blank lines before a paragraph; group 1 when nothing but blanks is left
_PARA_START = re.compile(r"(?:[ \t]*\n)*(?:([ \t]*\Z))?")
# the newline ending a paragraph's last line (a blank line or the end follows);
# group 1 when nothing but blank lines follows
_PARA_STOP = re.compile(r"\n(?=[ \t]*(?:\n|\Z))((?:[ \t]*\n)*[ \t]*\Z)?")
_SYNTAX = LinkSyntax.build()
_BEG = attrgetter("beg")
_END = attrgetter("end")
_KIND_SETS = {"std": STANDARD, NOLB: NO_LINE_BREAK, CELL: CELL_SET}
# headline starts after the first line (the first line is tested on its own)
_HEADLINE = re.compile(r"\n(?=\*+ )")
_match_end = re.Match.end
_FIRST_HEADLINE = re.compile(r"\*+ ")
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):", re.I)
_PLANNING_FIRST = frozenset(" \tCDScds\u017f")  # and long s, which folds to S under re.I
_DRAWER_FIRST = frozenset(" \t:")
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


def _line_starts(lines: list[str]) -> list[int]:
    """Offset of each line in the text they were split from (by "\n"): a running sum
    of len + 1, all in C (operator.add by map is cheaper than (1).__add__)."""
    return list(accumulate(map(add, map(len, lines[:-1]), repeat(1)), initial=0))


class _Text:
    """The LF-normalised text, its lines (made on demand), and the map back to real offsets."""

    __slots__ = ("_lines", "_starts", "crlf", "norm", "real_len")

    def __init__(self, text: str) -> None:
        self.real_len = len(text)
        if "\r" in text and "\r\n" in text:  # (one char is found by memchr)
            parts = text.split("\r\n")
            self.norm = "\n".join(parts)
            # norm index of each "\n" that replaced a "\r\n"
            self.crlf = [x - 1 for x in accumulate(map((1).__add__, map(len, parts[:-1])))]
        else:
            self.norm = text
            self.crlf = []
        self._lines: list[str] | None = None
        self._starts: list[int] = []

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.norm.split("\n")
            self._starts = _line_starts(self._lines)
        return self._lines

    @property
    def starts(self) -> list[int]:
        """Normalised offset of each line."""
        if self._lines is None:
            self.lines  # noqa: B018 (computes both)
        return self._starts

    def line_of(self, off: int) -> int:
        """Index of the line starting at ``off`` (len(lines) for len(norm) past a newline)."""
        if off >= len(self.norm):
            return len(self.lines)
        return bisect.bisect_left(self.starts, off)

    def real(self, off: int) -> int:
        """Offset in the real text of an offset in the normalised text."""
        if not self.crlf:
            return off
        return off + bisect.bisect_left(self.crlf, off)


def _headline_offsets(norm: str) -> list[int]:
    """Offsets of the lines matching ``^\\*+ `` (one C-speed regexp scan for ``\\n*+ ``)."""
    out = [0] if norm[:1] == "*" and _FIRST_HEADLINE.match(norm) else []
    if "\n*" in norm:
        out.extend(map(_match_end, _HEADLINE.finditer(norm)))
    return out


def _read_setup_keywords(path: str) -> list[tuple[str, str]] | None:
    """Keyword elements of a #+SETUPFILE (None when unreadable)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    t = _Text(data.decode("utf-8", "surrogateescape"))
    sc = _scan(t, _headline_offsets(t.norm), True)[0]
    return [(k.key, k.value) for k in sc.keywords] if sc is not None else []


# One section, as offsets into the normalised text:
# (headline start, headline end (its newline), planning line start | None,
#  planning line end, properties | None, drawer start, drawer end, body start,
#  section end, containers (c0, c1) of the element scanner | None for plain prose)
_Section = tuple[
    int, int, "int | None", int, "list[tuple[str, str]] | None", int, int, int, int,
    "tuple[int, int] | None",
]


def _scan(
    t: _Text, heads: list[int], fast: bool
) -> tuple[ElementScanner | None, list[_Section], tuple[int, int]]:
    """Element pass over the whole document.

    Headline, planning line and property drawer are found by offsets; sections
    that are plain prose (``fast``) need nothing more.  Other sections, and the
    text before the first headline, go through the element scanner, which
    records their object containers and keywords.
    """
    norm = t.norm
    n_norm = len(norm)
    find = norm.find
    planning = _PLANNING.match
    not_prose = _NOT_PROSE.search
    nheads = len(heads)
    recs: list[_Section] = []
    complex_secs: list[int] = []
    for k in range(nheads):
        off = heads[k]
        sec_end = heads[k + 1] if k + 1 < nheads else n_norm
        e = find("\n", off, sec_end)
        if e == -1:
            e = sec_end  # the last line, without newline
        i = e + 1  # start of the next line, if any in the section
        pl = None
        pl_end = 0
        props = None
        d_beg = d_end = 0
        if i < sec_end:
            # (first-character tests spare the regexps most of the time)
            if norm[i] in _PLANNING_FIRST and planning(norm, i):
                pl = i
                pe = find("\n", i, sec_end)
                i = pl_end = pe + 1 if pe != -1 else n_norm + 1
            if i < sec_end and norm[i] in _DRAWER_FIRST:
                got = property_drawer_in(norm, i, sec_end)
                if got is not None:
                    props, _, d_end = got
                    d_beg = i
                    i = d_end
        body_beg = i if i < sec_end else sec_end
        if pl is not None and pl_end > n_norm:
            pl_end = n_norm
        if body_beg < sec_end and (not fast or not_prose(norm, body_beg - 1, sec_end) is not None):
            complex_secs.append(k)  # containers filled in below
        recs.append((off, e, pl, pl_end, props, d_beg, d_end, body_beg, sec_end, None))

    sc: ElementScanner | None = None
    pre = (0, 0)
    first_end = heads[0] if heads else n_norm
    if complex_secs or not heads or not fast:
        lines, starts = t.lines, t.starts
        sc = ElementScanner(norm, lines, starts)
        sc.first_section(0, t.line_of(first_end) if heads else len(lines))
        pre = (0, len(sc.containers))
        containers = sc.containers
        line_of = t.line_of
        for k in complex_secs:
            rec = recs[k]
            c0 = len(containers)
            b = rec[8]
            sc.elements(line_of(rec[7]), line_of(b) if b < n_norm else len(lines), 0)
            recs[k] = (*rec[:9], (c0, len(containers)))
    elif first_end > 0:
        # only the text before the first headline: scan it as a document of its own
        # (the scanner never looks at or past its limit line)
        sub = norm[:first_end]
        lines = sub.split("\n")
        starts = _line_starts(lines)
        sc = ElementScanner(sub, lines, starts)
        sc.first_section(0, len(lines) - 1)
        pre = (0, len(sc.containers))
    return sc, recs, pre


def _lex_containers(lexer: ObjectLexer, text: str, containers: list[Container]) -> None:
    if not containers:
        return
    may_hold = lexer.may_hold
    if not may_hold(text, containers[0].beg, containers[-1].end):
        return
    if len(containers) == 1:  # the test above was its own
        c = containers[0]
        if c.kind == ROW:
            lexer.lex_row(text, c.beg, c.end)
        else:
            lexer.lex_held(text, c.beg, c.end, _KIND_SETS[c.kind])
        return
    lex_held = lexer.lex_held
    for c in containers:
        # ObjectLexer.lex, inlined (a container is never empty: ElementScanner adds
        # only beg < end)
        if c.kind == ROW:
            lexer.lex_row(text, c.beg, c.end)
        elif may_hold(text, c.beg, c.end):
            lex_held(text, c.beg, c.end, _KIND_SETS[c.kind])


def _lex_prose(lexer: ObjectLexer, text: str, beg: int, end: int) -> None:
    """Lex a plain-prose section ``text[beg:end]`` (whole lines): its paragraphs.

    Paragraphs are the runs of non-blank lines; each container reaches just past
    the newline of its last line, like ElementScanner._paragraph (one past the
    end of the text when the last line has no newline).  The caller has seen
    ``lexer.may_hold`` true for the section, so a lone paragraph skips that test.
    """
    m = _ONE_PARA.match(text, beg, end)
    if m is not None:  # the usual case: one paragraph, blank lines around it
        stop = m.end(1)
        lexer.lex_held(text, m.start(1), stop if text[stop - 1] == "\n" else stop + 1, STANDARD)
        return
    para_start = _PARA_START.match
    para_stop = _PARA_STOP.search
    m = para_start(text, beg, end)
    if m.group(1) is not None:  # type: ignore[union-attr]  # always matches
        return
    beg = m.end()  # type: ignore[union-attr]
    first = True
    while True:
        m = para_stop(text, beg, end)
        if m is None:
            stop, last = end + 1, True
        else:
            stop, last = m.start() + 1, m.group(1) is not None
        if first and last:
            lexer.lex_held(text, beg, stop, STANDARD)
            return
        first = False
        lexer.lex(text, beg, stop, STANDARD)
        if last:
            return
        m = para_start(text, stop, end)
        if m.group(1) is not None:  # type: ignore[union-attr]
            return
        beg = m.end()  # type: ignore[union-attr]


def parse(text: str, path: str | None = None) -> OrgDocument:
    """Parse Org ``text`` (str as decoded from the file) into an :class:`OrgDocument`."""
    t = _Text(text)
    norm = t.norm
    heads = _headline_offsets(norm)
    radio_doc = "<<<" in norm
    sc, sections, pre = _scan(t, heads, True)
    keywords = sc.keywords if sc is not None else []

    doc = OrgDocument(text=text, path=path)
    doc.clock_lines = [i + 1 for i in sc.clock_lines] if sc is not None else []
    for kw in keywords:
        doc.keywords.setdefault(kw.key, []).append(kw.value)
    settings = compute_settings(((k.key, k.value) for k in keywords), path,
                                _read_setup_keywords)
    doc.todo_keywords = list(settings.todo_keywords)
    doc.done_keywords = list(settings.done_keywords)
    head_re = headline_regexp(tuple(settings.all_todo))

    radio = None
    if radio_doc:
        radio = _radio_targets(norm, sc, sections, pre, head_re, settings)
    lexer = ObjectLexer(_SYNTAX, settings.link_abbrevs, radio)
    containers = sc.containers if sc is not None else []

    _lex_containers(lexer, norm, containers[pre[0]:pre[1]])
    doc.preamble_links = _map_links(lexer.links, t)
    doc.preamble_end = t.real(heads[0]) if heads else len(text)

    done_kws = settings.done_keywords
    odd = settings.odd_levels
    crlf = bool(t.crlf)
    real = t.real
    lead_blank = _LEAD_BLANK.match
    lex = lexer.lex
    may_hold = lexer.may_hold
    count = norm.count
    head_match = head_re.match
    tags_search = _TAGS.search
    headings: list[Heading] = []
    append = headings.append
    # open ancestors: (stars, index, heading); a heading popped off has its subtree end
    stack: list[tuple[int, int, Heading]] = []
    line_no = 1
    prev = 0
    for k, (off, e, pl, pl_end, props, d_beg, d_end, body_beg, end_n, cspan) in enumerate(sections):
        line_no += count("\n", prev, off)
        prev = off
        # headline.split_headline, inlined (a call and a tuple less per headline)
        hm = head_match(norm, off, e)
        stars_s, todo, priority, comment_s = hm.groups()  # type: ignore[union-attr]
        stars = len(stars_s)
        comment = comment_s is not None
        if not todo:
            todo = None
        # without keyword, cookie or COMMENT, the title starts right after the stars
        title_start = hm.end() if (todo or priority or comment) else off + stars  # type: ignore[union-attr]
        tags: list[str] = []
        title_end = e
        if norm[e - 1] == ":" or (norm[e - 1] in " \t" and norm[off:e].rstrip(" \t")[-1:] == ":"):
            tm = tags_search(norm, title_start, e)
            if tm:
                tags = [x for x in tm.group(1).split(":") if x]
                title_end = tm.start()
        raw = norm[title_start:title_end]
        title = raw.strip(" \t")  # the span of title objects
        ts0 = title_end - len(raw.lstrip(" \t"))
        te0 = ts0 + len(title)
        if "\r" in title:
            title = title.strip(_TRIM)
        links: list[Link] = []
        stamps: list[Timestamp] = []
        lexer.links, lexer.stamps = links, stamps
        # ("<", "[" or ":" is needed by ObjectLexer.may_hold, which lex() asks first)
        if ts0 < te0 and ("[" in title or "<" in title or ":" in title or radio is not None):
            lex(norm, ts0, te0, NO_LINE_BREAK)
        if cspan is not None:
            _lex_containers(lexer, norm, containers[cspan[0]:cspan[1]])
        elif body_beg < end_n and may_hold(norm, body_beg, end_n):
            _lex_prose(lexer, norm, body_beg, end_n)

        scheduled = deadline = closed = None
        planning_span = drawer_span = None
        if pl is not None:
            for key, ts in parse_planning_line(norm[pl:pl_end].rstrip("\n")).items():
                if isinstance(ts, Timestamp):
                    if key == "scheduled":
                        scheduled = ts
                    elif key == "deadline":
                        deadline = ts
                    else:
                        closed = ts
            planning_span = (pl, pl_end)
        if props is not None:
            drawer_span = (d_beg, d_end)
        else:
            props = []
        body = ""
        if body_beg < end_n:
            if norm[body_beg] in " \t\n":
                m = lead_blank(norm, body_beg, end_n)
                body = norm[m.end() if m else body_beg:end_n].rstrip(_TRIM)
            else:
                body = norm[body_beg:end_n].rstrip(_TRIM)
        start, headline_end, body_start = off, e, body_beg
        if crlf:
            start, headline_end, body_start, end_n = real(off), real(e), real(body_beg), real(end_n)
            if planning_span is not None:
                planning_span = (real(planning_span[0]), real(planning_span[1]))
            if drawer_span is not None:
                drawer_span = (real(d_beg), real(d_end))
            for lk in links:
                lk.offset = real(lk.offset)
        while stack and stack[-1][0] >= stars:
            stack.pop()[2].subtree_end = start
        parent = stack[-1][1] if stack else None
        # positional: keyword arguments cost 3x more here (order checked at import)
        hd = Heading(
            k, stars // 2 + 1 if odd else stars, stars, line_no, title, todo,
            None if todo is None else "done" if todo in done_kws else "todo",
            priority, tags, comment, "ARCHIVE" in tags, props,
            scheduled, deadline, closed, body, links, stamps, parent,
            start, headline_end, end_n, 0, planning_span, drawer_span, body_start,
        )
        stack.append((stars, k, hd))
        append(hd)
    for _, _, hd in stack:
        hd.subtree_end = len(text)
    doc.headings = headings
    return doc


def _map_links(links: list[Link], t: _Text) -> list[Link]:
    if t.crlf:
        for lk in links:
            lk.offset = t.real(lk.offset)
    return list(links)


def _radio_targets(
    norm: str, sc: ElementScanner | None, sections: list[_Section], pre: tuple[int, int],
    head_re: re.Pattern[str], settings: FileSettings,
) -> re.Pattern[str] | None:
    """First pass for ``<<<radio>>>`` targets; returns org-target-link-regexp or None.

    Object containers are lexed in document order (the preamble's, then each
    section's: the scanner's containers, or the paragraphs of a plain-prose
    section), then the headline titles, as a whole-document scan would meet them.
    """
    lexer = ObjectLexer(_SYNTAX, settings.link_abbrevs, None)
    cs = sc.containers if sc is not None else []
    find = norm.find
    # every "<<<" (overlapping ones too: a run of n "<" is n - 2 of them, linear), so
    # that a span is tested by one bisection instead of a search per container
    opens: list[int] = []
    i = find("<<<")
    while i != -1:
        opens.append(i)
        i = find("<<<", i + 1)
    n_opens = len(opens)

    def holds(beg: int, end: int) -> bool:
        """``find("<<<", beg, end) != -1``: the first "<<<" at or after beg ends by end."""
        k = bisect.bisect_left(opens, beg)
        return k < n_opens and opens[k] + 3 <= end

    def lex_holding(sub: list[Container]) -> None:
        # those holding "<<<" (the finds run in C, called by map)
        found = map(find, repeat("<<<"), map(_BEG, sub), map(_END, sub))
        _lex_containers(lexer, norm, list(compress(sub, map((-1).__ne__, found))))

    lex_holding(cs[pre[0]:pre[1]])
    for sec in sections:
        cspan, body_beg, end = sec[9], sec[7], sec[8]
        if not holds(body_beg, end):
            continue
        if cspan is not None:
            lex_holding(cs[cspan[0]:cspan[1]])
        elif body_beg < end:
            _lex_prose(lexer, norm, body_beg, end)
    for sec in sections:
        off, e = sec[0], sec[1]
        if holds(off, e):
            ts0, te0 = split_headline(norm[off:e], head_re)[6]
            lexer.lex(norm, off + ts0, off + te0, NO_LINE_BREAK)
    targets: list[str] = []
    for v in reversed(lexer.radio_targets):
        if v not in targets:
            targets.append(v)
    return build_radio_regexp(targets)


def parse_bytes(data: bytes, path: str | None = None) -> OrgDocument:
    """Parse raw file bytes; invalid UTF-8 and NUL bytes are recorded in ``errors``, not fatal."""
    errors: list[str] = []
    try:  # valid UTF-8 (the usual case) decodes to no surrogates: nothing to look for
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        bad = list(_SURROGATE.finditer(text))
        if bad:
            first = len(text[: bad[0].start()].encode("utf-8", "surrogateescape"))
            count = sum(m.end() - m.start() for m in bad)
            errors.append(f"invalid UTF-8 at byte {first} ({count} invalid bytes)")
    nul = text.count("\x00") if "\x00" in text else 0
    if nul:
        first = len(text[: text.index("\x00")].encode("utf-8", "surrogateescape"))
        errors.append(f"NUL bytes: {nul} (first at byte {first})")
    doc = parse(text, path)
    doc.errors[:0] = errors
    return doc


def parse_file(path: str | os.PathLike[str]) -> OrgDocument:
    """Read and parse an Org file."""
    from ..regular import read_regular

    p = os.fspath(path)
    return parse_bytes(read_regular(p), p)  # a FIFO raises OSError instead of blocking
