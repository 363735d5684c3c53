"""Org timestamps: recognise them where org-element does, read and write them.

Recognition follows ``org-element-timestamp-parser`` (Org 9.5.5): any bracket
pair around ``YYYY-MM-DD`` (mismatched ``<...]`` included), optional day name in
any language, time or time range, repeater (``+1w ++1d .+2d``, habit ``/3d``),
warning (``-2d --1d``) and date ranges ``<a>--<b>``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from ..textscan import next_of
from .model import Timestamp

__all__ = ["format_timestamp", "match_timestamp", "parse_timestamp"]

# org-element--timestamp-regexp is three alternatives:
#   [\[<]\d{4}-\d{2}-\d{2}(?: [^\n]*?)?[\]>]
#   <[0-9]+-[0-9]+-[0-9]+[^>\n]+?\+[0-9]+[dwmy]>
#   <%%\([^>\n]+\)>
# Each scans from its opening to the line's first closer, so tried at every ``<`` of a
# line with no closer (``<2026-01-01 <2026-01-01 …``) the regexp is quadratic.  _ts_check
# matches only the fixed-width openings by regexp and answers the rest with textscan.next_of,
# whose scans are shared between the positions of one string.
_TS_DATE_OPEN = re.compile(r"[\[<]\d{4}-\d{2}-\d{2}", re.ASCII)
_TS_REPEAT_OPEN = re.compile(r"<[0-9]+-[0-9]+-[0-9]", re.ASCII)
_TS_REPEAT_TAIL = re.compile(r"\+[0-9]+[dwmy]>", re.ASCII)


def _ts_check(s: str, pos: int) -> bool:
    """Whether org-element--timestamp-regexp matches at ``pos``, in time independent of
    the distance to the line's closer (amortised over the positions of ``s``)."""
    m = _TS_DATE_OPEN.match(s, pos)
    if m is not None:
        e = m.end()
        if e < len(s) and s[e] in "]>":
            return True
        # (?: [^\n]*?)?[\]>]: a space, then a closer before the end of the line
        if e < len(s) and s[e] == " " and next_of(s, e + 1, "]>") < next_of(s, e + 1, "\n"):
            return True
    if s.startswith("<%%(", pos):
        # [^>\n]+\)>: the line's first > or newline is a >, right after a ) that is
        # not the first character after the parenthesis
        c = next_of(s, pos + 4, ">\n")
        if c < len(s) and s[c] == ">" and c - 1 > pos + 4 and s[c - 1] == ")":
            return True
    m = _TS_REPEAT_OPEN.match(s, pos)
    if m is not None:
        # [0-9]*[^>\n]+?\+[0-9]+[dwmy]>: the first > or newline after the third field's
        # first digit is a >, ending +N[dwmy] whose + is not the first character there
        q = m.end()
        c = next_of(s, q, ">\n")
        if c < len(s) and s[c] == ">" and _repeat_plus(s, c) > q:
            return True
    return False


_PLUS_CACHE: list[tuple[str, int, int]] = []


def _repeat_plus(s: str, c: int) -> int:
    """Index of the ``+`` of a ``+N[dwmy]`` ending just before the ``>`` at ``c``, or -1.

    Remembered for the last ``>`` asked about, since every opening on the line asks
    about the same one (a long digit run is then walked once)."""
    if _PLUS_CACHE and _PLUS_CACHE[0][0] is s and _PLUS_CACHE[0][1] == c:
        return _PLUS_CACHE[0][2]
    k = c - 1  # the unit; digits before it, then the +
    while k > 0 and "0" <= s[k - 1] <= "9":
        k -= 1
    plus = k - 1
    if plus < 0 or _TS_REPEAT_TAIL.match(s, plus) is None:  # it can only end at c
        plus = -1
    _PLUS_CACHE[:] = [(s, c, plus)]
    return plus
_TS_RAW = re.compile(r"([<\[](%%)?[^\n]*?)[\]>](?:--([<\[][^\n]*?[\]>]))?")
# org-parse-time-string's org-ts-regexp0
_DATE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})( +[^\]+0-9>\r\n -]+)?( +(\d{1,2}):(\d{2}))?", re.ASCII
)
_TIME_RANGE = re.compile(r"[012]?[0-9]:[0-5][0-9](-([012]?[0-9]):([0-5][0-9]))")
_REPEATER = re.compile(r"([.+]?\+)([0-9]+)([hdwmy])(/[0-9]+[hdwmy])?")
_WARNING = re.compile(r"(-)?-([0-9]+)([hdwmy])")

# The common shape, ``<2026-11-30 Mon>`` or ``[2026-11-30 Mon 10:00]``: no range,
# repeater or warning can be in it, and the general path reads the same fields.
_SIMPLE = re.compile(
    r"([<\[])(\d{4})-(\d{2})-(\d{2})(?: [A-Za-z]+)?(?: (\d{1,2}):(\d{2}))?[\]>]", re.ASCII
)

# raw simple timestamp -> (start, has_time), or False when a field is out of range
# (datetimes are immutable, so sharing them is safe)
_SIMPLE_CACHE: dict[str, tuple[dt.datetime, bool] | Literal[False]] = {}
_SIMPLE_CACHE_MAX = 4096


def _simple_start(m: re.Match[str]) -> tuple[dt.datetime, bool] | Literal[False]:
    _, y, mo, d, hour, minute = m.groups()
    try:
        if hour is None:
            start = dt.datetime(int(y), int(mo), int(d))
        else:
            start = dt.datetime(int(y), int(mo), int(d), int(hour), int(minute))
    except ValueError:  # out-of-range fields: _mkdate carries them over
        return False
    if start.year > 9998:  # _mkdate clamps years
        return False
    return start, hour is not None


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _mkdate(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> dt.datetime:
    """Like Emacs ``encode-time``: out-of-range fields carry over instead of failing."""
    yy, mm = divmod(y * 12 + (mo - 1), 12)
    yy = min(max(yy, 1), 9998)
    base = dt.datetime(yy, mm + 1, 1)
    return base + dt.timedelta(days=d - 1, hours=h, minutes=mi)


def _parse_one(part: str) -> tuple[dt.datetime, bool] | None:
    m = _DATE.search(part)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(5):
        return _mkdate(y, mo, d, int(m.group(6)), int(m.group(7))), True
    return _mkdate(y, mo, d), False


def _build(raw: str, start_part: str, end_part: str | None) -> Timestamp | None:
    one = _parse_one(start_part)
    if one is None:
        return None
    start, has_time = one
    end: dt.datetime | None = None
    if end_part is not None:
        two = _parse_one(end_part)
        if two is not None:
            end = two[0]
    else:
        tr = _TIME_RANGE.search(start_part)
        if tr:
            end = start.replace(hour=0, minute=0) + dt.timedelta(
                hours=int(tr.group(2)), minutes=int(tr.group(3))
            )
    rep = _REPEATER.search(raw)
    warn = _WARNING.search(raw)
    return Timestamp(
        raw=raw,
        active=raw.startswith("<"),
        start=start,
        has_time=has_time,
        end=end,
        repeater=rep.group(0) if rep else None,
        warning=warn.group(0) if warn else None,
    )


def match_timestamp(s: str, pos: int) -> tuple[int, Timestamp | None] | None:
    """Timestamp object at ``pos`` of ``s``: (end, timestamp) or None.

    The timestamp is None for diary sexps (``<%%(...)>``), which are objects
    but have no date of their own.
    """
    m = _SIMPLE.match(s, pos)
    if m is not None:
        end = m.end()
        if not s.startswith("--", end):
            raw = s[pos:end]
            got = _SIMPLE_CACHE.get(raw)
            if got is None:
                got = _simple_start(m)
                if len(_SIMPLE_CACHE) >= _SIMPLE_CACHE_MAX:
                    _SIMPLE_CACHE.clear()
                _SIMPLE_CACHE[raw] = got
            if got is not False:
                return end, Timestamp(raw, raw[0] == "<", got[0], got[1])
    if not _ts_check(s, pos):
        return None
    m = _TS_RAW.match(s, pos)
    if not m:
        return None
    if m.group(2):
        return m.end(), None
    return m.end(), _build(m.group(0), m.group(1), m.group(3))


def parse_timestamp(raw: str) -> Timestamp | None:
    """Parse one timestamp string such as ``<2026-11-30 Mon 10:00 +1w>``; None if not one."""
    raw = raw.strip()
    got = match_timestamp(raw, 0)
    if got is None or got[1] is None:
        return None
    end, ts = got
    if end != len(raw):
        return None
    return ts


def format_timestamp(
    value: dt.date | dt.datetime,
    active: bool = True,
    with_time: bool = False,
    repeater: str | None = None,
) -> str:
    """Org text for a date/datetime: ``<2026-11-30 Mon>``, ``[2026-11-30 Mon 14:05]``.

    Day names are English so files stay readable by any Org setup; ``with_time`` is
    honoured only for datetimes.
    """
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} {_DAYS[value.weekday()]}"
    if with_time and isinstance(value, dt.datetime):
        text += f" {value.hour:02d}:{value.minute:02d}"
    if repeater:
        text += f" {repeater}"
    return f"<{text}>" if active else f"[{text}]"
