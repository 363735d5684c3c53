"""Moved to ``opencortex.atomic`` (the base layer, so the guard's trust store can use it
without importing write/); re-exported here for one release.  Tests that set
``fault_hook`` set it on ``opencortex.atomic``."""

from __future__ import annotations

from ..atomic import Snapshot, atomic_write, read_snapshot, remove_file

__all__ = ["Snapshot", "atomic_write", "read_snapshot", "remove_file"]
