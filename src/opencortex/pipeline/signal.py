"""Moved to ``opencortex.signal`` (the base layer every package may import); this name
re-exports it for one release.  Import ``opencortex.signal`` instead."""

from __future__ import annotations

from ..signal import (
    ASYNC_SENSORS,
    SIGNAL_TYPES,
    SYNC_SENSORS,
    Delegation,
    Intent,
    Signal,
    SignalError,
    inject,
)

__all__ = ["ASYNC_SENSORS", "SIGNAL_TYPES", "SYNC_SENSORS", "Delegation", "Intent", "Signal",
           "SignalError", "inject"]
