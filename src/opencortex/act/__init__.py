"""Actuators: the only code that changes the world (reply, memex write, shell, web,
delegation) — each runs only after the guard said yes, and re-checks at the last mile."""

from __future__ import annotations

from .actuators import Actuators

__all__ = ["Actuators"]
