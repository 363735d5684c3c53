"""The metabolic pipeline: raw stimuli → Signals → perceive → reason → act (→ feedback).

The stage types live in ``opencortex.signal`` (the base layer); this package is the loop."""

from __future__ import annotations

from ..signal import ASYNC_SENSORS, SYNC_SENSORS, Signal, inject

__all__ = ["ASYNC_SENSORS", "SYNC_SENSORS", "Signal", "inject"]
