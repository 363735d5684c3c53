"""Headline line and planning line, as ``org-element-headline-parser`` reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .model import Timestamp
from .timestamps import match_timestamp

__all__ = ["HeadlineParts", "parse_headline_line", "parse_planning_line"]

_PRIORITY = re.compile(r"\[#.\][ \t]*")
_TAGS = re.compile(r"[ \t]+(:[\w@#%:]+:)[ \t]*$")
_PLANNING_KW = re.compile(
    r"(?<![^\W_])(?<![$%'])((?:CLOSED|DEADLINE|SCHEDULED):) *[\[<]([^\]>]+)[\]>]", re.I
)
_TRIM = " \t\n\r"


@dataclass(slots=True)
class HeadlineParts:
    """What the headline line itself says."""

    stars: int
    title: str
    todo: str | None = None
    priority: str | None = None
    comment: bool = False
    tags: list[str] = field(default_factory=list)
    title_span: tuple[int, int] = (0, 0)
    """Where title objects are parsed, relative to the line start."""


def parse_headline_line(line: str, todo_keywords: list[str]) -> HeadlineParts:
    """Split a headline line (``^\\*+ `` assumed, no newline) into its parts."""
    stars = len(line) - len(line.lstrip("*"))
    pos = stars
    n = len(line)
    while pos < n and line[pos] in " \t":
        pos += 1
    todo = None
    for kw in todo_keywords:
        if line.startswith(kw, pos) and line.startswith(" ", pos + len(kw)):
            todo = kw
            pos += len(kw) + 1
            while pos < n and line[pos] in " \t":
                pos += 1
            break
    priority = None
    m = _PRIORITY.match(line, pos)
    if m:
        priority = line[pos + 2]
        pos = m.end()
    comment = line.startswith("COMMENT", pos)
    if comment:
        pos += 7
    title_start = pos
    if not (todo or priority or comment):
        while title_start > stars and line[title_start - 1] in " \t":
            title_start -= 1
    tags: list[str] = []
    title_end = n
    tm = _TAGS.search(line, title_start)
    if tm:
        tags = [t for t in tm.group(1).split(":") if t]
        title_end = tm.start()
    title = line[title_start:title_end].strip(_TRIM)
    ts0 = title_start
    while ts0 < title_end and line[ts0] in " \t":
        ts0 += 1
    te0 = title_end
    while te0 > ts0 and line[te0 - 1] in " \t":
        te0 -= 1
    return HeadlineParts(stars, title, todo, priority, comment, tags, (ts0, te0))


def parse_planning_line(line: str) -> dict[str, Timestamp | str]:
    """Planning keywords of a planning line -> timestamp (raw string when undatable).

    Keyword comparison is case-sensitive after a case-insensitive search, as in
    Org: ``deadline:`` in lower case therefore lands in CLOSED, like Emacs does.
    """
    out: dict[str, Timestamp | str] = {}
    pos = 0
    while True:
        m = _PLANNING_KW.search(line, pos)
        if m is None:
            break
        kw = m.group(1)
        p = m.end(1)
        while p < len(line) and line[p] in " \t":
            p += 1
        got = match_timestamp(line, p)
        key = "scheduled" if kw == "SCHEDULED:" else "deadline" if kw == "DEADLINE:" else "closed"
        if got is not None:
            end, ts = got
            out[key] = ts if ts is not None else line[p:end]
        else:
            out.pop(key, None)
        pos = p
    return out
