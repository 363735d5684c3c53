"""What a skill is: name, priority, trigger, a prompt-building "neuro" stage, a
deterministic "symbolic" verifier, an offline proposer, and the tools it may use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..guard.action import Action  # one Action type: what skills propose, the guard checks

if TYPE_CHECKING:
    from ..memex import Memex
    from ..signal import Signal

__all__ = ["Action", "Context", "Proposal", "Rejection", "Skill"]

Proposal = dict[str, Any]
"""What reasoning proposes: ``{"action": "reply" | "capture" | "shell" | ..., ...}``."""


@dataclass(slots=True)
class Rejection:
    """A symbolic verifier's refusal: fed back to the model, surfaced if final."""

    reason: str


@dataclass(slots=True)
class Context:
    """What a skill sees for one signal."""

    signal: Signal
    memex: Memex
    logs: list[str] = field(default_factory=list)
    focus: Any = None
    """The node at point (foveal focus), if any."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.signal.text


Trigger = Callable[[Context], bool]
Neuro = Callable[[Context], str]
Symbolic = Callable[[Proposal, Context], "Action | Rejection | None"]
Offline = Callable[[Context], Proposal]


@dataclass(slots=True)
class Skill:
    name: str
    priority: int = 50
    trigger: Trigger = field(default=lambda ctx: False)
    neuro: Neuro | None = None
    symbolic: Symbolic | None = None
    offline: Offline | None = None
    """The deterministic reasoner's proposal when no model is configured."""
    tools: list[str] = field(default_factory=list)
    description: str = ""
    verifies: list[str] = field(default_factory=list)
    """Action kinds this skill's symbolic stage also checks when another skill proposes
    them (e.g. a policy skill verifying every "shell" proposal)."""
    source: str = "builtin"
    schema: dict[str, Any] | None = None
    """JSON schema of the proposal the model must return (default: the generic one)."""
    instructions: str = ""
    """The skill's fixed instructions to the model, sent in the system message before
    anything that changes per call (so a model server reuses its cached prefix); ``neuro``
    then gives only the volatile part (the request, retrieved passages)."""
    consult: Callable[[Context], bool] | None = None
    """Whether to ask the model for this signal at all (None: whenever a model is
    configured); False: the offline proposer answers with no model call."""
