"""Data types at the gateway boundary, and their OpenAI wire forms.

Why our own dataclasses instead of raw dicts: callers (agent loop, tools, tests) get checked
fields and one place that knows the chat-completions JSON shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import BadModelOutput

__all__ = [
    "Completion",
    "Message",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call the model asked for; ``arguments`` already parsed from its JSON string."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], provider: str | None = None) -> ToolCall:
        """Parse one ``tool_calls[i]`` entry; bad argument JSON → ``BadModelOutput``."""
        fn = d.get("function") or {}
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise BadModelOutput("a tool call has no function name", json.dumps(d), provider)
        return cls(id=str(d.get("id") or ""), name=name,
                   arguments=parse_arguments(fn.get("arguments"), name, provider))

    def to_wire(self, redact: Callable[[str], str] | None = None) -> dict[str, Any]:
        args = _redact_tree(self.arguments, redact) if redact else self.arguments
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(args, ensure_ascii=False)}}


def parse_arguments(raw: Any, name: str, provider: str | None = None) -> dict[str, Any]:
    """Arguments arrive as a JSON string (some servers send an object): ``json.loads``, never eval."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        raise BadModelOutput(f"arguments of tool call {name!r} are a {type(raw).__name__}, "
                             "expected a JSON object", repr(raw), provider)
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise BadModelOutput(f"arguments of tool call {name!r} are not valid JSON ({e})",
                             raw, provider) from None
    if not isinstance(value, dict):
        raise BadModelOutput(f"arguments of tool call {name!r} must be a JSON object, got "
                             f"{type(value).__name__}", raw, provider)
    return value


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.  ``tool_calls`` on assistant turns, ``tool_call_id`` on tool results."""

    role: str
    content: str | None
    name: str | None = None
    tool_calls: Sequence[ToolCall] | None = None
    tool_call_id: str | None = None
    private: bool = False
    """Provenance (``guard.egress``): the caller knows this message carries private notes
    and the person has not opted in (``remote_ok = false``): it goes to local providers
    only; a non-local one in the cascade is skipped, saying why."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown message role {self.role!r}; use one of {sorted(ROLES)}")

    @classmethod
    def coerce(cls, m: Message | Mapping[str, Any]) -> Message:
        """Accept a ``Message`` or an OpenAI-style dict (what callers often have at hand)."""
        if isinstance(m, Message):
            return m
        calls = m.get("tool_calls")
        return cls(role=m["role"], content=m.get("content"), name=m.get("name"),
                   tool_calls=[c if isinstance(c, ToolCall) else ToolCall.from_wire(c)
                               for c in calls] if calls else None,
                   tool_call_id=m.get("tool_call_id"))

    def to_wire(self, redact: Callable[[str], str] | None = None) -> dict[str, Any]:
        content = self.content
        if redact is not None and content:
            content = redact(content)
        d: dict[str, Any] = {"role": self.role, "content": content}
        if self.name:
            d["name"] = self.name
        if self.tool_calls:
            d["tool_calls"] = [c.to_wire(redact) for c in self.tool_calls]
        if self.tool_call_id:
            d["tool_call_id"] = self.tool_call_id
        return d


def _redact_tree(value: Any, redact: Callable[[str], str]) -> Any:
    """Redact every string inside tool arguments (keeps the JSON valid, unlike redacting the dump)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_tree(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_tree(v, redact) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call; ``parameters`` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}})

    def to_wire(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished answer.  ``data`` holds the parsed, validated JSON when a schema was asked for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    model: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    provider: str = ""
    data: Any = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of answer text, as streamed."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of tool call ``index``: ``id``/``name`` on its first fragment, then argument text."""

    index: int
    id: str | None
    name: str | None
    arguments: str


StreamEvent = TextDelta | ToolCallDelta | Completion
