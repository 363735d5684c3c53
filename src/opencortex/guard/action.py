"""The boundary types: what a skill proposes (Action), what the guard says (Decision)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .policy import Verdict

__all__ = [
    "UNTRUSTED_ORIGINS",
    "Action",
    "Decision",
    "GuardContext",
    "is_untrusted_origin",
    "untrusted_origin",
]

UNTRUSTED_ORIGINS: frozenset[str] = frozenset({"", "untrusted"})
"""Origins naming *content* rather than a skill (plus anything ``untrusted:<source>``).
Only skills originate actions; text that merely says "run X" (a note, a web page, a
tool's output) never does.  Skill names are free otherwise ("web", "notes", ...)."""


def untrusted_origin(source: str) -> str:
    """The origin to stamp on anything derived from content of ``source`` (note, web, ...)."""
    return f"untrusted:{source}"


def is_untrusted_origin(origin: object) -> bool:
    """True when ``origin`` is not a skill name (blank, ``untrusted``, ``untrusted:*``)."""
    if not isinstance(origin, str):
        return True
    o = origin.strip().casefold()
    return o in UNTRUSTED_ORIGINS or o.startswith("untrusted:")


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a skill wants done: ``tool`` + ``args``, and which skill (``origin``) asked.

    ``origin`` is set by the skill's code, never parsed out of model or note text.
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    origin: str = ""

    @classmethod
    def from_proposal(cls, data: Mapping[str, Any], origin: str) -> Action:
        """Build from a parsed model proposal; any ``origin`` inside ``data`` is ignored."""
        return cls(tool=str(data.get("tool", "")), args=dict(data.get("args") or {}),
                   origin=origin)

    def with_args(self, **changes: Any) -> Action:
        return Action(self.tool, {**self.args, **changes}, self.origin)


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str
    """What was allowed/blocked and why; for a deny, how to allow it if config can."""
    action: Action
    """The action as it must be executed (normalised: argv list, resolved path)."""

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"

    @property
    def needs_approval(self) -> bool:
        return self.verdict == "ask"

    @property
    def denied(self) -> bool:
        return self.verdict == "deny"


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What the guard needs to know about the situation an action runs in."""

    memex_root: Path | None = None
    """Overrides the Guard's root (writes and shell cwd are confined under it)."""
    tags: frozenset[str] = frozenset()
    """Every tag (inherited included) of the material the action carries."""
    remote: bool = False
    """The action's content leaves this machine (remote model, remote delegate, web)."""
    private_text: Callable[[str], str | None] | None = field(default=None, compare=False)
    """Why a text carries private material (the egress check: the chain's provenance, then
    the private-text prints), or None; given by the kernel, read for an action whose
    content leaves this machine while ``remote_ok`` is false -- a web search query or URL
    a model wrote is as much an exit as a prompt to a remote model."""

    @classmethod
    def of(cls, memex_root: Path | str | None = None, tags: Iterable[str] = (),
           remote: bool = False) -> GuardContext:
        return cls(Path(memex_root) if memex_root is not None else None,
                   frozenset(tags), remote)
