"""Element scanner: which parts of a section hold objects, and the keywords.

A line-oriented port of ``org-element--current-element`` and the element
parsers of Org 9.5.5, keeping only what decides *where objects are parsed*
(paragraphs, verse blocks, table cells, item tags) and keyword elements.
Blocks, drawers and LaTeX environments must be closed before the limit or they
are paragraphs; closing lines are found through per-document indexes, so
unterminated openers cost O(log n) each instead of a rescan.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import compress, count

__all__ = ["Container", "ElementScanner", "Keyword", "PropertyDrawer", "property_drawer_in"]

# container kinds (restriction sets, see objects.py)
STD, NOLB, CELL, ROW = "std", "nolb", "cell", "row"

_COMMENT = re.compile(r"[ \t]*#(?: |$)")
_CLOCK = re.compile(r"[ \t]*CLOCK:", re.I)
_AFFILIATED = re.compile(
    r"[ \t]*#\+(?:(?:CAPTION|RESULTS)(?:\[.*\])?|DATA|HEADERS?|LABEL|NAME|PLOT|RESNAME|RESULT"
    r"|SOURCE|SRCNAME|TBLNAME|ATTR_[-_A-Za-z0-9]+):[ \t]*",
    re.I,
)
_LATEX_BEGIN = re.compile(r"[ \t]*\\begin\{([A-Za-z0-9*]+)\}")
_DRAWER = re.compile(r"[ \t]*:([\w$%'\-]+):[ \t]*$")
_FIXED = re.compile(r"[ \t]*:(?: |$)")
_HASH_PLUS = re.compile(r"[ \t]*#\+")
# what follows "#+", alternatives in the order Org tests them (by lastindex): 1 a block
# (its name: group 2), 3 a babel call, 4 a dynamic block, 5 keyword-like
_HASH_PLUS_KIND = re.compile(r"(BEGIN_(\S+))|(CALL:)|(BEGIN:? )|(\S+:)", re.I)
_KEYWORD = re.compile(r"[ \t]*#\+(\S*):")
# A "#+KEY:" line that _element would hand straight to _keyword: not an affiliated
# keyword (the look-ahead is _AFFILIATED's alternatives; "#+CAPTION[x]:" and the like
# are excluded by "[" in the key), not a block, dynamic block or babel call (anything
# starting BEGIN or CALL: takes the full path).  Group 1 non-empty is what
# _HASH_PLUS_KIND's ``\S+:`` needs; an empty one (``#+: x``) is a paragraph.
_PLAIN_KEYWORD = re.compile(
    r"[ \t]*#\+(?!(?:(?:CAPTION|RESULTS)(?:\[.*\])?|DATA|HEADERS?|LABEL|NAME|PLOT|RESNAME"
    r"|RESULT|SOURCE|SRCNAME|TBLNAME|ATTR_[-_A-Za-z0-9]+):|BEGIN|CALL:)(\S*):",
    re.I,
)
_FOOTNOTE_DEF = re.compile(r"\[fn:([-_\w]+)\]")
_HR = re.compile(r"[ \t]*-{5,}[ \t]*$")
_TABLE_EL_RULE = re.compile(r"[ \t]*\+(?:-+\+)+[ \t]*$")
_ITEM = re.compile(r"(?:[ \t]*(?:[-+]|[0-9]+[.)])|[ \t]+\*)(?:[ \t]+|$)")
_FULL_ITEM = re.compile(
    r"[ \t]*((?:[-+*]|(?:[0-9]+|[A-Za-z])[.)])(?:[ \t]+|$))"
    r"(?:\[@(?:start:)?([0-9]+|[A-Za-z])\][ \t]*)?"
    r"(?:(\[[ X-]\])(?:[ \t]+|$))?"
    r"(?:(.*)[ \t]+::(?:[ \t]+|$))?"
)
# _FULL_ITEM without the tag group, for lines without "::" (where it cannot match;
# it is the one costly part: ``.*`` backtracks over the whole line)
_FULL_ITEM_NOTAG = re.compile(
    r"[ \t]*((?:[-+*]|(?:[0-9]+|[A-Za-z])[.)])(?:[ \t]+|$))"
    r"(?:\[@(?:start:)?([0-9]+|[A-Za-z])\][ \t]*)?"
    r"(?:(\[[ X-]\])(?:[ \t]+|$))?"
)
_BEGIN_BLOCK = re.compile(r"[ \t]*#\+BEGIN_(\S+)", re.I)
_BEGIN_BLOCK_OR_DYN = re.compile(r"#\+BEGIN(:|_\S+)", re.I)
_SEPARATOR = re.compile(
    r"(?:\*+ |\[fn:[-_\w]+\]|%%\(|[ \t]*(?:$|\||\+(?:-+\+)+[ \t]*$"
    r"|#(?: |$|\+(?:BEGIN_\S+|\S+(?:\[.*\])?:[ \t]*))"
    r"|:(?: |$|[-_\w]+:[ \t]*$)|-{5,}[ \t]*$|\\begin\{([A-Za-z0-9*]+)\}|CLOCK:"
    r"|(?:[-+*]|[0-9]+[.)])(?:[ \t]|$)))",
    re.I,
)
_DUAL_CHECK = re.compile(r"[ \t]*#\+(\S+)\[.*\]:")
_SEP_FIRST = frozenset("*[%|+#:-\\Cc0123456789")
_SEP_OR_BLANK = _SEP_FIRST | {""}
_ITEM_FIRST = frozenset("-+*0123456789")
_RULE_OR_ROW = frozenset("+|")  # what a line _ITEM matches starts with
_TBLFM = re.compile(r"[ \t]*#\+TBLFM: +(.*)[ \t]*$", re.I)
# A property drawer in the text (see property_drawer_in)
_PROPERTY_DRAWER = re.compile(
    r"[ \t]*:PROPERTIES:[ \t]*\n"
    r"((?:(?![ \t]*:END:[ \t]*(?:\n|\Z))[ \t]*:\S+:(?: [^\n]*)?[ \t]*\n)*+)"
    r"[ \t]*:END:[ \t]*(?:\n|\Z)",
    re.I,
)
# "[ \t]*:(\S+):(?:$|[ \t]+(.*?))[ \t]*$" with the value's trailing blanks
# stripped afterwards (the lazy group costs a try per character)
_NODE_PROPERTY = re.compile(r"[ \t]*:(\S+):(?:$|[ \t]+(.*))")
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):", re.I)

_GREATER_BLOCKS = {"CENTER", "QUOTE"}
_OPAQUE_BLOCKS = {"COMMENT", "EXAMPLE", "EXPORT", "SRC"}
MAX_DEPTH = 64  # nesting of greater elements (~6 Python frames each); deeper is scanned flat


@dataclass(slots=True)
class Container:
    """A span of the (LF-normalised) text whose objects Org parses."""

    beg: int
    end: int
    kind: str


@dataclass(slots=True)
class Keyword:
    """A ``#+KEY: value`` keyword element."""

    line: int
    key: str
    value: str


@dataclass(slots=True)
class PropertyDrawer:
    """A property drawer: lines [begin, end_line] inclusive, properties in order."""

    begin: int
    end_line: int
    properties: list[tuple[str, str]] = field(default_factory=list)


def property_drawer_in(text: str, beg: int, end: int) -> tuple[list[tuple[str, str]], int, int] | None:
    r"""The property drawer starting at offset ``beg`` (a line start) and ending
    before ``end``: (properties, its number of lines, offset after it), or None.

    One match over the text: the ``:PROPERTIES:`` line, lines
    ``[ \t]*:\S+:(?: .*)?[ \t]*$`` that are not ``:END:`` lines, then an ``:END:`` line.
    """
    m = _PROPERTY_DRAWER.match(text, beg, end)
    if m is None:
        return None
    body = m.group(1)
    props: list[tuple[str, str]] = []
    n = 2
    if body:
        lines = body.split("\n")
        n += len(lines) - 1
        for line in lines[:-1]:
            nm = _NODE_PROPERTY.match(line)
            if nm:
                key, value = nm.groups()
                props.append((key, value.rstrip(" \t") if value else ""))
    return props, n, m.end()


def _column(line: str) -> int:
    """Indentation column as Emacs counts it (tabs to multiples of 8)."""
    ind = len(line) - len(line.lstrip(" \t"))
    if "\t" not in line[:ind]:
        return ind
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col = (col // 8 + 1) * 8
        else:
            break
    return col


# Closing lines: each opener (its literal start) is found by a C-speed search, kept
# only when it is the first non-blank of its line, and the whole closing-line
# pattern is then matched there once (a pattern opening with ``^[ \t]*`` is tried
# at every position instead).  At most one match per line: linear on any input.
_END_DRAWER = (re.compile(r":END:", re.I), re.compile(r":END:[ \t]*$", re.M | re.I))
_END_BLOCK = (re.compile(r"#\+END_", re.I), re.compile(r"#\+END_(\S+)[ \t]*$", re.M | re.I))
_END_DYNAMIC = (re.compile(r"#\+END", re.I), re.compile(r"#\+END:?[ \t]*$", re.M | re.I))
# \end{name} anywhere on a line, at its end
_END_LATEX = re.compile(r"\\end\{([A-Za-z0-9*]+)\}[ \t]*$", re.M | re.I)


class _EndIndex:
    """Sorted line numbers of closing lines, built lazily with one regexp pass."""

    def __init__(self, text: str, starts: list[int]) -> None:
        self.text = text
        self.starts = starts
        self._cache: dict[str, dict[str, list[int]]] = {}

    def _lines_at_bol(self, kind: str, opener: re.Pattern[str], pattern: re.Pattern[str],
                      named: bool) -> dict[str, list[int]]:
        """Lines of ``^[ \t]*PATTERN`` by upper-cased group 1 (``named``) or "".

        Only the first opener of a line can start such a match (any later one has
        that opener's non-blank characters before it), so the rest of its line is
        skipped: each line costs one look back to its start and at most one match.
        """
        got = self._cache.get(kind)
        if got is None:
            got = {}
            text = self.text
            rfind, find = text.rfind, text.find
            starts = self.starts
            bisect_right = bisect.bisect_right
            line_end = -1  # end of the line of the last opener looked at
            for c in opener.finditer(text):
                ms = c.start()
                if ms < line_end:
                    continue
                line_end = find("\n", ms)
                if line_end == -1:
                    line_end = len(text)
                bol = rfind("\n", 0, ms) + 1
                if bol < ms and text[bol:ms].strip(" \t"):
                    continue
                m = pattern.match(text, ms)
                if m is None:
                    continue
                line = bisect_right(starts, ms) - 1
                key = m.group(1).upper() if named else ""
                lst = got.get(key)
                if lst is None:
                    got[key] = [line]
                elif lst[-1] != line:
                    lst.append(line)
            self._cache[kind] = got
        return got

    def _latex_lines(self) -> dict[str, list[int]]:
        got = self._cache.get("latex")
        if got is None:
            got = {}
            starts = self.starts
            for m in _END_LATEX.finditer(self.text):
                line = bisect.bisect_right(starts, m.start()) - 1
                lst = got.setdefault(m.group(1).upper(), [])
                if not lst or lst[-1] != line:
                    lst.append(line)
            self._cache["latex"] = got
        return got

    def first(self, kind: str, name: str, after: int, before: int) -> int | None:
        """First closing line of ``kind``/``name`` in [after, before), or None."""
        if kind == "drawer":
            d = self._lines_at_bol(kind, *_END_DRAWER, False)
        elif kind == "block":
            d = self._lines_at_bol(kind, *_END_BLOCK, True)
        elif kind == "dynamic":
            d = self._lines_at_bol(kind, *_END_DYNAMIC, False)
        else:
            d = self._latex_lines()
        lst = d.get(name.upper())
        if not lst:
            return None
        k = bisect.bisect_left(lst, after)
        if k < len(lst) and lst[k] < before:
            return lst[k]
        return None


class ElementScanner:
    """Scans sections of one document for object containers and keywords."""

    def __init__(self, text: str, lines: list[str], starts: list[int]) -> None:
        self.text = text
        self.lines = lines
        self.starts = starts
        # first non-blank character of each line ("" when blank): spares the scanner
        # a strip per line visited, and makes the paragraph separators' index
        # (a comprehension beats a regexp pass: most lines have no indentation to strip)
        self.firsts: list[str] = [ln.lstrip(" \t")[:1] for ln in lines]
        self.ends = _EndIndex(text, starts)
        self.containers: list[Container] = []
        self.keywords: list[Keyword] = []
        # item line -> (indentation, end line), shared by nested lists as in Org
        self._items: dict[int, tuple[int, int]] = {}
        # lines that may end a paragraph (blank, or starting like a separator)
        self._sep_lines: list[int] | None = None
        self.clock_lines: list[int] = []
        """0-based lines where org-element makes a clock element."""

    # ------------------------------------------------------------ positions

    def _eol(self, i: int) -> int:
        return self.starts[i] + len(self.lines[i])

    def _add(self, beg: int, end: int, kind: str) -> None:
        if beg < end:
            self.containers.append(Container(beg, end, kind))

    # ------------------------------------------------------------ sections

    def planning_at(self, i: int, limit: int) -> bool:
        return i < limit and _PLANNING.match(self.lines[i]) is not None

    def property_drawer_at(self, i: int, limit: int) -> PropertyDrawer | None:
        """``org-property-drawer-re`` at line ``i``: the drawer with its node properties."""
        if i >= limit or ":" not in self.lines[i]:
            return None
        starts = self.starts
        got = property_drawer_in(
            self.text, starts[i], starts[limit] if limit < len(starts) else len(self.text)
        )
        if got is None:
            return None
        props, nlines, _ = got
        return PropertyDrawer(i, i + nlines - 1, props)

    def first_section(self, a: int, b: int) -> None:
        """Text before the first headline (``top-comment`` mode, then plain elements)."""
        lines, firsts = self.lines, self.firsts
        i = a
        while i < b and not firsts[i]:
            i += 1
        start = i
        while i < b and _COMMENT.match(lines[i]):
            i += 1
        if i > start or i == 0:
            if i > start:
                while i < b and not firsts[i]:
                    i += 1
            prev_blank = i > 0 and not firsts[i - 1]
            if not prev_blank:
                pd = self.property_drawer_at(i, b)
                if pd is not None:
                    i = pd.end_line + 1
        self.elements(i, b, 0)

    # ------------------------------------------------------------ elements

    def elements(self, i: int, limit: int, depth: int) -> None:
        """Parse elements on lines [i, limit), recording containers and keywords."""
        lines, firsts = self.lines, self.firsts
        while i < limit:
            c = firsts[i]
            if not c:
                i += 1
                continue
            if c not in _SEP_FIRST:  # only a paragraph starts so (see _element)
                i = self._paragraph(i, self.starts[i], limit)
                continue
            line = lines[i]
            if c == "#":
                m = _PLAIN_KEYWORD.match(line)
                if m is not None and m.group(1) and "[" not in m.group(1):
                    # what _element -> _hash_plus -> _keyword does for such a line
                    self.keywords.append(
                        Keyword(i, m.group(1).upper(), line[m.end() :].strip(" \t\r\n"))
                    )
                    i += 1
                    continue
                if _COMMENT.match(line):
                    i += 1
                    while i < limit and _COMMENT.match(lines[i]):
                        i += 1
                    continue
            if c in "Cc" and _CLOCK.match(line):
                self.clock_lines.append(i)
                i += 1
                continue
            i = self._element(i, limit, depth, c)

    def _element(self, i: int, limit: int, depth: int, c: str) -> int:
        """One element (after the comment/clock checks) at line ``i``; returns next line."""
        lines = self.lines
        if c == "#":
            j = i
            while j < limit and _AFFILIATED.match(lines[j]):
                j += 1
            if j > i:
                if j >= limit or not self.firsts[j]:
                    return self._keyword(i)
                i = j
                c = self.firsts[i]
        line = lines[i]
        if c == "\\":
            m = _LATEX_BEGIN.match(line)
            if m:
                end = self.ends.first("latex", m.group(1), i, limit)
                if end is not None:
                    return end + 1
                return self._paragraph(i, self.starts[i], limit)
        if c == ":":
            if _DRAWER.match(line):
                end = self.ends.first("drawer", "", i + 1, limit)
                if end is not None:
                    self._nested(i + 1, end, depth)
                    return end + 1
                return self._paragraph(i, self.starts[i], limit)
            if _FIXED.match(line):
                i += 1
                while i < limit and _FIXED.match(lines[i]):
                    i += 1
                return i
        if c == "#":
            m = _HASH_PLUS.match(line)
            if m:
                return self._hash_plus(i, m.end(), limit, depth)
        if c == "[" and line.startswith("[fn:") and _FOOTNOTE_DEF.match(line):
            return self._footnote_definition(i, limit, depth)
        if c == "-" and _HR.match(line):
            return i + 1
        if c == "%" and line.startswith("%%("):
            return i + 1
        if c == "|":
            return self._table(i, limit)
        if c == "+" and _TABLE_EL_RULE.match(line):
            end = self._table_el(i, limit)
            if end is not None:
                return end
        if (c in "-+*" or c.isdigit()) and _ITEM.match(line):
            return self._plain_list(i, limit, depth)
        return self._paragraph(i, self.starts[i], limit)

    def _nested(self, i: int, limit: int, depth: int) -> None:
        if depth < MAX_DEPTH:
            self.elements(i, limit, depth + 1)
        elif i < limit:  # pathological nesting: keep links, lose structure
            self._add(self.starts[i], self._eol(limit - 1) + 1, STD)

    def _hash_plus(self, i: int, after: int, limit: int, depth: int) -> int:
        m = _HASH_PLUS_KIND.match(self.lines[i], after)
        what = m.lastindex if m is not None else None
        if what == 1:
            kind = m.group(2).upper()  # type: ignore[union-attr]
            end = self.ends.first("block", kind, i + 1, limit)
            if end is None:
                return self._paragraph(i, self.starts[i], limit)
            if kind == "VERSE":
                if end > i + 1:
                    self._add(self.starts[i + 1], self.starts[end], STD)
            elif kind not in _OPAQUE_BLOCKS:
                self._nested(i + 1, end, depth)
            return end + 1
        if what == 3:
            return i + 1
        if what == 4:
            end = self.ends.first("dynamic", "", i + 1, limit)
            if end is None:
                return self._paragraph(i, self.starts[i], limit)
            self._nested(i + 1, end, depth)
            return end + 1
        if what == 5:
            return self._keyword(i)
        return self._paragraph(i, self.starts[i], limit)

    def _keyword(self, i: int) -> int:
        line = self.lines[i]
        m = _KEYWORD.match(line)
        if m:
            self.keywords.append(Keyword(i, m.group(1).upper(), line[m.end() :].strip(" \t\r\n")))
        return i + 1

    # ------------------------------------------------------------ paragraph

    def _is_separator(self, j: int, limit: int) -> bool:
        c = self.firsts[j]
        if c and c not in _SEP_FIRST:
            return False
        line = self.lines[j]
        m = _SEPARATOR.match(line)
        if m is None:
            return False
        if c == ":" and _DRAWER.match(line):
            return self.ends.first("drawer", "", j, limit) is not None
        if c == "#":
            bm = _BEGIN_BLOCK.match(line)
            if bm:
                return self.ends.first("block", bm.group(1), j, limit) is not None
            dm = _DUAL_CHECK.match(line)
            if dm:
                return dm.group(1).upper() in ("CAPTION", "RESULTS")
        if m.group(1) is not None:
            return self.ends.first("latex", m.group(1), j, limit) is not None
        return True

    def _separator_candidates(self) -> list[int]:
        got = self._sep_lines
        if got is None:  # blank lines and those whose first non-blank may separate
            got = list(compress(count(), map(_SEP_OR_BLANK.__contains__, self.firsts)))
            self._sep_lines = got
        return got

    def _paragraph(self, i: int, beg: int, limit: int) -> int:
        """Paragraph from offset ``beg`` on line ``i``; returns the line after it."""
        cands = self._sep_lines
        if cands is None:
            cands = self._separator_candidates()
        firsts = self.firsts
        k = bisect.bisect_left(cands, i + 1)
        n = len(cands)
        j = limit
        while k < n:
            c = cands[k]
            if c >= limit:
                break
            if not firsts[c] or self._is_separator(c, limit):  # a blank line always is
                j = c
                break
            k += 1
        # contents end: after the last non-blank line
        k = j - 1
        while k > i and not firsts[k]:
            k -= 1
        end = self.starts[k] + len(self.lines[k]) + 1
        if beg < end:
            self.containers.append(Container(beg, end, STD))
        return j

    # ------------------------------------------------------------ footnotes

    def _footnote_definition(self, i: int, limit: int, depth: int) -> int:
        lines = self.lines
        j = i + 1
        blank_run = 0
        end = limit
        firsts = self.firsts
        while j < limit:
            line = lines[j]
            if line.startswith("[fn:") and _FOOTNOTE_DEF.match(line):
                k = j - 1
                while k > i and _AFFILIATED.match(lines[k]):
                    k -= 1
                end = k + 1
                break
            if not firsts[j]:
                blank_run += 1
            else:
                if blank_run >= 2:
                    end = j
                    break
                blank_run = 0
            j += 1
        else:
            if blank_run >= 2:
                end = limit
        label_end = lines[i].index("]") + 1
        self._item_like_contents(i, self.starts[i] + label_end, end, depth)
        return end

    def _item_like_contents(self, i: int, cbeg: int, end: int, depth: int) -> None:
        """Contents starting mid-line at ``cbeg`` (items, footnote definitions)."""
        rest = self.lines[i][cbeg - self.starts[i] :]
        text = rest.lstrip(" \t")
        if text:
            nxt = self._paragraph(i, cbeg + (len(rest) - len(text)), end)
            self._nested(nxt, end, depth)
        else:
            self._nested(i + 1, end, depth)

    # ------------------------------------------------------------ tables

    def _table(self, i: int, limit: int) -> int:
        lines, firsts, starts = self.lines, self.firsts, self.starts
        add = self.containers.append
        j = i
        while j < limit and firsts[j] == "|":
            # a standard row: the text after its first "|"; rules have no cells
            line = lines[j]
            bar = line.index("|") + 1
            if line[bar : bar + 1] != "-":
                base = starts[j]
                end = base + len(line.rstrip(" \t"))
                if base + bar < end:
                    add(Container(base + bar, end, ROW))
            j += 1
        while j < limit and _TBLFM.match(lines[j]):
            j += 1
        return j

    def _table_el(self, i: int, limit: int) -> int | None:
        """A table.el table (no objects): rule line, rows, closing rule."""
        lines = self.lines
        if i + 1 >= limit:
            return None
        j = i + 1
        firsts = self.firsts
        while j < limit and firsts[j] in _RULE_OR_ROW:
            j += 1
        if j == i + 1:
            return None
        if not _TABLE_EL_RULE.match(lines[j - 1]):
            return None
        return j

    # ------------------------------------------------------------ lists

    def _list_struct(self, i: int, limit: int) -> list[tuple[int, int, int]]:
        """``org-element--list-struct``: (line, indentation, end line) of each item."""
        lines, firsts = self.lines, self.firsts
        last = len(lines) - 1
        items: list[list[int]] = []  # open items: [line, ind, end]
        done: list[list[int]] = []
        pos = i
        while True:
            if pos >= limit:
                end = self._after_last_nonblank(pos, i)
                for it in items:
                    it[2] = end
                break
            c = firsts[pos]
            if not c:
                # org-list-end-re: two blank lines, both ended by a newline
                if pos + 1 < last and not firsts[pos + 1]:
                    for it in items:
                        it[2] = pos
                    break
                pos += 1
                continue
            line = lines[pos]
            # _column, inlined for a line without tabs in its indentation
            if line[0] == c:
                ind = 0
            else:
                ind = len(line) - len(line.lstrip(" \t"))
                if "\t" in line[:ind]:
                    ind = _column(line)
            if c in _ITEM_FIRST and _ITEM.match(line):
                while items and ind <= items[-1][1]:
                    it = items.pop()
                    it[2] = pos
                    done.append(it)
                items.append([pos, ind, -1])
                pos += 1
                continue
            if items and ind <= items[-1][1]:
                end = self._after_last_nonblank(pos, i)
                while items and ind <= items[-1][1]:
                    it = items.pop()
                    it[2] = end
                    done.append(it)
            if not items:
                break
            if c == "#":
                s = line.lstrip(" \t")
                bm = _BEGIN_BLOCK_OR_DYN.match(s)
                if bm:
                    tag = bm.group(1)
                    if tag == ":":
                        e = self.ends.first("dynamic", "", pos + 1, limit)
                    else:
                        e = self.ends.first("block", tag[1:], pos + 1, limit)
                    if e is not None:
                        pos = e
            elif c == ":" and _DRAWER.match(line):
                e = self.ends.first("drawer", "", pos + 1, limit)
                if e is not None:
                    pos = e
            pos += 1
        done.extend(items)
        done.sort()
        return [(a, b, c) for a, b, c in done]

    def _after_last_nonblank(self, pos: int, floor: int) -> int:
        k = pos - 1
        firsts = self.firsts
        while k > floor and not firsts[k]:
            k -= 1
        return k + 1

    def _plain_list(self, i: int, limit: int, depth: int) -> int:
        by_line = self._items
        if i not in by_line or by_line[i][1] > limit:
            for ln, ind, end in self._list_struct(i, limit):
                by_line[ln] = (ind, end)
        ind0 = by_line[i][0]
        pos = i
        get = by_line.get
        while True:
            got = get(pos)
            if got is None or got[0] != ind0:
                break
            end = got[1]
            self._item(pos, end, depth)
            if end <= pos:
                break
            pos = end
        return max(pos, i + 1)

    def _item(self, i: int, end: int, depth: int) -> None:
        line = self.lines[i]
        if "::" in line:
            m = _FULL_ITEM.match(line)
            tagged = m is not None and m.group(4) is not None
        else:
            m = _FULL_ITEM_NOTAG.match(line)
            tagged = False
        if m is None:  # cannot happen: _ITEM matched
            self._paragraph(i, self.starts[i], end)
            return
        base = self.starts[i]
        bullet = m.group(1)
        ordered = bullet[0] not in "-+*"
        if tagged and ordered:
            cbeg = m.start(4)
        else:
            cbeg = m.end()
            if tagged:
                t0, t1 = m.start(4), m.end(4)
                tag = line[t0:t1]
                lead = len(tag) - len(tag.lstrip(" \t"))
                trail = len(tag) - len(tag.rstrip(" \t"))
                self._add(base + t0 + lead, base + t1 - trail, NOLB)
        # contents end: skip trailing blank lines of the item (_after_last_nonblank)
        k = end - 1
        firsts = self.firsts
        while k > i and not firsts[k]:
            k -= 1
        cend = k + 1 if k > i else i + 1
        # _item_like_contents, inlined
        rest = line[cbeg:]
        text = rest.lstrip(" \t")
        if text:
            nxt = self._paragraph(i, base + cbeg + (len(rest) - len(text)), cend)
        else:
            nxt = i + 1
        if depth < MAX_DEPTH:  # _nested
            self.elements(nxt, cend, depth + 1)
        else:
            self._nested(nxt, cend, depth)
