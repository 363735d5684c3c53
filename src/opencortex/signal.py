"""The pipeline's stage types, in the base layer every package may import.

One shape for every stimulus: the ``Signal``, and ``inject`` which normalises raw messages
from any gateway into it (so gateways never contain agent logic).  The other stages:
a skill proposes a ``Proposal`` (``skills.base``) that its symbolic stage turns into an
``Action`` (``guard.action``: what the guard checks); an actuator runs the action and
returns a feedback ``Signal``, a ``Delegation`` (``Intent``s for the kernel loop to run and
compose: actuators never call back up into the kernel) or None."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .errors import SignalError

__all__ = ["ASYNC_SENSORS", "NO_CONVERSATION", "SIGNAL_TYPES", "SYNC_SENSORS", "Delegation",
           "Intent", "Signal", "SignalError", "conversation", "history", "inject"]

NO_CONVERSATION = "internal"
"""The session of a signal that is part of no conversation (a heartbeat, an ``@agent``
headline, a gateway that named none): nothing is recorded for it and no turn carries over to
the next such request — an open recall, a last answer to save."""


def conversation(meta: dict[str, Any]) -> str | None:
    """The conversation a signal belongs to, or None when it belongs to none."""
    s = meta.get("session")
    return None if s in (None, "", NO_CONVERSATION) else str(s)


HISTORY_TURNS = 12
"""Earlier turns of a conversation a gateway hands the kernel (the newest ones)."""
HISTORY_CHARS = 4000
"""Each earlier turn is cut to this many characters."""


def history(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """The conversation's earlier turns as ``(role, text)``, oldest first, that a gateway
    put in ``meta["history"]`` (the OpenAI endpoint: the messages before the last one).
    Whatever is malformed is dropped: it came from a client."""
    raw = meta.get("history")
    if not isinstance(raw, list):
        return []
    out = []
    for t in raw[-HISTORY_TURNS:]:
        if isinstance(t, dict) and t.get("role") in ("user", "assistant") and \
                isinstance(t.get("text"), str) and t["text"].strip():
            out.append((str(t["role"]), t["text"][:HISTORY_CHARS]))
    return out


SIGNAL_TYPES = ("event", "request", "response", "log")
ASYNC_SENSORS = frozenset({"user-input", "chat-message", "user-command", "delegation"})
"""Processed concurrently off the caller's thread (they may wait on a model)."""
SYNC_SENSORS = frozenset({"heartbeat", "buffer-update", "point-update", "interrupt",
                          "tool-output", "loop-error"})
"""Processed one at a time, in arrival order (they change shared state)."""
_DEFAULT_TYPE = {"user-input": "request", "chat-message": "request", "user-command": "request",
                 "delegation": "request", "tool-output": "response", "loop-error": "log"}
MAX_PAYLOAD_TEXT = 1_000_000




@dataclass(slots=True)
class Signal:
    type: str
    payload: dict[str, Any]
    """Always has ``sensor``; the rest is the sensor's data (``text``, ``file``…)."""
    meta: dict[str, Any]
    """``source``, ``session``, ``reply`` (a channel: callable taking the reply text)."""
    status: str = "new"
    """new → perceived → reasoned → acted (or failed / dropped)."""
    depth: int = 0
    approved_action: Any = None
    foveal_focus: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: float = field(default_factory=time.time)
    parent: str | None = None
    """The signal whose action produced this one (feedback chain)."""
    errors: int = 0
    """loop-error feedbacks already injected along this chain."""

    @property
    def sensor(self) -> str:
        return self.payload["sensor"]

    @property
    def text(self) -> str:
        return str(self.payload.get("text") or "")

    def feedback(self, sensor: str, **payload: Any) -> Signal:
        """A signal fed back into the loop by this one's action (depth + 1)."""
        return Signal(type=_DEFAULT_TYPE.get(sensor, "event"),
                      payload={"sensor": sensor, **payload}, meta=dict(self.meta),
                      depth=self.depth + 1, foveal_focus=self.foveal_focus,
                      parent=self.id, errors=self.errors)

    def summary(self) -> str:
        t = self.text.replace("\n", " ")
        return f"{self.sensor}#{self.id} d{self.depth} {t[:60]!r}" if t else \
            f"{self.sensor}#{self.id} d{self.depth}"


Intent = dict[str, Any]
"""One unit of routed work: ``target`` (a skill), ``text`` and the target's arguments."""


@dataclass(slots=True)
class Delegation:
    """What a delegating actuator hands back to the kernel loop (it never runs signals
    itself).  With ``intents``: each runs in order as a ``delegation`` signal on the
    caller's thread and the results are composed into one reply to ``signal``; without:
    ``payload`` becomes one ``delegation`` signal queued like any other stimulus."""

    signal: Signal
    intents: list[Intent] | None = None
    payload: dict[str, Any] = field(default_factory=dict)


def inject(raw: dict[str, Any] | Signal) -> Signal:
    """Normalise a raw message (``{"payload": {"sensor": ..., ...}, "meta": {...}}``, or
    the short form ``{"sensor": ..., ...}``) into a Signal; fill missing meta."""
    if isinstance(raw, Signal):
        sig = raw
    else:
        if not isinstance(raw, dict):
            raise SignalError(f"a raw message must be a JSON object, got {type(raw).__name__}")
        payload = raw.get("payload")
        if payload is None:
            payload = {k: v for k, v in raw.items() if k not in ("meta", "type", "depth")}
        if not isinstance(payload, dict) or not isinstance(payload.get("sensor"), str):
            raise SignalError("a raw message needs payload.sensor (e.g. 'user-input')")
        payload = dict(payload)
        sensor = payload["sensor"]
        text = payload.get("text")
        if text is not None and not isinstance(text, str):
            payload["text"] = str(text)
        if isinstance(payload.get("text"), str) and len(payload["text"]) > MAX_PAYLOAD_TEXT:
            raise SignalError(f"payload text over {MAX_PAYLOAD_TEXT} characters")
        meta = v if isinstance(v := raw.get("meta"), dict) else {}
        typ = raw.get("type") or _DEFAULT_TYPE.get(sensor, "event")
        if typ not in SIGNAL_TYPES:
            raise SignalError(f"unknown signal type {typ!r}: one of {', '.join(SIGNAL_TYPES)}")
        depth = raw.get("depth", 0)
        sig = Signal(type=typ, payload=payload, meta=dict(meta),
                     depth=depth if isinstance(depth, int) and depth >= 0 else 0,
                     foveal_focus=raw.get("foveal_focus"))
    sig.meta.setdefault("source", "system")
    sig.meta.setdefault("session", NO_CONVERSATION)
    return sig
