"""Dates and times in a clause's words, relative to a given ``now``: the day phrases a
person says ("friday", "in two weeks", "end of the month", "march 3", "the 15th"), the
times ("at 9", "half past seven in the evening", "4:30pm", "noon"), and the regexes that
find them.  Common forms are computed here; the long tail goes to ``dateparser``, imported
only when reached (it is slow to import)."""

from __future__ import annotations

import calendar
import datetime as dt
import re

from .. import regex_cache

__all__ = ["DATE_RE", "WD", "add_months", "coming", "parse_time", "resolve_day", "shift_date",
           "week_start_day"]

WD = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_WD_RE = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues|thurs|thur|"
          r"mon|tue|wed|thu|fri|sat|sun)")
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
_MON_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
           r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_UNITS_W = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9}
_NUMS = {"a": 1, "an": 1, **_UNITS_W, "ten": 10, "eleven": 11, "twelve": 12,
         "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "eighteen": 18,
         "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
         "ninety": 90, "couple": 2, "a couple": 2, "a couple of": 2, "couple of": 2,
         "few": 3, "a few": 3, "half a": 0.5, "half an": 0.5, "a half": 0.5}
_TENS_RE = r"(?:twenty|thirty|forty|fourty|fifty)"
_NUM_RE = (r"(?:\d+(?:\.\d+)?|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|half\s+an?|a\s+half|"
           rf"{_TENS_RE}(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|an?|one|two|"
           r"three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
           r"sixteen|eighteen|sixty|ninety)")
"""A count said in digits or words ("three", "forty-five", "a couple of", "half an"):
:func:`_num` reads every form this matches."""
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
        "4th": 4, "fifth": 5, "5th": 5, "last": -1, "final": -1}
_UNIT = {"day": "d", "week": "w", "month": "m", "year": "y", "fortnight": "f"}


def _num(s: str) -> float:
    s = " ".join(s.lower().split())
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return float(s)
    if m := re.fullmatch(rf"({_TENS_RE})[- ](\w+)", s):  # "forty-five", "twenty five"
        return float(_NUMS[m.group(1)] + _UNITS_W.get(m.group(2), 0))
    return float(_NUMS.get(s, 1))


# -- dates -----------------------------------------------------------------------------
def add_months(d: dt.date, n: int) -> dt.date:
    y, m = divmod(d.month - 1 + n, 12)
    y, m = d.year + y, m + 1
    return dt.date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def coming(today: dt.date, wd: int, strict: bool = True) -> dt.date:
    ahead = (wd - today.weekday()) % 7
    return today + dt.timedelta(days=ahead or (7 if strict else 0))


def _month_index(s: str) -> int:
    s = s.lower()[:3]
    return [m[:3] for m in _MONTHS].index(s) + 1


def _future_md(today: dt.date, month: int, day: int, year: int | None = None) -> dt.date | None:
    try:
        if year:
            return dt.date(year, month, day)
        d = dt.date(today.year, month, day)
        return d if d >= today else dt.date(today.year + 1, month, day)
    except ValueError:
        return None


MAX_COMPOSED = 80
"""A composed day phrase is a few words ("the day after the first monday of january"): a
longer one is not read as one (its anchors would be resolved again and again)."""
MAX_DEPTH = 3
"""How many day phrases may be stacked ("two days before the day after …")."""


def resolve_day(phrase: str, now: dt.datetime, week_start: int = 0,
                _depth: int = 0) -> dt.date | None:
    """The date a day phrase names (``friday``, ``next week``, ``march 3``, ``in two weeks``,
    ``end of the month``), relative to ``now``; dateparser for the forms not listed here."""
    p = " ".join(phrase.lower().replace(",", " ").replace("’", "'").split())
    p = re.sub(r"^(?:on|by|for|at|this coming|coming|the)\s+", "", p)
    today = now.date()
    if _depth > MAX_DEPTH:
        return None
    if len(p) <= MAX_COMPOSED and (d := _composed_day(p, now, week_start, _depth)) is not None:
        return d
    if m := re.fullmatch(r"(early|late|mid|sometime|some\s+time)\s+(.+)", p):
        base = resolve_day(m.group(2), now, week_start, _depth + 1)
        if base is None or m.group(1) not in ("late", "mid"):
            return base
        unit = "week" if "week" in m.group(2) else "month" if "month" in m.group(2) else ""
        if unit == "week":
            return base + dt.timedelta(days=4 if m.group(1) == "late" else 2)
        if unit == "month":
            return base.replace(day=25 if m.group(1) == "late" else 15)
        return base
    if (d := _holiday(p, today)) is not None:
        return d
    if p in ("today", "tonight", "this evening", "this afternoon", "this morning",
             "later today", "later", "end of day", "end of the day", "eod"):
        return today
    if re.fullmatch(r"(?:this |next |the )?weekend", p):
        return coming(today, 5, strict=False) + dt.timedelta(days=7 if p.startswith("next")
                                                             and today.weekday() < 5 else 0)
    if p.startswith("tomorrow"):
        return today + dt.timedelta(days=1)
    if p == "the day after tomorrow" or p == "day after tomorrow":
        return today + dt.timedelta(days=2)
    if m := re.fullmatch(rf"(this |next |coming )?({_WD_RE})(?:\s+(?:morning|afternoon|"
                         r"evening|night))?", p):
        wd = [w[:3] for w in WD].index(m.group(2)[:3])
        return coming(today, wd, strict=(m.group(1) or "").strip() != "this" or True)
    if m := re.fullmatch(rf"(?:in\s+)?({_NUM_RE})\s+(day|week|month|year|fortnight)s?'?"
                         r"(?:\s+(?:from now|from today|time))?", p):
        if p.startswith("in ") or "from" in p or "time" in p:
            return shift_date(today, int(_num(m.group(1))), _UNIT[m.group(2)])
    if m := re.fullmatch(r"next (week|month|year)", p):
        u = m.group(1)
        if u == "week":
            start = today - dt.timedelta(days=(today.weekday() - week_start) % 7)
            return start + dt.timedelta(days=7)
        if u == "month":
            return add_months(today.replace(day=1), 1)
        return dt.date(today.year + 1, 1, 1)
    if m := re.fullmatch(rf"(?:the\s+)?end of (?:the |this |next )?(week|month|year|"
                         rf"{_MON_RE})", p):
        u = m.group(1)
        nxt = "next" in p
        if u == "week":
            end = today + dt.timedelta(days=(week_start + 6 - today.weekday()) % 7)
            if week_start == 0:  # a Monday-start week's working end is Friday
                end = today + dt.timedelta(days=(4 - today.weekday()) % 7)
            return end + dt.timedelta(days=7 if nxt else 0)
        if u == "month":
            base = add_months(today.replace(day=1), 1 if nxt else 0)
            return base.replace(day=calendar.monthrange(base.year, base.month)[1])
        if u == "year":
            return dt.date(today.year + (1 if nxt else 0), 12, 31)
        mo = _month_index(u)
        y = today.year if (mo, 31) >= (today.month, today.day) or mo >= today.month \
            else today.year + 1
        return dt.date(y, mo, calendar.monthrange(y, mo)[1])
    if m := re.fullmatch(rf"(?:(?:early|beginning of|start of)\s+)?({_MON_RE})", p):
        mo = _month_index(m.group(1))
        return _future_md(today, mo, 1) if mo != today.month else today
    if m := re.fullmatch(rf"({_MON_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+(\d{{4}}))?", p):
        return _future_md(today, _month_index(m.group(1)), int(m.group(2)),
                          int(m.group(3)) if m.group(3) else None)
    if m := re.fullmatch(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON_RE})(?:\s+(\d{{4}}))?",
                         p):
        return _future_md(today, _month_index(m.group(2)), int(m.group(1)),
                          int(m.group(3)) if m.group(3) else None)
    if m := re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", p):
        try:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    if m := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", p):  # "the 15th": this month or next
        day = int(m.group(1))
        for k in (0, 1, 2):
            base = add_months(today.replace(day=1), k)
            if 1 <= day <= calendar.monthrange(base.year, base.month)[1] and \
                    base.replace(day=day) >= today:
                return base.replace(day=day)
        return None
    return _dateparser_day(p, now)


_HOLIDAYS = {"christmas": (12, 25), "christmas day": (12, 25), "xmas": (12, 25),
             "christmas eve": (12, 24), "xmas eve": (12, 24), "boxing day": (12, 26),
             "new year's eve": (12, 31), "new years eve": (12, 31), "nye": (12, 31),
             "new year's day": (1, 1), "new years day": (1, 1), "new year": (1, 1),
             "new year's": (1, 1), "halloween": (10, 31), "valentine's day": (2, 14),
             "valentines day": (2, 14), "valentine's": (2, 14)}
_HOLIDAY_RE = (r"(?:christmas(?:\s+(?:day|eve))?|xmas(?:\s+eve)?|boxing\s+day|new\s+year'?s?"
               r"(?:\s+(?:eve|day))?|nye|halloween|valentine'?s(?:\s+day)?|easter(?:\s+(?:sunday|"
               r"monday))?|good\s+friday|thanksgiving)")
"""Fixed-date and computed holidays a person plans by ("before christmas", "by easter")."""


def _easter(year: int) -> dt.date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ll = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ll) // 451
    month, day = divmod(h + ll - 7 * m + 114, 31)
    return dt.date(year, month, day + 1)


def _holiday(p: str, today: dt.date) -> dt.date | None:
    """The next date of a holiday named by ``p`` (this year's, or next year's once past)."""
    if not re.fullmatch(_HOLIDAY_RE, p):
        return None
    for year in (today.year, today.year + 1):
        if p in _HOLIDAYS:
            mo, day = _HOLIDAYS[p]
            d = dt.date(year, mo, day)
        elif p.startswith("easter") or p == "good friday":
            shift = {"easter monday": 1, "good friday": -2}.get(p, 0)
            d = _easter(year) + dt.timedelta(days=shift)
        else:  # thanksgiving: the fourth thursday of november
            d = dt.date(year, 11, 1) + dt.timedelta(days=(3 - dt.date(year, 11, 1).weekday()) % 7
                                                     + 21)
        if d >= today:
            return d
    return None


def week_start_day(today: dt.date, week_start: int, weeks: int = 0) -> dt.date:
    """The first day of the week ``weeks`` after the one holding ``today`` (a week begins on
    ``week_start``: 0 Monday … 6 Sunday, the ``[gtd] week_start`` setting)."""
    return today - dt.timedelta(days=(today.weekday() - week_start) % 7) + \
        dt.timedelta(days=7 * weeks)


def _wd_index(name: str) -> int:
    return [w[:3] for w in WD].index(name.lower()[:3])


def _months_of(ref: str | None, today: dt.date) -> list[tuple[int, int]]:
    """The (year, month)s a month reference may mean, in order of preference: "next month"
    one; "the month" this one, then the next (once its day has passed); "march" this year's,
    then next year's; none said: this month, then the next."""
    first = today.replace(day=1)
    here = [(first.year, first.month)]
    nxt = add_months(first, 1)
    later = [(nxt.year, nxt.month)]
    if ref is None or re.fullmatch(r"(?:the|this)\s+month", ref):
        return here + later
    if re.search(r"\b(?:next|following)\b", ref):
        return later
    m = re.fullmatch(rf"({_MON_RE})(?:\s+(\d{{4}}))?", ref)
    if m is None:
        return here + later
    mo = _month_index(m.group(1))
    if m.group(2):
        return [(int(m.group(2)), mo)]
    return [(today.year, mo), (today.year + 1, mo)]


def _nth_in_month(year: int, month: int, n: int, kind: str) -> dt.date | None:
    """The ``n``-th (-1: last) day of ``kind`` (a weekday, "day", or a working day) in a
    month."""
    last = calendar.monthrange(year, month)[1]
    days = [dt.date(year, month, i) for i in range(1, last + 1)]
    k = " ".join(kind.split())
    if re.fullmatch(_WD_RE, k):
        days = [d for d in days if d.weekday() == _wd_index(k)]
    elif k != "day":  # a weekday / working day / business day: Monday to Friday
        days = [d for d in days if d.weekday() < 5]
    if n > len(days) or not days:
        return None
    return days[n - 1] if n > 0 else days[n]


def _composed_day(p: str, now: dt.datetime, week_start: int, depth: int = 0) -> dt.date | None:
    """The day phrases built from others: a day counted in a month (:data:`_NTH`), a weekday
    in a named week (:data:`_IN_WEEK`), a day counted from another (:data:`_OFFSET`); None
    when ``p`` is none of them."""
    today = now.date()
    if m := re.fullmatch(r"((?:next|this)\s+month)\s+(?:on\s+)?(?:the\s+)?(.+)", p):
        p = f"{m.group(2)} of {m.group(1)}"  # "next month on the 20th": the 20th of it
    if m := _NTH_RE.fullmatch(p):
        if m.group("month2"):  # "the 20th of next month", "the first of january"
            got = None
            for y, mo in _months_of(m.group("month2"), today):
                last = calendar.monthrange(y, mo)[1]
                day = int(m.group("dom")) if m.group("dom") else \
                    1 if m.group("edge").lower() == "first" else last
                if 1 <= day <= last:  # "0 of the month" is no day
                    got = dt.date(y, mo, day)
                    if got >= today:
                        return got
            return got
        n = _ORD[m.group("ord")]
        if n == -1 and m.group("month") is None:
            return None  # "last friday": a day gone by, not one to plan
        got = None
        for y, mo in _months_of(m.group("month"), today):
            got = _nth_in_month(y, mo, n, m.group("kind"))
            if got is not None and got >= today:
                return got
        return got
    if m := _IN_WEEK_RE.fullmatch(p):
        if wd := m.group("wd3"):  # "thursday after next": the coming one, then a week on
            return coming(today, _wd_index(wd)) + dt.timedelta(days=7)
        week = (m.group("week") or m.group("week2") or m.group("week3")).lower()
        k = 2 if "after" in week else 0 if week.startswith("this") else 1
        start = week_start_day(today, week_start, k)
        wd = m.group("wd") or m.group("wd2")
        if wd is None:
            return start if k else None  # "this week" alone is no one day
        return start + dt.timedelta(days=(_wd_index(wd) - week_start) % 7)
    if m := _OFFSET_RE.fullmatch(p):
        if m.group("u5"):  # "this time next week"
            return shift_date(today, 1, _UNIT[m.group("u5").lower()])
        if m.group("anchor4"):  # British "friday week", "friday fortnight"
            days = 7 if m.group("u4").lower() == "week" else 14
            return coming(today, _wd_index(m.group("anchor4"))) + dt.timedelta(days=days)
        if m.group("dir3"):  # "the day after the 14th"
            anchor = resolve_day(m.group("anchor3"), now, week_start, depth + 1)
            if anchor is None:
                return None
            return anchor + dt.timedelta(days=1 if m.group("dir3").lower() == "after" else -1)
        raw = (m.group("anchor") or m.group("anchor2")).strip()
        anchor = today if raw in ("now", "today") else \
            resolve_day(raw, now, week_start, depth + 1)
        if anchor is None:
            return None
        n = int(_num(m.group("n") or m.group("n2")))
        unit = _UNIT[(m.group("u") or m.group("u2")).lower()]
        return shift_date(anchor, -n if (m.group("dir") or "").lower() == "before" else n,
                          unit)
    return None


def _dateparser_day(p: str, now: dt.datetime) -> dt.date | None:
    """The long tail ("a week from friday", "12/18"), through dateparser (slow to import:
    only reached when the forms above did not match)."""
    if not re.search(r"\d|" + _MON_RE + "|" + _WD_RE, p):
        return None
    import dateparser

    v = dateparser.parse(p, languages=["en"], settings={
        "RELATIVE_BASE": now, "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False, "PREFER_DAY_OF_MONTH": "first"})
    return v.date() if v else None


def shift_date(d: dt.date, n: int, unit: str) -> dt.date:
    if unit == "d":
        return d + dt.timedelta(days=n)
    if unit == "w":
        return d + dt.timedelta(days=7 * n)
    if unit == "f":
        return d + dt.timedelta(days=14 * n)
    if unit == "m":
        return add_months(d, n)
    return add_months(d, 12 * n)


_ORDW_RE = r"(?:first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last|final)"
_MONTH_REF = (rf"(?:(?:the|this)\s+month|(?:the\s+)?(?:next|following)\s+month|{_MON_RE}"
              r"(?:\s+\d{4})?)")
"""A month a day is counted in: this (or "the") month, next month, or a named one."""
_DAY_KIND = rf"(?:{_WD_RE}|day|week\s?day|work(?:ing)?\s?day|business\s+day)"
_NTH = (rf"{_ORDW_RE}\s+{_DAY_KIND}\s+(?:of|in)\s+{_MONTH_REF}"
        rf"|(?:first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th)\s+{_WD_RE}(?!\s+(?:of|in)\b)"
        rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+of\s+{_MONTH_REF}|(?:first|last)\s+of\s+{_MONTH_REF}"
        rf"|(?:next|this)\s+month\s+(?:on\s+)?(?:the\s+)?(?:{_ORDW_RE}\s+{_DAY_KIND}"
        r"|\d{1,2}(?:st|nd|rd|th))")
"""A day counted inside a month: "the second friday of next month", "the last working day
of the month", "the first monday in march", "the 20th of next month"; a bare "the third
tuesday" is this month's, or next month's once it has passed (never "last friday": that one
is behind us)."""
_WEEK_REF = r"(?:(?:the\s+)?week\s+after\s+next|(?:the\s+)?following\s+week|next\s+week|this\s+week)"
_IN_WEEK = (rf"{_WD_RE}\s+(?:of\s+|in\s+|on\s+)?{_WEEK_REF}|{_WEEK_REF}\s+(?:on\s+)?{_WD_RE}"
            rf"|{_WD_RE}\s+after\s+next")
"""A weekday inside a named week ("friday next week", "the week after next on tuesday",
"thursday after next"), the week starting on the configured day."""
_ANCHOR = (rf"{_NTH}|{_IN_WEEK}|{_HOLIDAY_RE}|(?:(?:this|next|coming)\s+)?{_WD_RE}|tomorrow|today|now"
           r"|the\s+\d{1,2}(?:st|nd|rd|th)"
           rf"|{_MON_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON_RE}")
_OFF_UNIT = r"(?:day|week|fortnight|month|year)"
_OFFSET = (rf"{_NUM_RE}\s+{_OFF_UNIT}s?\s+(?:from|after|before|on)\s+(?:the\s+)?(?:{_ANCHOR})"
           rf"|{_NUM_RE}\s+{_OFF_UNIT}s?\s+(?:today|tomorrow)"
           rf"|(?:the\s+)?day\s+(?:after|before)\s+(?:the\s+)?(?:{_ANCHOR})"
           rf"|{_WD_RE}\s+(?:week|fortnight)\b|this\s+time\s+next\s+(?:week|month|year)")
"""A day counted from another ("a fortnight from friday", "two days before the 20th", "a
week on monday", "a week tomorrow", "the day after the first monday of january", British
"friday week"): any day phrase above may be the anchor."""
_OFFSET_RE = regex_cache.compile(
    rf"(?P<n>{_NUM_RE})\s+(?P<u>{_OFF_UNIT})s?\s+(?P<dir>from|after|before|on)\s+(?P<anchor>.+)"
    rf"|(?P<n2>{_NUM_RE})\s+(?P<u2>{_OFF_UNIT})s?\s+(?P<anchor2>today|tomorrow)"
    r"|day\s+(?P<dir3>after|before)\s+(?P<anchor3>.+)"
    rf"|(?P<anchor4>{_WD_RE})\s+(?P<u4>week|fortnight)"
    r"|this\s+time\s+next\s+(?P<u5>week|month|year)", re.I)
_NTH_RE = regex_cache.compile(rf"(?P<ord>{_ORDW_RE})\s+(?P<kind>{_DAY_KIND})(?:\s+(?:of|in)\s+"
                     rf"(?P<month>{_MONTH_REF}))?"
                     rf"|(?:(?P<dom>\d{{1,2}})(?:st|nd|rd|th)?|(?P<edge>first|last))\s+of\s+"
                     rf"(?P<month2>{_MONTH_REF})", re.I)
_IN_WEEK_RE = regex_cache.compile(
    rf"(?P<wd>{_WD_RE})\s+(?:of\s+|in\s+|on\s+)?(?P<week>{_WEEK_REF})"
    rf"|(?P<week2>{_WEEK_REF})(?:\s+on)?\s+(?P<wd2>{_WD_RE})"
    rf"|(?P<wd3>{_WD_RE})\s+after\s+next|(?P<week3>{_WEEK_REF})", re.I)
_DAY_PHRASE = (
    rf"{_OFFSET}|{_NTH}|{_IN_WEEK}|(?:the\s+)?week\s+after\s+next|"
    r"(?:(?:early|late|mid|sometime|some\s+time)\s+)?(?:next|this)\s+(?:week|month)"
    rf"|(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|next\s+)?(?:week|month|year|{_MON_RE})"
    rf"|(?:(?:this|next|coming)\s+)?{_WD_RE}(?:\s+(?:morning|afternoon|evening|night))?"
    r"|(?:this|next|the)\s+weekend"
    r"|the\s+day\s+after\s+tomorrow|tomorrow(?:\s+(?:morning|afternoon|evening|night))?"
    r"|today|tonight|this\s+(?:morning|afternoon|evening)|later\s+today|end\s+of\s+(?:the\s+)?day"
    rf"|in\s+{_NUM_RE}\s+(?:day|week|month|year|fortnight)s?(?:'?\s+time|\s+from\s+(?:now|today))?"
    rf"|{_NUM_RE}\s+(?:day|week|month|year|fortnight)s?(?:\s+from\s+(?:now|today)|'\s+time)"
    r"|next\s+(?:week|month|year)"
    rf"|{_MON_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON_RE}(?:\s+\d{{4}})?"
    r"|\d{4}-\d\d-\d\d"
    r"|the\s+\d{1,2}(?:st|nd|rd|th)"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?"  # the long tail, through dateparser
)
_MONTH_ONLY = rf"(?:early\s+|beginning\s+of\s+|start\s+of\s+)?{_MON_RE}"
_DL_CUE = r"(?:due(?:\s+(?:on|by|date\s+is))?|by|before|no\s+later\s+than|deadline(?:\s+(?:is|of|on))?|until|til|till)"
_SC_CUE = (r"(?:on|for|at|from|starting(?:\s+from)?|beginning|start(?:ing)?\s+on|"
           r"first\s+one\s+(?:is|on)|next\s+one\s+(?:is|on)|to|into|until)")
DATE_RE = regex_cache.compile(
    rf"(?:\b(?P<cue>{_DL_CUE}|{_SC_CUE})\s+)?(?:(?:the\s+)?)?\b(?P<day>{_DAY_PHRASE})\b"
    rf"|\b(?P<mcue>{_DL_CUE}|in|into|to|until)\s+(?P<month>{_MONTH_ONLY})\b(?!\s+\d)"
    rf"|\b(?P<hcue>{_DL_CUE}|{_SC_CUE}|over|around|after)\s+(?:the\s+)?(?P<holiday>{_HOLIDAY_RE})\b"
    r"(?=\s*$|\s*[,.;:!?)]|\s+(?:at|to|and|or|so|then|remind|please|this|next|i|we|in|on|for|"
    r"the|is|it)\b)",
    re.I)
"""A day phrase with its cue; a month alone ("by march"); a holiday only after a cue and
before no noun of its own ("before christmas", not "the christmas present")."""

# -- times -----------------------------------------------------------------------------
_HOURW = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten "
                                     "eleven twelve".split())}
_HOUR_RE = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_PERIOD = r"(?:in\s+the\s+(?P<per>morning|afternoon|evening)|at\s+night|tonight)"
_TIME_RE = regex_cache.compile(
    rf"(?:\b(?:at|@|around|by)\s+)?\b(?P<h>\d{{1,2}})(?::(?P<m>\d\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w)"
    rf"|(?:\b(?:at|around)\s+)?\b(?P<h2>\d{{1,2}}):(?P<m2>\d\d)\b"
    rf"|(?:\b(?:at|around)\s+)?\b(?P<frac>half|quarter|\d{{1,2}}|ten|five|twenty)\s+(?:minutes\s+)?"
    rf"(?P<pt>past|to|after)\s+(?P<h3>{_HOUR_RE})\b"
    rf"|\b(?:at|around)\s+(?P<h4>{_HOUR_RE})(?:\s*o'?clock)?\b(?!\s*(?:days?|weeks?|months?|"
    r"years?|minutes?|mins?|hours?|%|people|of\b|/|\.\d))"
    rf"|\b(?P<h5>{_HOUR_RE})(?:\s*o'?clock)?(?=\s+(?:in\s+the\s+(?:morning|afternoon|evening)|"
    r"at\s+night|tonight))"
    r"|\b(?:at\s+)?(?P<word>noon|midday|midnight)\b", re.I)
_PERIOD_RE = regex_cache.compile(rf"\s*,?\s*{_PERIOD}\b", re.I)


def _hour(s: str) -> int:
    return int(s) if s.isdigit() else _HOURW[s.lower()]


def parse_time(text: str, context: str | None = None) -> tuple[dt.time, tuple[int, int]] | None:
    """The time said in ``text`` and its span; ``context`` (default ``text``) is the whole
    clause, whose words set the part of the day when the time has none of its own ("every
    weekday morning at 6:30", once the repeater's words are taken)."""
    m = _TIME_RE.search(text)
    if not m:
        return None
    start, end = m.span()
    if m.group("word"):
        return dt.time(0 if m.group("word").lower() == "midnight" else 12), (start, end)
    minute = 0
    ap = ""
    if m.group("h"):
        h, minute = int(m.group("h")), int(m.group("m") or 0)
        ap = m.group("ap").lower().replace(".", "")
    elif m.group("h2"):
        h, minute = int(m.group("h2")), int(m.group("m2"))
    elif m.group("h3"):
        h = _hour(m.group("h3"))
        f = m.group("frac").lower()
        mins = 30 if f == "half" else 15 if f == "quarter" else \
            int(f) if f.isdigit() else int(_NUMS.get(f, 0))
        if m.group("pt").lower() == "to":
            h, minute = (h - 1) % 24, 60 - mins
        else:
            minute = mins
    else:
        h = _hour(m.group("h4") or m.group("h5"))
    per = _PERIOD_RE.match(text, end)
    period = ""
    if per:
        period = (per.group("per") or "evening").lower()
        end = per.end()
    elif re.search(r"\btonight\b|\bevening\b", context or text, re.I):
        period = "evening"
    elif re.search(r"\bmornings?\b|\bbreakfast\b|\bdawn\b", context or text, re.I):
        period = "morning"  # "every weekday morning at 6:30": not half past six at night
    if h > 23 or minute > 59:
        return None
    if (ap == "pm" or period in ("afternoon", "evening")) and h < 12:
        h += 12
    elif ap == "am" and h == 12:
        h = 0
    elif not ap and not period and 1 <= h <= 6 and not (m.group("h2") or "").startswith("0"):
        h += 12  # "at 4": the afternoon
    if h > 23:
        return None
    return dt.time(h, minute), (start, end)
