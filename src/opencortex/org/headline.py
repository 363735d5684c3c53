"""Headline line and planning line, as ``org-element-headline-parser`` reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .model import Timestamp
from .timestamps import match_timestamp

__all__ = ["HeadlineParts", "headline_regexp", "parse_headline_line", "parse_planning_line", "split_headline"]

_TAGS = re.compile(r"[ \t]+(:[\w@#%:]+:)[ \t]*$")
_PLANNING_KW = re.compile(
    r"(?<![^\W_])(?<![$%'])((?:CLOSED|DEADLINE|SCHEDULED):) *[\[<]([^\]>]+)[\]>]", re.I
)
_TRIM = " \t\n\r"
_PLANNING_ONE = re.compile(r"[ \t]*(CLOSED|DEADLINE|SCHEDULED): *(?=[\[<])")
_PLANNING_KEY = {"CLOSED": "closed", "DEADLINE": "deadline", "SCHEDULED": "scheduled"}
# the last letter of CLOSED:, DEADLINE:, SCHEDULED: and the colon (no other
# character folds to d or e under re.I)
_KEYWORD_END = re.compile(r"[DdEe]:")


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


@lru_cache(maxsize=64)
def headline_regexp(todo_keywords: tuple[str, ...]) -> re.Pattern[str]:
    """Stars, TODO keyword, priority cookie and COMMENT of a headline, in one match.

    Keyword alternatives are tried in list order, like a loop taking the first
    keyword followed by a space; keywords never start with a blank, so giving
    back blanks cannot make another one match.  Empty keywords never match.
    """
    kws = "|".join(re.escape(k) for k in todo_keywords if k)
    todo = rf"(?:({kws}) [ \t]*)?" if kws else "()"
    return re.compile(rf"(\*+)[ \t]*{todo}(?:\[#(.)\][ \t]*)?(COMMENT)?")


def parse_headline_line(line: str, todo_keywords: list[str]) -> HeadlineParts:
    """Split a headline line (``^\\*+ `` assumed, no newline) into its parts."""
    return HeadlineParts(*split_headline(line, headline_regexp(tuple(todo_keywords))))


def split_headline(
    line: str, head_re: re.Pattern[str]
) -> tuple[int, str, str | None, str | None, bool, list[str], tuple[int, int]]:
    """The fields of :class:`HeadlineParts`, in order (``head_re`` from ``headline_regexp``)."""
    m = head_re.match(line)
    assert m is not None  # "\*+" always matches a headline line
    stars_s, todo, priority, comment_s = m.groups()
    stars = len(stars_s)
    comment = comment_s is not None
    if not todo:
        todo = None
    # without keyword, cookie or COMMENT, the title starts right after the stars
    title_start = m.end() if (todo or priority or comment) else stars
    tags: list[str] = []
    title_end = len(line)
    if line.rstrip(" \t")[-1:] == ":":
        tm = _TAGS.search(line, title_start)
        if tm:
            tags = [t for t in tm.group(1).split(":") if t]
            title_end = tm.start()
    raw = line[title_start:title_end]
    title = raw.strip(" \t")  # the span of title objects
    ts0 = title_end - len(raw.lstrip(" \t"))
    te0 = ts0 + len(title)
    if "\r" in title:
        title = title.strip(_TRIM)
    return stars, title, todo, priority, comment, tags, (ts0, te0)


def parse_planning_line(line: str) -> dict[str, Timestamp | str]:
    """Planning keywords of a planning line -> timestamp (raw string when undatable).

    Keyword comparison is case-sensitive after a case-insensitive search, as in
    Org: ``deadline:`` in lower case therefore lands in CLOSED, like Emacs does.
    """
    out: dict[str, Timestamp | str] = {}
    # Fast path, one keyword in capitals at the start and its timestamp: what the
    # loop below finds first (the look-behinds hold at a line start or after a
    # blank, and ``[<]...[]>]`` holds for any timestamp that parses).
    m = _PLANNING_ONE.match(line)
    if m is not None:
        got = match_timestamp(line, m.end())
        if got is not None and got[1] is not None:
            pos = m.end()
            if _KEYWORD_END.search(line, pos) is None:  # no other keyword follows
                out[_PLANNING_KEY[m.group(1)]] = got[1]
                return out
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
        if _KEYWORD_END.search(line, pos) is None:  # no other keyword can follow
            break
    return out
