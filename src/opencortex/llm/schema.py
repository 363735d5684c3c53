"""JSON answers: pull the JSON out of a model's text and check it against a JSON Schema.

Why a small validator of our own: ``jsonschema`` is not a dependency, and the schemas we send
use a small subset (type, properties, required, additionalProperties, enum, const, items,
minItems/maxItems, anyOf), always checked the same way whatever else is installed.
Errors carry a JSON path the model can act on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import BadModelOutput

__all__ = ["extract_json", "parse_json_answer", "schema_errors"]

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "object": (dict,), "array": (list,), "boolean": (bool,),
    "null": (type(None),), "number": (int, float), "integer": (int,),
}


def _without_think(text: str) -> str:
    """``text`` less every ``<think>…</think>`` block (case-insensitive), in one pass: a
    lazy regexp retried the rest of the text from every opener when none was closed (a
    model's answer is untrusted: 32 K of openers took 1.4 s, quadratic)."""
    low = text.lower()
    out: list[str] = []
    pos = 0
    while (i := low.find(_THINK_OPEN, pos)) >= 0:
        j = low.find(_THINK_CLOSE, i + len(_THINK_OPEN))
        if j < 0:  # no closer after this opener: none after any later one either
            break
        out.append(text[pos:i])
        pos = j + len(_THINK_CLOSE)
    out.append(text[pos:])
    return "".join(out)


def extract_json(text: str) -> str:
    """Strip what local models wrap around JSON: ``<think>`` blocks and ```json fences."""
    t = _without_think(text).strip()
    m = _FENCE.match(t)
    return m.group(1).strip() if m else t


def _type_ok(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _tname(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _type_ok(value, name):
            return name
    return type(value).__name__


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every violation of ``schema`` by ``value`` as ``"$.a[0].b: what"`` strings (empty: valid)."""
    if not isinstance(schema, dict):
        return []
    errs: list[str] = []
    if "anyOf" in schema or "oneOf" in schema:
        alts = schema.get("anyOf") or schema.get("oneOf") or []
        if alts and all(schema_errors(value, alt, path) for alt in alts):
            errs.append(f"{path}: matches none of the allowed alternatives")
    want = schema.get("type")
    if want is not None:
        names = want if isinstance(want, list) else [want]
        if not any(_type_ok(value, n) for n in names):
            return [*errs, f"{path}: expected {' or '.join(names)}, got {_tname(value)}"]
    if "const" in schema and value != schema["const"]:
        errs.append(f"{path}: must be {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
        errs.append(f"{path}: {json.dumps(value, ensure_ascii=False)[:80]} is not one of {allowed}")
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                errs.append(f"{path}: missing required property {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            sub = f"{path}.{key}"
            if key in props:
                errs.extend(schema_errors(v, props[key], sub))
            elif extra is False:
                errs.append(f"{path}: unexpected property {key!r}")
            elif isinstance(extra, dict):
                errs.extend(schema_errors(v, extra, sub))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(f"{path}: needs at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(f"{path}: allows at most {schema['maxItems']} items, got {len(value)}")
        items = schema.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(value):
                errs.extend(schema_errors(v, items, f"{path}[{i}]"))
    return errs


def parse_json_answer(text: str, schema: dict[str, Any] | None,
                      provider: str | None = None) -> Any:
    """Parse the model's text as JSON and validate it; ``BadModelOutput`` (with raw text) if not."""
    body = extract_json(text)
    if not body:
        raise BadModelOutput("the answer is empty, expected JSON", text, provider)
    try:
        value = json.loads(body)
    except ValueError as e:
        raise BadModelOutput(f"the answer is not valid JSON ({e})", text, provider) from None
    if schema:
        errs = schema_errors(value, schema)
        if errs:
            shown = "; ".join(errs[:8]) + (f"; and {len(errs) - 8} more" if len(errs) > 8 else "")
            raise BadModelOutput(f"the JSON does not match the schema: {shown}", text, provider)
    return value
