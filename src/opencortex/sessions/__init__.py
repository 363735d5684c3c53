"""Conversations are records: every turn is written as Org in the memex."""

from __future__ import annotations

from .recorder import SessionRecorder

__all__ = ["SessionRecorder"]
