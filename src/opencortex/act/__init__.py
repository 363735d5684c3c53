"""Actuators: the only code that changes the world (reply, memex write, shell, web,
delegation) — each runs only after the guard said yes, and re-checks at the last mile.
Chosen from a table (``registry.ActuatorTable``) filled through the skills' hook."""

from __future__ import annotations

from .registry import ActEnv, Actuator, ActuatorTable, WriteOp

__all__ = ["ActEnv", "Actuator", "ActuatorTable", "WriteOp"]
