"""Surgical, atomic, journaled, undoable writes to the memex."""

from __future__ import annotations

from ..atomic import Snapshot, atomic_write, read_snapshot
from .writer import MemexWriter, WriteResult

__all__ = ["MemexWriter", "Snapshot", "WriteResult", "atomic_write", "read_snapshot"]
