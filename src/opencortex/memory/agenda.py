"""Org's day agenda (``org-agenda-list``) computed from the index, as Org computes it.

One computation for every reader: ``opencortex agenda``, ``ask "what's on wednesday?"``
and the HTTP/MCP agenda.  The per-day rules are Org 9.5's with its default settings
(``org-agenda-get-deadlines``, ``-get-scheduled``, ``-get-timestamps``, ``-get-blocks``):

- **timestamp**: an active stamp on its date; one whose repeater ends it (``+1w>``) on
  every repeat from its base date on; DONE entries too (Org does not skip them);
- **block**: every day of a date range, first and last included;
- **scheduled** on its date (and each future repeat); **past-scheduled** on today while
  undone ("Sched. 3x:"), after a ``-Nd`` delay; a DONE entry only on its date;
- **deadline** on its date (and future repeats), on today while overdue ("2 d. ago:");
  **upcoming-deadline** on today within the warning period (``-Nd``, else
  ``org-deadline-warning-days`` = 14: "In 4 d.:"); a DONE entry only on its date.

The time of an item is Org's ``time-of-day``: from the stamp, else from the headline
(``org-agenda-search-headline-for-time``); reminders on other days have none.  What each
heading may contribute was read at index time (``agenda_stamps``); nothing is re-parsed.
Diary sexps are never evaluated: they are counted in ``Agenda.skipped_sexps``.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .agenda_stamps import AGENDA_TS, time_of_day

__all__ = ["DEADLINE_WARNING_DAYS", "Agenda", "AgendaDay", "AgendaItem", "AgendaRow",
           "compute_agenda", "org_closest_date"]

DEADLINE_WARNING_DAYS = 14
"""``org-deadline-warning-days``."""
_PAST_DAYS = 10000
"""``org-scheduled-past-days`` and ``org-deadline-past-days``."""
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_REPEATER = re.compile(r"\+(\d+)([hdwmy])")
_WDAYS = re.compile(r"-(\d+)([hdwmy])(?:\Z|>| )")
_PLAN_TIME = re.compile(r" ([012]?[0-9]:[0-9][0-9])")
_UNIT_DAYS = {"d": 1, "w": 7, "m": 30.4, "y": 365.25, "h": 0.041667}
_TITLE_STAMP = re.compile(r"\s*<\d{4}-\d{2}-\d{2}[^>\n]*>(?:--<[^>\n]*>)?")
_TYPE_ORDER = {"deadline": 0, "upcoming-deadline": 1, "block": 2, "timestamp": 3,
               "scheduled": 4, "past-scheduled": 5}


@dataclass(slots=True)
class AgendaRow:
    """One heading as the agenda reads it from the index."""

    file: str
    line: int
    title: str
    todo: str | None
    done: bool
    category: str | None
    priority: str | None
    tags: list[str]
    record: dict[str, Any]
    """``agenda_stamps.agenda_record`` as stored."""


@dataclass(slots=True)
class AgendaItem:
    """One line of a day: Org's ``type`` and ``time-of-day``, plus what is printed."""

    date: str
    file: str
    line: int
    type: str
    time: str | None
    title: str
    todo: str | None
    category: str | None
    priority: str | None
    leader: str
    """Org's prefix text: "Scheduled: ", "Sched. 3x: ", "In   4 d.: ", "(2/3): " …"""
    tags: list[str] = field(default_factory=list)
    """All the entry's tags (inherited too): what privacy filters read."""
    end: str | None = None
    """The end of a same-day time range ("10:00-11:00"), for display."""

    @property
    def heading(self) -> str:
        """What Org prints for the entry: keyword, priority and title, without the active
        timestamps the title carries (the time is in the prefix)."""
        title = _TITLE_STAMP.sub("", self.title).strip() or self.title
        return " ".join(x for x in (self.todo, f"[#{self.priority}]" if self.priority else None,
                                    title) if x)

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date, "file": self.file, "line": self.line, "type": self.type,
                "time": self.time, "title": self.title, "todo": self.todo,
                "category": self.category, "priority": self.priority, "leader": self.leader,
                "tags": list(self.tags), "end": self.end}


@dataclass(slots=True)
class AgendaDay:
    date: dt.date
    items: list[AgendaItem] = field(default_factory=list)


@dataclass(slots=True)
class Agenda:
    today: dt.date
    days: list[AgendaDay]
    skipped_sexps: int = 0
    """Diary sexps met (never evaluated)."""

    def without(self, hidden: Callable[[Iterable[str]], bool]) -> Agenda:
        """The same agenda minus the items whose tags ``hidden`` withholds."""
        return Agenda(self.today, [AgendaDay(d.date, [i for i in d.items if not hidden(i.tags)])
                                   for d in self.days], self.skipped_sexps)

    def to_dict(self) -> dict[str, Any]:
        return {"today": self.today.isoformat(),
                "days": [{"date": d.date.isoformat(), "items": [i.to_dict() for i in d.items]}
                         for d in self.days],
                "skipped_sexps": self.skipped_sexps}


# -- Org's date arithmetic (absolute day numbers = Python ordinals) --

def _absolute(month: int, day: int, year: int) -> int:
    """``calendar-absolute-from-gregorian``, overflowing days and month 0 as Emacs does."""
    doy = day + 31 * (month - 1)
    if month > 2:
        doy -= (23 + 4 * month) // 10
        if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0:
            doy += 1
    y = year - 1
    return doy + 365 * y + y // 4 - y // 100 + y // 400


def _gregorian(absolute: int) -> tuple[int, int, int]:
    d = dt.date.fromordinal(absolute)
    return d.month, d.day, d.year


@functools.lru_cache(maxsize=65536)
def _base(s: str) -> int | None:
    """``org-time-string-to-absolute`` without a day: the first date in ``s``."""
    m = _DATE.search(s)
    if m is None:
        return None
    return _absolute(int(m.group(2)), int(m.group(3)), int(m.group(1)))


def _tdiv(a: int, b: int) -> int:
    """Elisp integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@functools.lru_cache(maxsize=65536)
def org_closest_date(start: str, current: int, prefer: str) -> int | None:
    """``org-closest-date``: the repeat of ``start`` closest to ``current`` (``past``:
    at or before it, ``future``: at or after it); the base date without a repeater."""
    sday = _base(start)
    m = _REPEATER.search(start)
    if sday is None or m is None or int(m.group(1)) == 0:
        return sday
    value, unit = int(m.group(1)), m.group(2)
    if current <= sday:
        return sday
    base, target = _gregorian(sday), _gregorian(current)
    if unit == "h":
        hour_m = re.search(r" (\d{1,2}):\d{2}", start)
        hour = int(hour_m.group(1)) if hour_m else 0
        missing = (24 * (current - sday) - hour) % value
        n1 = current if missing == 0 else current - (1 + _tdiv(missing, 24))
        n2 = current + _tdiv(value - missing, 24)
    elif unit in ("d", "w"):
        step = value * 7 if unit == "w" else value
        n1 = sday + step * _tdiv(current - sday, step)
        n2 = n1 + step
    elif unit == "m":
        def add(d: tuple[int, int, int], n: int) -> tuple[int, int, int]:
            mm = d[0] + n
            return mm % 12, d[1], _tdiv(mm, 12) + d[2]

        months = _tdiv(12 * (target[2] - base[2]) + (target[0] - base[0])
                       + (0 if target[1] > base[1] else -1), value) * value
        before = add(base, months)
        n1 = _absolute(*before)
        n2 = _absolute(*add(before, value))
    else:
        mo, d, y = base
        years = _tdiv(target[2] - y - (0 if (target[0] > mo or (target[0] == mo and
                                                                 target[1] > d)) else 1),
                      value) * value
        n1 = _absolute(mo, d, y + years)
        n2 = _absolute(mo, d, y + years + value)
    if prefer == "past":
        return n2 if current == n2 else n1
    if prefer == "future":
        return n1 if current == n1 else n2
    return n2 if abs(current - n1) > abs(current - n2) else n1


@functools.lru_cache(maxsize=65536)
def _wdays(s: str, default: int) -> int:
    """``org-get-wdays``: the ``-Nd`` lead (or delay) of a planning stamp, else default."""
    m = _WDAYS.search(s)
    if m is None:
        return default
    return math.floor(int(m.group(1)) * _UNIT_DAYS[m.group(2)])


def _hhmm(tod: int | None) -> str | None:
    return None if tod is None else f"{tod // 100:02d}:{tod % 100:02d}"


@functools.lru_cache(maxsize=65536)
def _time(stamp: str | None, head: int | None) -> str | None:
    """``org-agenda-format-item``'s time: the stamp's, else the headline's; None when Org
    passes no stamp (a reminder)."""
    if stamp is None:
        return None
    tod = time_of_day(stamp)
    return _hhmm(tod if tod is not None else head)


def _plan_time(s: str, head: int | None) -> str | None:
    m = _PLAN_TIME.search(s)
    return _time(s[m.start(1):] + " " if m else "", head)


def _range_end(stamp: str) -> str | None:
    m = re.search(r"\d{1,2}:\d{2}-(\d{1,2}:\d{2})", stamp)
    return m.group(1) if m else None


class _Day:
    """The rules for one agenda day (``current``) given ``today``."""

    def __init__(self, current: int, today: int) -> None:
        self.current, self.today = current, today
        self.is_today = current == today
        self.iso = dt.date.fromordinal(current).isoformat()

    def _repeat(self, s: str, base: int) -> int | None:
        if self.current <= self.today:
            return base
        return org_closest_date(s, self.current, "future")

    def deadline(self, s: str, done: bool, head: int | None
                 ) -> tuple[str, str | None, str] | None:
        cur = self.current
        deadline = _base(s)
        if deadline is None:
            return None
        repeat = self._repeat(s, deadline)
        diff = deadline - cur
        if cur != deadline and cur != repeat:
            if not self.is_today:
                return None
            if deadline > cur:
                if diff > _wdays(s, DEADLINE_WARNING_DAYS):
                    return None
            elif -diff > _PAST_DAYS:
                return None
        if done and deadline != cur:
            return None
        time = None if cur not in (deadline, repeat) else _plan_time(s, head)
        if self.is_today and deadline < self.today:
            leader = f"{-diff:2d} d. ago: "
        elif self.is_today and deadline > self.today:
            leader = f"In {diff:3d} d.: "
        else:
            leader = "Deadline:  "
        kind = "upcoming-deadline" if self.is_today and deadline > self.today else "deadline"
        return kind, time, leader

    def scheduled(self, s: str, done: bool, head: int | None
                  ) -> tuple[str, str | None, str] | None:
        cur = self.current
        schedule = _base(s)
        if schedule is None:
            return None
        repeat = self._repeat(s, schedule)
        diff = cur - schedule
        ddays = _wdays(s, 0)
        if ((ddays > 0 and diff < ddays) or diff > _PAST_DAYS or schedule > cur
                or (cur != schedule and cur != self.today and cur != repeat)):
            return None
        if done and schedule != cur:
            return None
        time = None if cur not in (schedule, repeat) else _plan_time(s, head)
        past = schedule < self.today
        leader = f"Sched.{diff:2d}x: " if self.is_today and past else "Scheduled: "
        return ("past-scheduled" if past else "scheduled"), time, leader

    def timestamp(self, entry: Sequence[Any], head: int | None) -> str | bool | None:
        """The item's time (or None) when the stamp is listed today, else False."""
        date, rep, stamp, plain_ok, rep_ok = entry
        cur = self.current
        if date == self.iso:
            return _time(stamp, head) if plain_ok else False
        if not rep or not rep_ok:
            return False
        if cur > self.today:
            past = org_closest_date(rep, self.today, "past")
            future = org_closest_date(rep, cur, "future")
        else:
            past = future = org_closest_date(rep, cur, "past")
        if cur not in (past, future):
            return False
        return _time(rep, head)

    def block(self, entry: Sequence[Any], head: int | None) -> tuple[str | None, str] | None:
        d1s, d2s, s1, s2, hh1, hh2 = entry
        d1, d2, d0 = _base(d1s), _base(d2s), self.current
        if d1 is None or d2 is None or not d1 <= d0 <= d2:
            return None
        leader = "" if d1 == d2 else f"({d0 - d1 + 1}/{d2 - d1 + 1}): "
        if hh1 == hh2 or d1 == d0 == d2:
            stamp: str | None = f"<{s1}>--<{s2}>"
        elif d1 == d0:
            stamp = f"<{s1}>"
        elif d2 == d0:
            stamp = f"<{s2}>"
        else:
            stamp = None
        return _time(stamp, head), leader


FAR = 10_000_000
"""A day after every day Org can write (ordinal of 9999-12-31 is 3,652,059)."""


def agenda_window(rec: dict[str, Any], done: bool) -> tuple[int | None, int | None,
                                                            int | None]:
    """``(lo, hi, pending)`` of a stored agenda record, as day ordinals: the entry can be
    listed only on days in ``[lo, hi]`` (a repeater reaches ``FAR``), or on today when
    ``pending`` (its earliest undone SCHEDULED/DEADLINE date) is not after today.
    Stored beside the record so the agenda reads only the rows that can reach its span."""
    lo: int | None = None
    hi: int | None = None
    pend: int | None = None

    def span(a: int | None, b: int | None) -> None:
        nonlocal lo, hi
        if a is None or b is None:
            return
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)

    for date, rep, _stamp, plain_ok, rep_ok in rec.get(AGENDA_TS, ()):
        b = _base(date)
        if rep and rep_ok:
            span(b, FAR)
        elif plain_ok:
            span(b, b)
    for e in rec.get("range", ()):
        span(_base(e[0]), _base(e[1]))
    for key in ("sched", "dead"):
        for st in rec.get(key, ()):
            b = _base(st)
            if b is None:
                continue
            first = b - _wdays(st, DEADLINE_WARNING_DAYS) if key == "dead" else b
            span(first, FAR if _has_repeat(st) else b)
            if not done:
                pend = b if pend is None else min(pend, b)
    return lo, hi, pend


def _has_repeat(s: str) -> bool:
    m = _REPEATER.search(s)
    return m is not None and int(m.group(1)) > 0


def compute_agenda(rows: Iterable[AgendaRow], today: dt.date, days: int = 7,
                   start: dt.date | None = None, skipped_sexps: int | None = None) -> Agenda:
    """The agenda for ``days`` days from ``start`` (default today), as of ``today``.

    Each stamp is tried only on the days it can show on (its date, today, the days of a
    range; every day when it repeats), by the same per-day rules.  ``skipped_sexps``:
    the diary sexps of the whole memex (default: those of ``rows``)."""
    start = start or today
    rows = list(rows)
    t = today.toordinal()
    s0 = start.toordinal()
    s1 = s0 + days - 1
    every = range(s0, s1 + 1)
    rules = {d: _Day(d, t) for d in every}
    hits: list[tuple[int, AgendaRow, str, str | None, str, str | None]] = []
    push = hits.append
    today_in = s0 <= t <= s1

    def near(s: str) -> Iterable[int]:
        if _has_repeat(s):
            return every
        b = _base(s)
        if b is not None and s0 <= b <= s1:
            return (b, t) if today_in and b != t else (b,)
        return (t,) if today_in else ()

    for r in rows:
        rec = r.record
        head = rec.get("hm")
        for s in rec.get("dead", ()):
            for d in near(s):
                if got := rules[d].deadline(s, r.done, head):
                    push((d, r, got[0], got[1], got[2], None))
        for e in rec.get("range", ()):
            a, b = _base(e[0]), _base(e[1])
            if a is None or b is None:
                continue
            for d in range(max(a, s0), min(b, s1) + 1):
                if blk := rules[d].block(e, head):
                    push((d, r, "block", blk[0], blk[1], None))
        for e in rec.get(AGENDA_TS, ()):
            if e[1] and e[4]:
                cands: Iterable[int] = every
            else:
                b = _base(e[0])
                cands = (b,) if b is not None and s0 <= b <= s1 else ()
            for d in cands:
                tm = rules[d].timestamp(e, head)
                if tm is not False:
                    push((d, r, "timestamp", tm if isinstance(tm, str) else None, "",
                          _range_end(e[2])))
        for s in rec.get("sched", ()):
            for d in near(s):
                if got := rules[d].scheduled(s, r.done, head):
                    push((d, r, got[0], got[1], got[2], None))
    per_day: dict[int, list[AgendaItem]] = {d: [] for d in every}
    for d, r, kind, time, leader, end in hits:
        per_day[d].append(AgendaItem(rules[d].iso, r.file, r.line, kind, time, r.title,
                                     r.todo, r.category, r.priority, leader, r.tags, end))
    if skipped_sexps is None:
        skipped_sexps = sum(int(r.record.get("sexp", 0)) for r in rows)
    out = Agenda(today, [], skipped_sexps)
    for d in every:
        items = per_day[d]
        items.sort(key=lambda i: (i.time is None, i.time or "", _TYPE_ORDER[i.type],
                                  i.priority or "B", i.file, i.line))
        out.days.append(AgendaDay(dt.date.fromordinal(d), items))
    return out


def rows_from_records(raw: Iterable[Sequence[Any]]) -> list[AgendaRow]:
    """``AgendaRow``s from the store's ``(file, line, title, todo, todo_type, category,
    priority, tags, record JSON)`` tuples."""
    return [AgendaRow(f, ln, title, todo, tt == "done", cat, pri, tags.split(),
                      json.loads(rec))
            for f, ln, title, todo, tt, cat, pri, tags, rec in raw]
