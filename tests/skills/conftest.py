"""Shared fixtures: a synced private memex with an isolated index, a fixed "now", and a
helper running one skill's trigger -> offline proposer -> symbolic verifier."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencortex.memex import Memex
from opencortex.signal import inject
from opencortex.skills.base import Context, Skill

NOW = dt.datetime(2026, 11, 30, 10, 0)


@pytest.fixture
def mx(memex: Path, tmp_path: Path) -> Iterator[Memex]:
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    m.writer.clock = lambda: NOW
    yield m
    m.close()


def ctx_for(m: Memex, text: str | None = None, **delegation: Any) -> Context:
    """A user request (``text``) or a delegation signal (payload keys)."""
    if delegation:
        sig = inject({"sensor": "delegation", "text": text or "", **delegation})
    else:
        sig = inject({"sensor": "user-input", "text": text or ""})
    return Context(sig, m, extra={"now": NOW})


def run(skill: Skill, ctx: Context) -> tuple[dict[str, Any], Any]:
    """(proposal, verdict) for ``ctx``; the trigger must fire."""
    assert skill.trigger(ctx), ctx.signal.payload
    assert skill.offline is not None and skill.symbolic is not None
    p = skill.offline(ctx)
    return p, skill.symbolic(p, ctx)
