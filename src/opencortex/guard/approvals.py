"""Approvals: "ask" actions wait here until the person says yes or no (in memory; the daemon
owns persistence and the channel the question goes out on)."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from .action import Action
from .errors import ApprovalError, UnknownApproval

__all__ = ["ApprovalQueue", "Pending", "Resolution"]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Pending:
    id: str
    action: Action
    """Exactly what will run if approved (pass it to ``Guard.last_mile(approved=...)``)."""
    reason: str
    created: datetime
    raised_by: str = ""
    """The gateway whose request raised it (``http``, ``telegram``, ``tui``, ...): the
    client that may see it; only the person resolves it."""


@dataclass(frozen=True, slots=True)
class Resolution:
    id: str
    approved: bool
    by: str
    at: datetime


class _Entry:
    __slots__ = ("done", "pending", "resolution")

    def __init__(self, pending: Pending) -> None:
        self.pending = pending
        self.resolution: Resolution | None = None
        self.done = threading.Event()


class ApprovalQueue:
    """Thread-safe queue of pending approvals; resolved ones are remembered (bounded)."""

    def __init__(self, *, keep_resolved: int = 1000,
                 clock: Callable[[], datetime] = _now) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, _Entry] = {}
        self._closed: OrderedDict[str, _Entry] = OrderedDict()
        self._keep = keep_resolved
        self._clock = clock

    def request(self, action: Action, reason: str, raised_by: str = "") -> Pending:
        """Queue ``action`` for approval; the id is short enough to type ("/approve 3f9a2c1b")."""
        with self._lock:
            while True:
                ident = secrets.token_hex(4)
                if ident not in self._open and ident not in self._closed:
                    break
            p = Pending(ident, action, reason, self._clock(), raised_by)
            self._open[ident] = _Entry(p)
            return p

    def resolve(self, id: str, approved: bool, by: str) -> Resolution:
        """Record the answer and wake waiters; unknown or already-answered ids raise."""
        with self._lock:
            e = self._open.pop(id, None)
            if e is None:
                done = self._closed.get(id)
                if done is not None and done.resolution is not None:
                    r = done.resolution
                    raise ApprovalError(
                        f"approval {id} was already {'approved' if r.approved else 'rejected'} "
                        f"by {r.by} at {r.at.isoformat(timespec='seconds')}; nothing changed")
                raise UnknownApproval(f"no pending approval with id {id!r}; "
                                    f"pending: {', '.join(self._open) or 'none'}")
            e.resolution = Resolution(id, bool(approved), by, self._clock())
            self._closed[id] = e
            while len(self._closed) > self._keep:
                self._closed.popitem(last=False)
        e.done.set()
        return e.resolution

    def wait(self, id: str, timeout: float | None = None) -> bool | None:
        """True/False once answered, None if ``timeout`` seconds pass first."""
        with self._lock:
            e = self._open.get(id) or self._closed.get(id)
        if e is None:
            raise UnknownApproval(f"no approval with id {id!r}")
        if not e.done.wait(timeout):
            return None
        assert e.resolution is not None
        return e.resolution.approved

    def pending(self) -> list[Pending]:
        """Unanswered requests, oldest first."""
        with self._lock:
            return sorted((e.pending for e in self._open.values()), key=lambda p: p.created)

    def get(self, id: str) -> tuple[Pending, Resolution | None]:
        with self._lock:
            e = self._open.get(id) or self._closed.get(id)
        if e is None:
            raise UnknownApproval(f"no approval with id {id!r}")
        return e.pending, e.resolution

    def cancel(self, id: str, by: str = "system") -> Resolution:
        """Reject on the person's behalf (e.g. the signal was dropped)."""
        return self.resolve(id, False, by)
