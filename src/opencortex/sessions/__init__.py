"""Conversations are records: every turn is written as Org in the memex."""

from __future__ import annotations

from typing import Any

__all__ = ["SessionRecorder"]


def __getattr__(name: str) -> Any:  # lazy: the CLI imports sessions.ids at start-up
    if name == "SessionRecorder":
        from .recorder import SessionRecorder

        return SessionRecorder
    raise AttributeError(name)
