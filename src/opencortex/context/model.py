"""What context assembly hands a model: the Org text plus the same content as data.

The structured half exists so callers (pipeline, tests, Emacs) can see exactly which
nodes went in and what was cut without re-parsing the text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["AssembledContext", "Omission", "Section"]


@dataclass(slots=True)
class Section:
    """One top-level ``* Heading`` of the context and the entries it shows."""

    name: str
    """Stable identifier: focus, agenda, next, neighbours, projects, done, skills, log."""
    title: str
    """The Org heading text (``Focus``, ``Agenda`` …)."""
    priority: int
    """Lower is more important; higher numbers are cut first under a budget."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None
    """Shown when the section has nothing (``Nothing scheduled today.``): absence is news."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Omission:
    """Something left out of the text, counted, never named when it is private."""

    section: str
    count: int
    unit: str
    """What was counted: ``entries``, ``log lines``, ``tokens`` …"""
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return f"{self.count} {self.unit} ({self.reason})"


@dataclass(slots=True)
class AssembledContext:
    """The context a model sees (``text``) and, as data, what went in and what did not."""

    text: str
    sections: list[Section]
    tokens: int
    budget: int
    omitted: list[Omission] = field(default_factory=list)
    withheld_private: int = 0
    """Nodes left out because they carry a privacy tag and the context goes remote."""
    now: str = ""
    remote: bool = False
    notes: list[str] = field(default_factory=list)
    """Diagnostics for the caller (e.g. retrieval ran sparse-only); not shown to the model."""

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "sections": [s.to_dict() for s in self.sections],
            "tokens": self.tokens,
            "budget": self.budget,
            "omitted": [o.to_dict() for o in self.omitted],
            "withheld_private": self.withheld_private,
            "now": self.now,
            "remote": self.remote,
            "notes": self.notes,
        }
