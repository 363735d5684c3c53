"""The actuator table: which function runs an approved Action (by its ``tool``) and which
runs a ``memex.write`` op (by its ``op``).

Nothing here is chosen by ``getattr`` on a name: a tool runs only if something registered
it, through the one hook skills use (``SkillRegistry``'s registrar: built-ins and entry-point
plugins alike).  A name belongs to the source that registered it first; another source
cannot take it over.  Actuators get an ``ActEnv`` — what the kernel lends them (memex,
lock, guard, reply channel) — and return a feedback Signal, a Delegation or None: the
kernel loop runs what comes back, so act/ never imports or calls the pipeline."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..guard.action import Action
from ..signal import Delegation, Signal

if TYPE_CHECKING:
    from ..memex import Memex

__all__ = ["ActEnv", "Actuator", "ActuatorTable", "WriteOp"]


@dataclass(slots=True)
class ActEnv:
    """What the kernel lends an actuator for one action (nothing that runs signals)."""

    memex: Memex
    memex_lock: Any
    """The lock every memex call from a worker holds (an RLock)."""
    guard: Any
    """The kernel's Guard (``run_shell``, policy)."""
    registry: Any
    """The SkillRegistry (skills layer, above act: typed loosely on purpose)."""
    table: ActuatorTable
    reply: Callable[[Signal, str, Any], None]
    """Send text (+ structured data) back on the signal's reply channel."""
    batch_of: Callable[[Signal], str]
    """The rollback batch the signal's writes belong to."""


Actuator = Callable[[Action, Signal, ActEnv], "Signal | Delegation | None"]
"""Runs an approved action; a feedback Signal (e.g. tool-output), a Delegation, or None."""
WriteOp = Callable[[Action, Signal, ActEnv], tuple[str, Any]]
"""One ``memex.write`` op, run under the memex lock with the signal's batch set:
returns (reply text, reply data)."""


class ActuatorTable:
    """tool → Actuator and op → WriteOp, each remembering the source that registered it."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[Actuator, str]] = {}
        self._ops: dict[str, tuple[WriteOp, str]] = {}
        self._lock = threading.Lock()

    def add_actuator(self, tool: str, fn: Actuator, source: str) -> None:
        self._add(self._tools, "actuator for tool", tool, fn, source)

    def add_write_op(self, op: str, fn: WriteOp, source: str) -> None:
        self._add(self._ops, "memex write op", op, fn, source)

    def _add(self, table: dict[str, Any], what: str, name: str, fn: Any, source: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"an {what} needs a name, got {name!r}")
        if not callable(fn):
            raise TypeError(f"the {what} {name!r} is not callable: {fn!r}")
        with self._lock:
            old = table.get(name)
            if old is not None and old[1] != source:
                raise ValueError(f"the {what} {name!r} is already registered by {old[1]}")
            table[name] = (fn, source)

    def drop_source(self, source: str) -> None:
        """Forget every tool and op ``source`` registered (a plugin that failed midway)."""
        with self._lock:
            for table in (self._tools, self._ops):
                for name in [n for n, (_fn, src) in table.items() if src == source]:
                    del table[name]

    def actuator(self, tool: str) -> Actuator | None:
        got = self._tools.get(tool)
        return got[0] if got else None

    def write_op(self, op: str) -> WriteOp | None:
        got = self._ops.get(op)
        return got[0] if got else None

    def tools(self) -> dict[str, str]:
        """tool → the source that registered it."""
        return {k: v[1] for k, v in sorted(self._tools.items())}

    def ops(self) -> dict[str, str]:
        """write op → the source that registered it."""
        return {k: v[1] for k, v in sorted(self._ops.items())}

    def run(self, action: Action, signal: Signal, env: ActEnv) -> Signal | Delegation | None:
        fn = self.actuator(action.tool)
        if fn is None:
            raise ValueError(f"no actuator for tool {action.tool!r}")
        return fn(action, signal, env)
