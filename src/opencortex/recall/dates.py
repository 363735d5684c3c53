"""Dated phrases in a cue, composed from parts rather than listed: an optional part of a
period ("early", "mid", "late", "the start/end/middle of"), a period (a month, a season,
a year) and a year; plus the days a person names by the calendar ("leap day 2020",
"Christmas 2022", "New Year's Eve 2021").

Each resolves to a generous range (people misremember by a week or two, and a commit is
written before it is merged): what ``cue.resolve_time`` takes when the person gives a
date rather than a distance back from now."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["DatedPhrase", "dated_phrases"]

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_SEASONS = {"spring": (3, 6), "summer": (6, 9), "autumn": (9, 12), "fall": (9, 12),
            "winter": (12, 15)}
"""Meteorological seasons (northern hemisphere): first month, month after the last."""
_PART = (r"(?P<part>early|mid|middle of|late|start of|beginning of|end of|the start of|"
         r"the beginning of|the end of|the middle of)")
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# the part of a period, as a fraction of it: (from, to)
_PARTS = {"early": (0.0, 0.4), "start of": (0.0, 0.34), "beginning of": (0.0, 0.34),
          "mid": (0.3, 0.7), "middle of": (0.3, 0.7), "late": (0.6, 1.0),
          "end of": (0.66, 1.0)}
_DAYS = {  # days a person names by the calendar: (month, day)
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25),
    "new year's eve": (12, 31), "new years eve": (12, 31), "new year's day": (1, 1),
    "new years day": (1, 1), "halloween": (10, 31), "valentine's day": (2, 14),
    "leap day": (2, 29), "independence day": (7, 4),
}
_DAY_RX = "|".join(re.escape(d) for d in sorted(_DAYS, key=len, reverse=True))
_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("day", re.compile(rf"\b(?P<day>{_DAY_RX})(?:,? (?:of )?{_YEAR})?\b")),
    ("month", re.compile(rf"\b(?:{_PART}[- ](?:the )?)?(?:(?P<pre>in|during|around|back in|"
                         rf"by|since|from|until|that) )?(?P<month>{_MONTH})\b\.?"
                         rf"(?:,? (?:of )?{_YEAR}\b)?")),
    ("season", re.compile(rf"\b(?:{_PART}[- ](?:the )?)?(?P<season>spring|summer|autumn|"
                          rf"fall|winter)(?: of)? {_YEAR}\b")),
    ("year", re.compile(rf"\b(?:{_PART}[- ]|(?P<pre>in|during|around|since|from|of) )"
                        rf"{_YEAR}\b")),
]


@dataclass(frozen=True)
class DatedPhrase:
    start: dt.datetime
    end: dt.datetime
    phrase: str
    at: int
    """Where in the text it begins: the earliest phrase is the one the person leads with."""


def _clip(lo: dt.datetime, hi: dt.datetime, part: str | None) -> tuple[dt.datetime, dt.datetime]:
    if not part:
        return lo, hi
    a, b = _PARTS[part.removeprefix("the ")]
    span = hi - lo
    return lo + span * a, lo + span * b


def _month_start(y: int, m: int, tz: dt.tzinfo | None) -> dt.datetime:
    y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
    return dt.datetime(y, m, 1, tzinfo=tz)


def _latest_year(month: int, day: int, now: dt.datetime) -> int:
    """The year of the most recent such day (no year named: the past is meant)."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def dated_phrases(text: str, now: dt.datetime) -> list[DatedPhrase]:
    """Every dated phrase in ``text`` (lower-cased by the caller or not), earliest first.
    A bare month needs a year or a preposition ("in May", "May 2020"); "may" alone is a
    verb more often than a month."""
    tz = now.tzinfo
    t = text.lower()
    out: list[DatedPhrase] = []
    week = dt.timedelta(days=7)
    for kind, rx in _RULES:
        for m in rx.finditer(t):
            g = m.groupdict()
            part = g.get("part")
            year = int(g["year"]) if g.get("year") else None
            if kind == "day":
                mo, d = _DAYS[g["day"]]
                y = year or _latest_year(mo, d, now)
                if mo == 2 and d == 29 and not calendar.isleap(y):
                    continue
                day = dt.datetime(y, mo, d, tzinfo=tz)
                lo, hi = day - dt.timedelta(days=3), day + dt.timedelta(days=4)
            elif kind == "month":
                if year is None and not g.get("pre") and not part:
                    continue
                mo = _MONTHS[g["month"]]
                y = year or _latest_year(mo, 1, now)
                lo, hi = _clip(_month_start(y, mo, tz), _month_start(y, mo + 1, tz), part)
                lo, hi = lo - week, hi + week
            elif kind == "season":
                first, after = _SEASONS[g["season"]]
                assert year is not None
                lo, hi = _clip(_month_start(year, first, tz), _month_start(year, after, tz),
                               part)
                lo, hi = lo - 2 * week, hi + 2 * week
            else:
                assert year is not None
                lo, hi = _clip(dt.datetime(year, 1, 1, tzinfo=tz),
                               dt.datetime(year + 1, 1, 1, tzinfo=tz), part)
                lo, hi = lo - 2 * week, hi + 2 * week
            out.append(DatedPhrase(lo, hi, m.group(0).strip(), m.start()))
    # a longer phrase holds a shorter one at the same place ("late march 2020" / "march")
    out.sort(key=lambda p: (p.at, -len(p.phrase)))
    kept: list[DatedPhrase] = []
    for p in out:
        if kept and p.at < kept[-1].at + len(kept[-1].phrase):
            continue
        kept.append(p)
    return kept
