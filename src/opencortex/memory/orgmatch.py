"""Org's own match syntax (``org-make-tags-matcher``, Org 9.5), as ``org-map-entries`` and
tags/property searches read it, evaluated over index nodes.

    +work-done|urgent         tags: AND by juxtaposition (+/-), OR by |, & allowed
    {^proj}                   a tag matching a regexp
    TODO="NEXT"  LEVEL=2      properties: = <> < > <= >= against "string", number,
    PRIORITY="A" EFFORT>"1:00"   {regexp} or "<date>" (<today>, <2026-12-01>, <+3d> …)
    +work/NEXT|WAITING  /!    after /: TODO keywords (! = any not-done keyword)

As in Org: a "string" compares as a string (so EFFORT>"1:00" is Org's string order), a
bare number numerically (missing = 0); PRIORITY of an entry without a cookie is "B";
tags are inherited (FILETAGS too); a property is the entry's own (no inheritance).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from ..errors import QuerySyntaxError
from .nodes import Node

__all__ = ["compile_match", "is_org_match"]

Test = Callable[[Node], bool]

_TERM = re.compile(
    r"&?([-+:])?(\{[^}]+\}|LEVEL([<=>]{1,2})([0-9]+)|((?:\w+(?:\\-)*)+)([<>=]{1,2})"
    r"(\{[^}]+\}|\"[^\"]*\"|-?[.0-9]+(?:[eE][-+]?[0-9]+)?)|[\w@#%]+)")
_TODO_TERM = re.compile(r"&?([-+:])?(\{[^}]+\}|[\w@#%]+)")
_ORG_SIGNS = re.compile(r"[|&=<>/{}\"]")
_TIME_VALUE = re.compile(r"^\"[\[<].*[\]>]\"$")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[^\]>\d]*?(\d{1,2}):(\d{2}))?")
_REL = re.compile(r"([+-])(\d+)([hdwmy])")
DEFAULT_PRIORITY = "B"
"""``org-priority-default``."""


def is_org_match(expr: str) -> bool:
    """An Org match string rather than the field syntax: one word without ``field:``
    that begins with ``+`` or holds one of ``| & = < > / { "``."""
    s = expr.strip()
    if not s or any(c.isspace() for c in _unquoted(s)) or ":" in _unquoted(s):
        return False
    if not _unquoted(s).strip():  # only a quoted phrase ("lamp oil"): the full-text search
        return s.startswith("{")
    return s.startswith("+") or _ORG_SIGNS.search(s) is not None


def _unquoted(s: str) -> str:
    return re.sub(r"\"[^\"]*\"|\{[^}]*\}", "", s)


def _emacs_regexp(rx: str) -> re.Pattern[str]:
    """An Emacs regexp as Python reads it (groups and alternatives swapped back)."""
    py = (rx.replace(r"\(", "\x00").replace(r"\)", "\x01").replace(r"\|", "\x02")
          .replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")
          .replace("\x00", "(").replace("\x01", ")").replace("\x02", "|")
          .replace(r"\<", r"\b").replace(r"\>", r"\b").replace(r"\'", r"\Z")
          .replace(r"\`", r"\A"))
    try:
        return re.compile(py, re.I)  # org-scan-tags matches with case-fold-search t
    except re.error as e:
        raise QuerySyntaxError(f"bad regexp {{{rx}}} in the match: {e}") from e


def _org_time(s: str, today: dt.date) -> float:
    """``org-matcher-time`` / ``org-2ft``: seconds of a stamp or a relative day (0 for
    none, as Org's comparison reads a missing value)."""
    s = s.strip("\"<>[] ")
    if not s:
        return 0.0
    base = dt.datetime.combine(today, dt.time())
    word = {"today": 0, "tomorrow": 1, "yesterday": -1}
    if s in word:
        return (base + dt.timedelta(days=word[s])).timestamp()
    if s == "now":
        return dt.datetime.now().timestamp()
    m = _REL.fullmatch(s)
    if m:
        n = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
        if m.group(3) == "h":
            return dt.datetime.now().timestamp() + 3600 * n
        days = {"d": n, "w": 7 * n, "m": 31 * n, "y": 365.25 * n}[m.group(3)]
        return (base + dt.timedelta(days=days)).timestamp()
    m = _DATE.search(s)
    if m is None:
        return 0.0
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        t = dt.datetime(y, mo, d, int(m.group(4) or 0), int(m.group(5) or 0))
    except ValueError:
        return 0.0
    return t.timestamp()


_OPS: dict[str, Callable[[object, object], bool]] = {
    "<": lambda a, b: a < b,  # type: ignore[operator]
    ">": lambda a, b: a > b,  # type: ignore[operator]
    "<=": lambda a, b: a <= b,  # type: ignore[operator]
    "=<": lambda a, b: a <= b,  # type: ignore[operator]
    ">=": lambda a, b: a >= b,  # type: ignore[operator]
    "=>": lambda a, b: a >= b,  # type: ignore[operator]
    "=": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
}


def _number(s: str) -> float:
    """``string-to-number``: the leading number of ``s``, 0 without one."""
    m = re.match(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", s)
    return float(m.group(1)) if m else 0.0


def _prop(n: Node, key: str) -> str | None:
    """``org-entry-get`` for the keys a match reads."""
    k = key.upper()
    if k == "TODO":
        return n.todo
    if k == "CATEGORY":
        return n.category
    if k == "PRIORITY":
        return n.priority or DEFAULT_PRIORITY
    if k == "ITEM":
        return n.title
    if k in ("SCHEDULED", "DEADLINE", "CLOSED"):
        return getattr(n, k.lower())
    for pk, v in n.properties.items():
        if pk.upper() == k:
            return v
    return None


def _property_test(key: str, op: str, raw: str, today: dt.date) -> Test:
    if op not in _OPS:
        raise QuerySyntaxError(f"bad operator {op!r} in {key}{op}{raw}: use = <> < > <= >=")
    fn = _OPS[op]
    if raw.startswith("{"):
        rx = _emacs_regexp(raw[1:-1])
        if op == "<>":
            return lambda n: rx.search(_prop(n, key) or "") is None
        return lambda n: rx.search(_prop(n, key) or "") is not None
    if _TIME_VALUE.match(raw):
        when = _org_time(raw, today)

        def timed(n: Node) -> bool:  # org-time<…: false unless both are times
            have = _org_time(_prop(n, key) or "", today)
            return have > 0 and when > 0 and fn(have, when)

        return timed
    if raw.startswith('"'):
        val = raw[1:-1]
        return lambda n: fn(_prop(n, key) or "", val)
    num = _number(raw)
    return lambda n: fn(_number(_prop(n, key) or ""), num)


def _or_split(part: str) -> list[str]:
    """Split at ``|``, rejoining a piece that ends in a backslash (an escaped ``\\|``
    of a regexp), as Org repairs its split."""
    out: list[str] = []
    for piece in part.split("|"):
        if out and out[-1].endswith("\\"):
            out[-1] += "|" + piece
        else:
            out.append(piece)
    return out


def _tags_part(part: str, today: dt.date) -> Test:
    ors: list[list[Test]] = []
    for group in _or_split(part):
        terms: list[Test] = []
        rest = group
        while rest:
            m = _TERM.match(rest)
            if m is None or m.end() == 0:
                raise QuerySyntaxError(
                    f"cannot read {rest!r} in the match {part!r}: terms are +tag -tag "
                    "{regexp} KEY=\"value\" KEY>number LEVEL=N, joined by | for or")
            minus = m.group(1) == "-"
            tag = m.group(2).replace("\\-", "-")
            if m.group(4):
                op, lv = m.group(3), int(m.group(4))
                opf = _OPS.get(op)
                if opf is None:
                    raise QuerySyntaxError(f"bad operator {op!r} after LEVEL")
                t: Test = (lambda f, v: lambda n: f(n.level, v))(opf, lv)
            elif m.group(5):
                t = _property_test(m.group(5).replace("\\-", "-"), m.group(6), m.group(7),
                                   today)
            elif tag.startswith("{"):
                rx = _emacs_regexp(tag[1:-1])
                t = (lambda r: lambda n: any(r.search(x) for x in n.tags))(rx)
            else:
                t = (lambda g: lambda n: g in n.tags)(tag)
            terms.append((lambda f: lambda n: not f(n))(t) if minus else t)
            rest = rest[m.end():]
        ors.append(terms)
    return lambda n: any(all(t(n) for t in g) for g in ors)


def _todo_part(part: str) -> Test:
    ors: list[list[Test]] = []
    for group in part.split("|"):
        terms: list[Test] = []
        rest = group
        while rest:
            m = _TODO_TERM.match(rest)
            if m is None or m.end() == 0:
                raise QuerySyntaxError(f"cannot read {rest!r} in the TODO part {part!r}")
            kw = m.group(2)
            if kw.startswith("{"):
                rx = _emacs_regexp(kw[1:-1])
                t: Test = (lambda r: lambda n: r.search(n.todo or "") is not None)(rx)
            else:
                t = (lambda k: lambda n: n.todo == k)(kw)
            terms.append((lambda f: lambda n: not f(n))(t) if m.group(1) == "-" else t)
            rest = rest[m.end():]
        ors.append(terms)
    return lambda n: any(all(t(n) for t in g) for g in ors)


def compile_match(match: str, today: dt.date | None = None) -> Test:
    """A test for one node from an Org match string (``org-make-tags-matcher``)."""
    today = today or dt.date.today()
    tags, todo, todo_only = match, None, False
    slash = match.rfind("/")
    if slash >= 0 and '"' not in match[slash:]:
        while slash > 0 and match[slash - 1] == "/":
            slash -= 1
        tags = match[:slash]
        todo = match[slash:].lstrip("/")
        if todo.startswith("!"):
            todo_only, todo = True, todo[1:]
        if not todo.strip():
            todo = None
    tests: list[Test] = []
    if tags.strip():
        tests.append(_tags_part(tags, today))
    if todo:
        tests.append(_todo_part(todo))
    if todo_only:
        tests.append(lambda n: n.todo is not None and n.todo_type == "todo")
    return lambda n: all(t(n) for t in tests)
