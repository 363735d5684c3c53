"""Read-only record sources for recall: other agents' conversations and OpenCortex's own,
turned into ``Record``s with a capture ``Receipt`` saying what was read and how well."""

from __future__ import annotations

from .records import Receipt, Record, Revision, Turn

__all__ = ["Receipt", "Record", "Revision", "Turn"]
