"""What Org's agenda can see of one heading, read once when the file is indexed.

``org-agenda-list`` finds its entries by regexp searches over the whole buffer, then keeps
or drops each hit by context (``org-agenda-get-timestamps``, ``-get-blocks``,
``-get-scheduled``, ``-get-deadlines`` in org-agenda.el 9.5).  Searching every file for
every day is what makes Emacs's agenda slow; here the searches run once per file at index
time and store, per heading, the stamps Org would consider, with everything the per-day
rules need (``agenda.py`` applies those rules).  The context rules kept, as Org has them:

- plain timestamps count where org-element makes a timestamp object (so never in an
  example or src block, a comment, a fixed-width line), or on a node-property line; never
  on the planning line; a stamp Org's ``org-at-date-range-p`` takes for part of a date
  range is left to the block pass;
- date ranges (``<a>--<b>``) are found by Org's own loose regexp anywhere in the section
  except inside a src block or on a comment line (Org does list a range written in an
  example block: ``org-agenda-get-blocks`` has no context test but ``org-agenda-skip``);
- SCHEDULED / DEADLINE only on the planning line;
- nothing under an ``:ARCHIVE:``-tagged or ``COMMENT`` heading (``org-agenda-skip``);
- diary sexps (``<%%(…)>``, ``%%(…)`` lines) are never evaluated: only counted.
"""

from __future__ import annotations

import re

from ..org.model import Heading, OrgDocument

__all__ = ["AGENDA_TS", "agenda_record", "time_of_day"]

# org-tr-regexp (Org 9.5): "<\(DATE\(?: .*?\)?\)>--?-?<\(DATE\(?: .*?\)?\)>" -- the lazy
# ".*?" may run over a ">": Org reads "<a 10:00> and <b>--<c>" as one range from a to c.
_TR = re.compile(r"<(\d{4}-\d{2}-\d{2}(?: .{0,200}?)?)>--?-?<(\d{4}-\d{2}-\d{2}(?: .{0,200}?)?)>")
# (org-tr-regexp, its lazy ``.*?`` bounded: a stamp's words are a few dozen characters, and
# unbounded, a line of unclosed stamps was retried to its end from each ``<`` — quadratic)
# org-ts-regexp-both: what Org hands `org-agenda-format-item' as the item's time stamp
_TS_BOTH = re.compile(r"[\[<](\d{4}-\d{2}-\d{2}(?: .*?)?)[\]>]")
# the repeater alternative of org-agenda-get-timestamps' search
_REPEAT = re.compile(r"<[0-9]+-[0-9]+-[0-9]+[^>\n]+?\+[0-9]+[hdwmy]>")
# org-ts-regexp1's group 6: the " HH:MM" of a range end
_HHMM = re.compile(r"(\d{4})-(\d{2})-(\d{2}) *([^]+0-9>\r\n -]*)( (\d{1,2}):(\d{2}))?")
_PLANNED = re.compile(r"(?<![^\W_])(SCHEDULED|DEADLINE): *<([^>]+)>")
_DATE_START = re.compile(r"<\d{4}-\d{2}-\d{2}")
_COMMENT_LINE = re.compile(r"[ \t]*#(?: |$)")
_SRC_BEGIN = re.compile(r"[ \t]*#\+begin_src(?:[ \t]|$)", re.I)
_SRC_END = re.compile(r"[ \t]*#\+end_src[ \t]*$", re.I)
_SEXP = re.compile(r"<%%\(|^&?%%\(", re.M)
# org-get-time-of-day: a word that is H:MM / HH:MM (am/pm optional) or Ham / Hpm
_TIME = re.compile(r"(?<![^\W_])([012]?[0-9])(?::([0-5][0-9])(am|pm)?|(am|pm))(?![^\W_])",
                   re.I)

AGENDA_TS = "ts"
"""Record key of the plain timestamps: ``[date, repeat-or-null, stamp text, plain ok,
repeat ok]`` (the flags: not taken for part of a date range when Org's search stops at
the date, resp. at the end of the repeater)."""


def time_of_day(s: str) -> int | None:
    """``org-get-time-of-day``: the first time of day in ``s`` as HHMM, else None."""
    m = _TIME.search(s)
    if m is None:
        return None
    ampm = (m.group(3) or m.group(4) or "").lower()
    h = int(m.group(1))
    if ampm:
        h = (0 if ampm == "am" else 12) if h == 12 else h + (12 if ampm == "pm" else 0)
    return h * 100 + (int(m.group(2)) if m.group(2) else 0)


def _at_range(text: str, lstart: int, stamp: int, point: int) -> bool:
    """``org-at-date-range-p`` with point at ``point`` (just after Org's search match of
    the stamp starting at ``stamp``): the stamp, or the one before it on the line,
    begins a range regexp match reaching ``point``."""
    q = stamp
    while q > lstart and text[q - 1] in "<[":
        q -= 1
    m = _TR.match(text, q)
    if m and m.end() >= point:
        return True
    k = max(text.rfind("<", lstart, q), text.rfind("[", lstart, q)) + 1
    k = max(k, lstart)
    while k > lstart and text[k - 1] in "<[":
        k -= 1
    m = _TR.match(text, k)
    return bool(m and m.end() >= point)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _stamp_entry(text: str, p: int) -> list[object] | None:
    """The record of a plain timestamp starting at ``p`` (``AGENDA_TS``)."""
    both = _TS_BOTH.match(text, p)
    if both is None:
        return None
    ls = _line_start(text, p)
    rep = _REPEAT.match(text, p)
    plain_ok = not _at_range(text, ls, p, p + 11)
    rep_ok = rep is not None and not _at_range(text, ls, p, rep.end())
    return [text[p + 1:p + 11], rep.group(0) if rep else None, both.group(0),
            plain_ok, rep_ok]


def _src_lines(lines: list[str]) -> set[int]:
    """Indexes of the lines inside a src block (its begin/end lines excluded, as
    ``org-in-src-block-p`` with INSIDE)."""
    inside: set[int] = set()
    i = 0
    while i < len(lines):
        if _SRC_BEGIN.match(lines[i]):
            j = next((j for j in range(i + 1, len(lines)) if _SRC_END.match(lines[j])), None)
            if j is not None:
                inside.update(range(i + 1, j))
                i = j
        i += 1
    return inside


def agenda_record(doc: OrgDocument, h: Heading, hidden: bool) -> dict[str, object] | None:
    """What the agenda may list for heading ``h`` (None: nothing).  ``hidden``: the
    heading is in an archived or COMMENT subtree, which Org's agenda skips whole."""
    text = doc.text
    if hidden or text.find("<", h.start, h.end) < 0:  # (every form opens with "<")
        return None
    rec: dict[str, object] = {}
    # plain timestamps: org-element's timestamp objects (title and section), located in
    # document order, then node-property lines
    stamps: list[list[object]] = []
    pos = h.start
    for ts in h.timestamps:
        if not ts.active or ts.raw.startswith("<%%") or ts.raw.count("<") != 1:
            continue
        p = text.find(ts.raw, pos, h.end)
        if p < 0:
            continue
        pos = p + 1
        e = _stamp_entry(text, p)
        if e:
            stamps.append(e)
    if h.drawer_span:
        a, b = h.drawer_span
        for m in _DATE_START.finditer(text, a, b):
            e = _stamp_entry(text, m.start())
            if e:
                stamps.append(e)
    if stamps:
        rec[AGENDA_TS] = stamps
    if h.planning_span:
        a, b = h.planning_span
        planned: dict[str, list[str]] = {}
        for m in _PLANNED.finditer(text[a:b]):
            planned.setdefault("sched" if m.group(1) == "SCHEDULED" else "dead",
                               []).append(m.group(2))
        rec.update(planned)
    section = text[h.start:h.end]
    ranges: list[list[object]] = []
    if ">-" in section:  # (every range regexp match holds ">-")
        lines = section.split("\n")
        src = _src_lines(lines) if "#+" in section else set()
        for i, line in enumerate(lines):
            if i in src or "<" not in line or _COMMENT_LINE.match(line):
                continue
            for m in _TR.finditer(line):
                s1, s2 = m.group(1), m.group(2)
                h1, h2 = _HHMM.match(s1), _HHMM.match(s2)
                ranges.append([s1[:10], s2[:10], s1, s2,
                               h1.group(5) if h1 else None, h2.group(5) if h2 else None])
    if ranges:
        rec["range"] = ranges
    sexps = len(_SEXP.findall(section)) if "%%(" in section else 0
    if sexps:
        rec["sexp"] = sexps
    if not rec:
        return None
    head = text[h.start:h.headline_end].lstrip("*").strip()
    rec["hm"] = time_of_day(head)
    return rec
