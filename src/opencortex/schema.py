"""Validation at the edge: input from clients is checked here before anything acts on it.

One tiny helper instead of a dependency: :func:`loads` parses JSON with a nesting limit
(checked by a scan *before* ``json.loads`` could recurse), :func:`check` validates a
decoded value against a small schema (types, required keys, ranges, lengths, no NUL),
and :func:`node_ref` / :func:`line_number` keep numbers inside what the index can hold.
Every failure is a :class:`ValidationError` whose message says what to fix.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ValidationError

__all__ = ["MAX_DEPTH", "MAX_LINE", "Field", "ValidationError", "check", "line_number",
           "loads", "no_nul", "no_nul_anywhere", "node_ref", "org_year", "repeater", "when"]

MAX_DEPTH = 64
"""Deepest JSON nesting a client may send (real payloads use 3 or 4 levels)."""
MAX_LINE = 2**31 - 1
"""Largest line number a node reference may carry (the index stores 32-bit lines)."""
ORG_YEARS = (1, 9999)
"""Years an Org timestamp can name (Emacs' own range for time stamps)."""


def json_depth(raw: bytes | str, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a JSON text, counting brackets outside strings; stops (and
    returns ``limit + 1``) as soon as it is exceeded, so a 100k-deep body costs little."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth = deepest = 0
    in_str = esc = False
    for b in data:
        if in_str:
            if esc:
                esc = False
            elif b == 0x5C:  # backslash
                esc = True
            elif b == 0x22:
                in_str = False
        elif b == 0x22:
            in_str = True
        elif b in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif b in (0x5D, 0x7D):
            depth -= 1
    return deepest


def loads(raw: bytes | str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses nesting deeper than ``limit`` (ValidationError)."""
    if json_depth(raw, limit) > limit:
        raise ValidationError(f"the JSON nests deeper than {limit} levels: send a flatter "
                              "document")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValidationError(f"not valid JSON: {e}") from None
    except RecursionError:  # cannot happen after the scan; never a 500 if it does
        raise ValidationError("the JSON nests too deeply: send a flatter document") from None


def no_nul(value: str, name: str) -> str:
    if "\x00" in value:
        raise ValidationError(f"{name} contains a NUL byte (\\u0000): remove it")
    return value


@dataclass(frozen=True, slots=True)
class Field:
    """One field of an object schema.  ``kind``: str, int, bool, number, list, dict, any."""

    kind: str
    required: bool = False
    min: float | None = None
    max: float | None = None
    """Range for numbers; length bounds for strings and lists."""
    items: str | None = None
    """For lists: the kind of every item."""
    choices: tuple[Any, ...] | None = None


_KINDS: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "bool": (bool,),
                                       "number": (int, float), "list": (list,),
                                       "dict": (dict,), "any": (object,)}


def _kind_ok(value: Any, kind: str) -> bool:
    if kind in ("int", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _KINDS[kind])


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_ok(value: str, name: str) -> None:
    """No NUL, and no unpaired surrogate (JSON may spell ``"\\ud800"``, which is not
    text: it cannot be written to a file, a log or a reply)."""
    no_nul(value, name)
    m = _LONE_SURROGATE.search(value)
    if m:
        raise ValidationError(f"{name} contains an unpaired surrogate (\\u{ord(m.group()):04x}"
                              f") at character {m.start()}: send valid Unicode text")


def no_nul_anywhere(value: Any, name: str) -> None:
    """No NUL or unpaired surrogate in any string anywhere inside ``value`` (paths, text,
    nested payloads): what a client sends is text."""
    stack = [(value, name)]
    while stack:
        v, where = stack.pop()
        if isinstance(v, str):
            _text_ok(v, where)
        elif isinstance(v, dict):
            for k, x in v.items():
                _text_ok(str(k), f"a key in {where}")
                stack.append((x, f"{where}.{k}"))
        elif isinstance(v, list):
            stack.extend((x, f"{where}[{i}]") for i, x in enumerate(v))


def check(value: Any, fields: Mapping[str, Field], where: str = "body") -> dict[str, Any]:
    """``value`` as a dict that fits ``fields``; unknown keys are kept (callers ignore
    them), missing optional ones are absent.  Raises ValidationError saying what to fix."""
    if not isinstance(value, dict):
        raise ValidationError(f"{where} must be a JSON object")
    no_nul_anywhere(value, where)
    for name, f in fields.items():
        label = f"{where}.{name}"
        if name not in value or value[name] is None:
            if f.required:
                raise ValidationError(f"{label} is required ({f.kind})")
            continue
        v = value[name]
        if not _kind_ok(v, f.kind):
            raise ValidationError(f"{label} must be {_article(f.kind)}, got "
                                  f"{type(v).__name__} {_short(v)}")
        if f.choices is not None and v not in f.choices:
            raise ValidationError(f"{label} must be one of "
                                  f"{', '.join(map(str, f.choices))}, got {_short(v)}")
        size = len(v) if isinstance(v, str | list) else v if f.kind in ("int", "number") \
            else None
        what = "length" if isinstance(v, str | list) else "value"
        if size is not None and f.min is not None and size < f.min:
            raise ValidationError(f"{label}: {what} must be at least {f.min:g}")
        if size is not None and f.max is not None and size > f.max:
            raise ValidationError(f"{label}: {what} must be at most {f.max:g}")
        if f.items and isinstance(v, list):
            bad = [i for i, x in enumerate(v) if not _kind_ok(x, f.items)]
            if bad:
                raise ValidationError(f"{label}[{bad[0]}] must be {_article(f.items)}")
    return value


def line_number(value: Any, name: str = "line", lines: int | None = None) -> int:
    """A 1-based line number (an int, or a string of digits), within ``lines`` if given."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be a whole number (a line of the file), got "
                              f"{_short(value)}")
    hi = min(lines, MAX_LINE) if lines is not None else MAX_LINE
    if not 1 <= value <= max(hi, 1):
        raise ValidationError(f"{name} is {value}, out of range: the file has {lines} "
                              "lines" if lines is not None else
                              f"{name} is {value}, out of range (1 to {MAX_LINE})")
    return value


def node_ref(ref: Any, name: str = "ref") -> str:
    """A node reference as a client may send it: a non-empty string without NUL, and a
    ``FILE:LINE`` form only with a line number that fits."""
    if not isinstance(ref, str) or not ref.strip():
        raise ValidationError(f"{name} must be a non-empty string (an ID, FILE::Outline, "
                              "FILE:LINE or a title)")
    no_nul(ref, name)
    if len(ref) > 4096:
        raise ValidationError(f"{name} is longer than 4096 characters")
    path, sep, tail = ref.strip().rpartition(":")
    if sep and path and not path.endswith(":") and tail.isascii() and tail.isdigit():
        line_number(int(tail), f"the line number in {ref[:100]!r}")
    return ref


def org_year(year: int, name: str = "date") -> int:
    lo, hi = ORG_YEARS
    if not lo <= year <= hi:
        raise ValidationError(f"{name}: year {year} is outside Org's range ({lo}–{hi})")
    return year


def _article(kind: str) -> str:
    return {"str": "a string", "int": "an integer", "bool": "true or false",
            "number": "a number", "list": "a list", "dict": "an object",
            "any": "a value"}[kind]


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def when(value: str, now: dt.datetime | None = None) -> dt.date | dt.datetime | None:
    """A date a client or the person sets (SCHEDULED, DEADLINE): YYYY-MM-DD,
    'YYYY-MM-DD HH:MM', today, tomorrow, +Nd/+Nw/+Nm, or none (None: remove it)."""
    if not isinstance(value, str):
        raise ValidationError(f"a date must be a string, got {_short(value)}")
    v = value.strip().lower()
    now = now or dt.datetime.now()
    today = now.date()
    if v in ("none", "-", ""):
        return None
    if v == "today":
        return today
    if v == "tomorrow":
        return today + dt.timedelta(days=1)
    m = re.fullmatch(r"\+(\d{1,5})([dwm]?)", v)
    try:
        if m:
            n, unit = int(m.group(1)), m.group(2) or "d"
            if unit == "m":
                y, mo = divmod(today.month - 1 + n, 12)
                got: dt.date = today.replace(year=today.year + y, month=mo + 1,
                                             day=min(today.day, 28))
            else:
                got = today + dt.timedelta(days=n * (7 if unit == "w" else 1))
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
            got = dt.date.fromisoformat(v)
        else:
            got = dt.datetime.fromisoformat(value.strip().replace("T", " "))
    except (ValueError, OverflowError):
        raise ValidationError(
            f"{value[:60]!r}: use YYYY-MM-DD, 'YYYY-MM-DD HH:MM', today, tomorrow, +3d, "
            "+1w or none") from None
    org_year(got.year, "date")
    return got


def repeater(value: str | None) -> str | None:
    """An Org repeater (+1w, ++1d, .+1m) or None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not re.fullmatch(r"(\.\+|\+\+|\+)\d{1,4}[hdwmy]", value):
        raise ValidationError(f"{_short(value)}: a repeater looks like +1w, ++1d or .+1m")
    return value
