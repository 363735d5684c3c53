"""Pure text edits of one Org entry: each returns the new text of the whole file, with
every byte outside the edited span left as it was.

They work on ``OrgDocument.text`` (surrogate-escaped, so invalid bytes survive) and the
spans the parser recorded; they never re-serialise a parsed tree.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
import unicodedata

from ..org.model import Heading, Timestamp

__all__ = [
    "add_log_note",
    "append_text",
    "before_blank_lines",
    "canonical_key",
    "insert_entry",
    "newline_of",
    "prop_line",
    "set_planning",
    "set_property",
    "set_tags",
    "set_todo_keyword",
    "shift_repeated",
]

TAGS_COLUMN = 77  # org-tags-column -77: tags end at column 77
_TAGS_RE = re.compile(r"([ \t]+)(:[^\s:]+(?::[^\s:]+)*:)([ \t]*)$")
_DAYNAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def newline_of(text: str) -> str:
    """The file's line ending (CRLF files stay CRLF)."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _headline(text: str, h: Heading) -> tuple[int, int]:
    """Span of the headline line without its line ending."""
    end = h.headline_end
    if end > h.start and text[end - 1] == "\r":
        end -= 1
    return h.start, end


def _after_line(text: str, pos: int) -> tuple[int, str]:
    """Position just after the line ending at/after ``pos``, and a prefix to add
    when the text ends there without a newline."""
    nl = text.find("\n", pos)
    if nl < 0:
        return len(text), newline_of(text)
    return nl + 1, ""


def meta_end(text: str, h: Heading) -> tuple[int, str]:
    """Where lines go that belong right after the headline, planning line and property
    drawer (e.g. a :LOGBOOK:), and the line ending to put first if the file ends there."""
    for span in (h.drawer_span, h.planning_span):
        if span:
            e = span[1]
            return (e, "") if text[e - 1:e] == "\n" else (e, newline_of(text))
    return _after_line(text, h.headline_end)


def _planning_end(text: str, h: Heading) -> tuple[int, str]:
    """Where a new property drawer goes: after the headline and planning line."""
    if h.planning_span:
        e = h.planning_span[1]
        return (e, "") if text[e - 1:e] == "\n" else (e, newline_of(text))
    return _after_line(text, h.headline_end)


# --- headline line ---------------------------------------------------------

def set_todo_keyword(text: str, h: Heading, new: str | None) -> str:
    """Put ``new`` (or nothing) where the TODO keyword goes in the headline."""
    s, e = _headline(text, h)
    line = text[s:e]
    m = re.match(r"\*+[ \t]+", line)
    if not m:
        return text
    pos = m.end()
    if h.todo:
        km = re.match(re.escape(h.todo) + r"(?:[ \t]+|$)", line[pos:])
        if km:
            rest = line[pos + km.end():]
            line = line[:pos] + (f"{new} " if new else "") + rest
            return _splice(text, s, e, line.rstrip() if not rest else line)
    if new:
        line = line[:pos] + new + (" " if line[pos:] else "") + line[pos:]
    return _splice(text, s, e, line)


def set_priority(text: str, h: Heading, new: str | None) -> str:
    """Put the ``[#X]`` cookie (or none) after the TODO keyword, where Org puts it."""
    s, e = _headline(text, h)
    line = text[s:e]
    m = re.match(r"\*+[ \t]+" + (re.escape(h.todo) + r"(?:[ \t]+|$)" if h.todo else ""), line)
    if not m:
        return text
    pos = m.end()
    rest = re.sub(r"^\[#[^\]]\][ \t]*", "", line[pos:])
    cookie = f"[#{new}]" if new else ""
    if h.todo and pos == len(line.rstrip()) and not line.endswith((" ", "\t")):
        line = line.rstrip() + (" " + cookie if cookie else "")
    else:
        line = line[:pos] + cookie + (" " if cookie and rest else "") + rest
    return _splice(text, s, e, line.rstrip() if not rest else line)


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def set_tags(text: str, h: Heading, tags: list[str]) -> str:
    """Replace the headline's local tags, aligned as Org aligns them."""
    s, e = _headline(text, h)
    line = text[s:e]
    m = _TAGS_RE.search(line) if h.tags else None
    head = line[: m.start()] if m else line.rstrip(" \t")
    if not tags:
        return _splice(text, s, e, head)
    tagstr = ":" + ":".join(tags) + ":"
    col = _width(head)
    pad = max(1, TAGS_COLUMN - _width(tagstr) - col)
    return _splice(text, s, e, head + " " * pad + tagstr)


# --- planning line ---------------------------------------------------------

def set_planning(text: str, h: Heading, key: str, ts: str | None) -> str:
    """Set (or with None remove) SCHEDULED/DEADLINE/CLOSED on the planning line."""
    key = key.upper()
    nl = newline_of(text)
    if h.planning_span is None:
        if ts is None:
            return text
        pos, prefix = _after_line(text, h.headline_end)
        return _splice(text, pos, pos, f"{prefix}{key}: {ts}{nl}" if prefix == "" else
                       f"{prefix}{key}: {ts}")
    ps, pe = h.planning_span
    line = text[ps:pe]
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    item = re.compile(rf"{key}:[ \t]*([<\[][^\]>]*[\]>](?:--[<\[][^\]>]*[\]>])?)[ \t]*")
    m = item.search(body)
    if ts is None:
        if not m:
            return text
        body = (body[: m.start()] + body[m.end():]).rstrip()
        if not body.strip():
            return _splice(text, ps, pe, "")
    elif m:
        body = body[: m.start(1)] + ts + body[m.end(1):]
    elif key == "CLOSED":
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        body = f"{indent}CLOSED: {ts} {body[len(indent):]}"
    else:
        body = f"{body.rstrip()} {key}: {ts}"
    return _splice(text, ps, pe, body + ending)


# --- property drawer ----------------------------------------------------------

def set_property(text: str, h: Heading, key: str, value: str | None) -> str:
    """Set (or with None delete) a property in the entry's drawer, creating it if needed."""
    nl = newline_of(text)
    if h.drawer_span:
        ds, de = h.drawer_span
        drawer = text[ds:de]
        lines = drawer.splitlines(keepends=True)
        pat = re.compile(rf"^([ \t]*):{re.escape(key)}:(?:[ \t]|$)", re.I)
        for i, ln in enumerate(lines[1:-1], 1):
            m = pat.match(ln)
            if m:
                end = ln[len(ln.rstrip("\r\n")):]
                lines[i] = "" if value is None else m.group(1) + prop_line(key, value) + end
                return _splice(text, ds, de, "".join(lines))
        if value is None:
            return text
        last = lines[-1]
        indent = last[: len(last) - len(last.lstrip(" \t"))]
        lines.insert(len(lines) - 1, indent + prop_line(key, value) + nl)
        return _splice(text, ds, de, "".join(lines))
    if value is None:
        return text
    pos, prefix = _planning_end(text, h)
    block = f":PROPERTIES:{nl}{prop_line(key, value)}{nl}:END:"
    return _splice(text, pos, pos, prefix + block + ("" if prefix else nl))


ORG_PROPERTY_CASE = {"effort": "Effort"}
"""Property keys Org itself writes in mixed case (``org-effort-property``: what
``org-set-effort`` writes); every other key keeps the spelling given.  Org reads keys
case-blind, so one spelling per key keeps a drawer from holding two."""


def canonical_key(key: str) -> str:
    """``key`` as Org spells it (``EFFORT`` and ``effort`` are ``Effort``)."""
    return ORG_PROPERTY_CASE.get(key.lower(), key)


def prop_line(key: str, value: str) -> str:
    """A node-property line as Org writes it (``org-property-format`` "%-10s %s")."""
    return f"{':' + key + ':':<10} {value}".rstrip()


# --- logbook and body ----------------------------------------------------------

def add_log_note(text: str, h: Heading, note: str, into_drawer: bool = True) -> str:
    """Add a ``- State ...`` note as Org does: newest first, in :LOGBOOK: when configured."""
    nl = newline_of(text)
    pos, prefix = meta_end(text, h)
    if into_drawer:
        m = re.compile(r"[ \t]*:LOGBOOK:[ \t]*\r?\n").match(text, pos)
        if m and re.search(r"^[ \t]*:END:[ \t]*$", text[m.end():h.end], re.M | re.I):
            return _splice(text, m.end(), m.end(), note + nl)
        block = f":LOGBOOK:{nl}{note}{nl}:END:"
    else:
        block = note
    return _splice(text, pos, pos, prefix + block + ("" if prefix else nl))


def append_text(text: str, h: Heading, addition: str) -> str:
    """Append lines at the end of the entry's own section (before its first child),
    keeping the blank lines that separate it from what follows."""
    nl = newline_of(text)
    section = text[h.start:h.end]
    content_end = h.start + len(section.rstrip())
    content_end = max(content_end, h.headline_end)
    add = nl.join(addition.splitlines())
    return _splice(text, content_end, content_end, nl + add)


def before_blank_lines(text: str, pos: int) -> int:
    """``pos`` moved back over the blank lines just before it (a subtree's trailing blank
    lines): an entry added at the end of a subtree goes above them, so the blank line that
    set the next heading apart still does."""
    while pos > 0:
        start = text.rfind("\n", 0, pos - 1) + 1
        if pos - 1 < 0 or text[pos - 1] != "\n" or text[start:pos].strip():
            break
        if start == 0 or text[start - 1] != "\n":
            break
        pos = start
    return pos


def insert_entry(text: str, pos: int, entry: str) -> str:
    """Insert a whole entry (ending in a newline) as lines starting at ``pos``."""
    nl = newline_of(text) if text else "\n"
    if pos > 0 and text[pos - 1] != "\n":
        entry = nl + entry
    return _splice(text, pos, pos, entry)


# --- repeaters -------------------------------------------------------------------

_DATE_IN_TS = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ \t]+[^\d\s>\]+.-][^\s>\]]*)?")
_REPEATER = re.compile(r"(\.\+|\+\+|\+)(\d+)([hdwmy])")


def _add(d: dt.datetime, n: int, unit: str) -> dt.datetime:
    if unit == "h":
        return d + dt.timedelta(hours=n)
    if unit == "d":
        return d + dt.timedelta(days=n)
    if unit == "w":
        return d + dt.timedelta(weeks=n)
    months = n if unit == "m" else 12 * n
    y, m = divmod(d.month - 1 + months, 12)
    y += d.year
    day = min(d.day, calendar.monthrange(y, m + 1)[1])
    return d.replace(year=y, month=m + 1, day=day)


def _next(kind: str, n: int, unit: str, start: dt.datetime, now: dt.datetime
          ) -> dt.datetime:
    """The next occurrence.  ``++`` catches up past now: whole hours, days and weeks in
    one jump (stepping one by one from year 1 was millions of steps under the memex's
    lock), and a zero repeat (``++0d``) stays put (stepping it never ended)."""
    if kind == "+":
        return _add(start, n, unit)
    if kind == "++":
        new = _add(start, n, unit)
        if n == 0:
            return new
        if unit in "hdw":
            step = dt.timedelta(hours=n) if unit == "h" else dt.timedelta(
                days=n * (7 if unit == "w" else 1))
            if new < now - step:
                new += step * ((now - new) // step - 1)
        while new <= now if unit == "h" else new.date() <= now.date():
            new = _add(new, n, unit)
        return new
    base = now if unit == "h" else now.replace(hour=start.hour, minute=start.minute)
    return _add(base, n, unit)


def shift_repeated(ts: Timestamp, now: dt.datetime) -> str | None:
    """The raw timestamp moved to its next occurrence, as Org does when a repeating task
    is marked done (``+`` once, ``++`` until in the future, ``.+`` from today)."""
    if not ts.repeater:
        return None
    m = _REPEATER.match(ts.repeater)
    if not m:
        return None
    kind, n, unit = m.group(1), int(m.group(2)), m.group(3)
    start = ts.start
    try:
        new = _next(kind, n, unit, start, now)
    except (OverflowError, ValueError):
        from ..errors import WriteError

        raise WriteError(f"the repeater {ts.repeater} moves {start:%Y-%m-%d} past the "
                         "calendar (year 9999): change the date or the repeater") from None
    raw = ts.raw
    dm = _DATE_IN_TS.search(raw)
    if not dm:
        return None
    out = raw[: dm.start()] + f"{new.date().isoformat()} {_DAYNAMES[new.weekday()]}" + raw[dm.end():]
    if unit == "h" and ts.has_time:
        out = re.sub(r"\d{1,2}:\d{2}", f"{new:%H:%M}", out, count=1)
    return out
