"""Recollection dialogues: a session id carried across repeated ``recollect`` calls.

Recall itself is not built yet (issue 6 fills it in); this keeps the contract so
clients can be written against it now: the first call (no ``session_id``) opens a
session and returns its id, later calls pass that id back.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NOT_AVAILABLE", "RecollectSessions", "UnknownSessionError"]

NOT_AVAILABLE = (
    "Recollection (a guided recall dialogue over your memex) is not available yet: "
    "nothing was recalled. Your message was kept in this session. Meanwhile use the "
    "`search` tool to find notes and `read` to read them in full."
)
MAX_SESSIONS = 256
"""The oldest sessions are forgotten beyond this many (sessions live in memory)."""


class UnknownSessionError(KeyError):
    """A ``session_id`` this server never issued (or has forgotten)."""


@dataclass(slots=True)
class _Session:
    id: str
    turns: list[str] = field(default_factory=list)
    touched: float = field(default_factory=time.monotonic)


class RecollectSessions:
    """In-memory recollection sessions, safe to use from worker threads."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._limit = limit
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def turn(self, message: str, session_id: str | None = None) -> dict[str, Any]:
        """Record ``message`` in a (new or existing) session; the honest reply."""
        with self._lock:
            if session_id:
                s = self._sessions.get(session_id)
                if s is None:
                    raise UnknownSessionError(session_id)
                s.touched = time.monotonic()
            else:
                s = _Session(uuid.uuid4().hex)
                self._sessions[s.id] = s
                self._evict()
            s.turns.append(message)
            return {"session_id": s.id, "turn": len(s.turns), "available": False,
                    "message": NOT_AVAILABLE, "recalled": []}

    def _evict(self) -> None:
        while len(self._sessions) > self._limit:
            oldest = min(self._sessions.values(), key=lambda x: x.touched)
            del self._sessions[oldest.id]
