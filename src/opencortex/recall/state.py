"""A recall session's state between rounds: a versioned dataclass saved as JSON.

The file is ``<state dir>/recall/<session>.json``.  ``version`` 1 is the shape every
OpenCortex so far wrote (as a plain dict); :meth:`RecallState.from_dict` reads those files,
including older ones without the later optional keys, and refuses a newer version.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import RecallError

__all__ = ["STATE_VERSION", "RecallState"]

STATE_VERSION = 1


@dataclass(slots=True)
class RecallState:
    """Everything a reply needs: the boundary, the dialogue so far, what was shown."""

    session: str
    created: str
    """When the recall started (ISO, UTC)."""
    roots: list[str] = field(default_factory=list)
    """The boundary: ``KIND:PATH`` record sources (it travels with the session)."""
    memex: str | None = None
    index: str | None = None
    """The memex and index it was started on (a reply opens those, not the default)."""
    now: str | None = None
    """A pinned "now" (ISO) for tests and replays; None: the real time."""
    turns: list[dict[str, Any]] = field(default_factory=list)
    """The person's utterances: ``{"origin", "text", "role"}``."""
    admitted: list[dict[str, Any]] = field(default_factory=list)
    """Wider searches the person accepted (``kind``, ``reach``, …)."""
    places: list[Any] = field(default_factory=list)
    presented: dict[str, Any] | None = None
    """The candidate last shown (story, recognizable, qualifications, …), if any."""
    offered: dict[str, Any] | None = None
    """The wider search last offered, if any."""
    added_to_cue: bool = False
    noted: list[str] = field(default_factory=list)
    state: str = "open"
    """open, identified, stopped or unresolved (the last three are closed)."""
    trace: list[dict[str, Any]] = field(default_factory=list)
    """One entry per round: the cue read, what was searched, the outcome."""
    activation: str | None = None
    conversation: str | None = None
    """The OpenCortex conversation this recall runs in (its own record is never searched)."""
    withheld: bool | None = None
    """True when it was started by a client that may not see private notes (its passes
    left them out); a session without it (or older) may hold private notes in what it
    saved, and such a client does not continue it."""
    version: int = STATE_VERSION

    @classmethod
    def new(cls, session: str, **values: Any) -> RecallState:
        return cls(session=session, created=dt.datetime.now(dt.UTC).isoformat(), **values)

    @classmethod
    def from_dict(cls, data: Any) -> RecallState:
        """A saved state (any version up to this one); RecallError if it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("session"), str) or \
                not isinstance(data.get("created"), str):
            raise RecallError("not a recall session state (no session id or start time)")
        version = data.get("version", 1)
        if not isinstance(version, int) or version > STATE_VERSION:
            raise RecallError(f"recall session {data['session']!r} was written by a newer "
                              f"OpenCortex (state version {version!r}); upgrade to continue it")
        known = {f.name for f in fields(cls)} - {"version"}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def closed(self) -> bool:
        return self.state in ("identified", "stopped", "unresolved")
