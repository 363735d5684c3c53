"""A small org-ql-like query language, parsed into plain predicates.

    todo:TODO,NEXT   todo (any not-done keyword)   done
    tags:a,b         (any of; inherited tags and FILETAGS count)
    heading:word     id:ID   file:PATTERN   prop:KEY=VALUE   priority:A   level:2
    category:NAME    scheduled:today|+7|-7|YYYY-MM-DD|A..B   deadline:...   closed:-7
    bare words / "a phrase" / prefix*  -> full-text search   text:word -> the same, explicitly
    -PREDICATE, -word, not PREDICATE   -> negation (keeps entries the field is empty on, as
                                          org-ql's (not …): -todo:DONE keeps plain headings)
    A or B                             -> either side (each side is ANDed terms)

Predicates are ANDed.  An unknown field (``sheduled:``) is an error naming the fields.
Org's own match syntax (``+work-done|urgent``, ``TODO="NEXT"``) is ``orgmatch``.
The store compiles predicates to its own query language.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import shlex
from dataclasses import dataclass

from ..errors import QuerySyntaxError

__all__ = ["DateRange", "Predicate", "QuerySyntaxError", "check_values", "date_condition",
           "date_range", "parse_query"]

FIELDS = {"todo", "done", "tags", "tag", "heading", "id", "file", "prop", "priority",
          "level", "category", "scheduled", "deadline", "closed", "text"}
DATE_FIELDS = {"scheduled", "deadline", "closed"}


@dataclass(frozen=True, slots=True)
class DateRange:
    start: dt.date | None
    end: dt.date | None
    """Inclusive; None = open."""


@dataclass(frozen=True, slots=True)
class Predicate:
    field: str
    values: tuple[str, ...] = ()
    negate: bool = False
    groups: tuple[tuple[Predicate, ...], ...] = ()
    """For ``field == "any"``: alternatives (``A or B``), each a conjunction."""


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def date_range(spec: str, today: dt.date) -> DateRange:
    """``today``, ``+N`` (next N days), ``-N`` (last N days), ``past``/``overdue``
    (before today), ``future``, a date, or ``A..B``.  A span that runs off the calendar
    (``+99999999``, or ``future`` from 9999-12-31) is a syntax error, not a crash."""
    try:
        return _date_range(spec, today)
    except OverflowError:
        raise QuerySyntaxError(f"date {spec!r} from {today} runs past the calendar (years 1 "
                               "to 9999): use a nearer date") from None


def _date_range(spec: str, today: dt.date) -> DateRange:
    s = spec.strip().lower()
    if s in ("", "any"):
        return DateRange(None, None)
    if s == "today":
        return DateRange(today, today)
    if s in ("past", "overdue"):
        return DateRange(None, today - dt.timedelta(days=1))
    if s == "future":
        return DateRange(today + dt.timedelta(days=1), None)
    if re.fullmatch(r"[+-]\d+", s):
        n = int(s)
        return (DateRange(today, today + dt.timedelta(days=n)) if n >= 0
                else DateRange(today + dt.timedelta(days=n), today))
    if ".." in s:
        a, b = s.split("..", 1)
        return DateRange(_date(a, today) if a else None, _date(b, today) if b else None)
    d = _date(s, today)
    return DateRange(d, d)


def date_condition(field: str, spec: str, today: dt.date, mark: str = "?"
                   ) -> tuple[str, list[str]]:
    """SQL over node column ``field`` (``scheduled``, ``deadline``, ``closed``) for a date
    spec, with ``mark`` as the placeholder of the store's driver (``?`` or ``%s``)."""
    col = f"substr(n.{field}, 1, 10)"
    rng = date_range(spec, today)
    conds = [f"n.{field} IS NOT NULL"]
    args: list[str] = []
    if rng.start:
        conds.append(f"{col} >= {mark}")
        args.append(rng.start.isoformat())
    if rng.end:
        conds.append(f"{col} <= {mark}")
        args.append(rng.end.isoformat())
    return " AND ".join(conds), args


def _date(s: str, today: dt.date) -> dt.date:
    if s == "today":
        return today
    if re.fullmatch(r"[+-]\d+", s):
        return today + dt.timedelta(days=int(s))
    if _ISO.fullmatch(s):
        try:
            return dt.date.fromisoformat(s)
        except ValueError as e:
            raise QuerySyntaxError(f"bad date {s!r}: {e}") from e
    raise QuerySyntaxError(
        f"bad date {s!r}: use today, +N, -N, past, future, YYYY-MM-DD or A..B")


def _unknown_field(name: str) -> QuerySyntaxError:
    close = difflib.get_close_matches(name.lower(), sorted(FIELDS), n=1)
    hint = f"did you mean {close[0]}:? " if close else ""
    return QuerySyntaxError(
        f"unknown field {name!r}: {hint}fields are {', '.join(sorted(FIELDS))} "
        f"(to search the text itself, write text:\"{name}:…\")")


def _conjunction(tokens: list[str]) -> list[Predicate]:
    preds: list[Predicate] = []
    words: list[str] = []
    pending_not = False
    for tok in tokens:
        if tok.lower() == "not":
            pending_not = not pending_not
            continue
        neg = tok.startswith("-") and len(tok) > 1 and not re.fullmatch(r"-\d+", tok)
        body = tok[1:] if neg else tok
        neg = neg != pending_not
        pending_not = False
        name, sep, arg = body.partition(":")
        name_l = name.lower()
        if sep and name_l in FIELDS:
            values = tuple(v for v in arg.split(",") if v) if name_l != "prop" else (arg,)
            if name_l == "tag":
                name_l = "tags"
            if name_l == "text" and not values:
                raise QuerySyntaxError("text: needs words (e.g. text:backup)")
            if name_l == "prop" and "=" not in arg and not arg:
                raise QuerySyntaxError("prop: needs KEY=VALUE or KEY (e.g. prop:CATEGORY=work)")
            if name_l == "level" and not all(re.fullmatch(r"[0-9]{1,4}", v) for v in values):
                raise QuerySyntaxError(f"level: needs a number, got {arg!r}")
            if name_l == "text" and not neg:
                words.extend(values)
            else:
                preds.append(Predicate(name_l, values, neg))
        elif sep and re.fullmatch(r"[A-Za-z]+", name) and arg and "/" not in arg:
            raise _unknown_field(name)
        elif not sep and name_l in ("done", "todo"):
            preds.append(Predicate(name_l, (), neg))
        elif neg:
            preds.append(Predicate("text", (body,), True))
        else:
            words.append(body)
    if pending_not:
        raise QuerySyntaxError("'not' needs a term after it (e.g. not todo:DONE)")
    if words:
        preds.append(Predicate("text", tuple(words)))
    return preds


def check_values(preds: list[Predicate], keywords: list[str], priorities: list[str]) -> None:
    """Refuse a TODO keyword or priority no file defines, naming the valid ones."""
    for p in preds:
        if p.field == "any":
            for g in p.groups:
                check_values(list(g), keywords, priorities)
        elif p.field == "todo":
            bad = [v for v in p.values if v not in keywords]
            if bad:
                close = difflib.get_close_matches(bad[0], keywords, n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                raise QuerySyntaxError(f"no TODO keyword {bad[0]!r}: {hint}valid keywords: "
                                       f"{', '.join(keywords)}")
        elif p.field == "priority":
            bad = [v for v in p.values if v.upper() not in priorities]
            if bad:
                raise QuerySyntaxError(f"no priority {bad[0]!r}: valid priorities: "
                                       f"{', '.join(priorities)}")


def parse_query(expr: str) -> list[Predicate]:
    """Parse a query string into predicates; raise QuerySyntaxError with the fix."""
    try:
        tokens = shlex.split(expr, posix=True)
    except ValueError as e:
        raise QuerySyntaxError(f"cannot read query {expr!r}: {e} (close your quotes)") from e
    groups: list[list[str]] = [[]]
    for tok in tokens:
        if tok.lower() == "or":
            groups.append([])
        else:
            groups[-1].append(tok)
    if len(groups) == 1:
        return _conjunction(groups[0])
    if any(not g for g in groups):
        raise QuerySyntaxError("'or' needs terms on both sides (e.g. tags:a or tags:b)")
    return [Predicate("any", groups=tuple(tuple(_conjunction(g)) for g in groups))]
