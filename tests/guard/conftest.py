from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.guard import Guard, GuardPolicy
from opencortex.guard.sandbox import status

SANDBOX = status(GuardPolicy().shell)
needs_sandbox = pytest.mark.skipif(
    not SANDBOX.available, reason=f"an 'allow' verdict needs the OS sandbox: {SANDBOX.detail}")


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    (root / "notes").mkdir(parents=True)
    (root / "inbox.org").write_text("* TODO Call Sam\n", encoding="utf-8")
    (root / "notes" / "a.org").write_text("* A note\nbody\n", encoding="utf-8")
    return root


def policy(**shell: object) -> GuardPolicy:
    tools = shell.pop("tools", {})
    return GuardPolicy.from_config({"guard": {"tools": tools, "shell": shell}})


@pytest.fixture
def guard(memex: Path) -> Guard:
    return Guard(memex_root=memex)


@pytest.fixture
def open_guard(memex: Path) -> Guard:
    """shell = allow, pipes allowed: the most permissive configuration a user can write."""
    return Guard(policy(tools={"shell": "allow"}, allow_shell=True), memex_root=memex)
