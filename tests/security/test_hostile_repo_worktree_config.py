"""Red team (issue 23, third pass): a program named in a repository's *worktree*
configuration ran on ``git status``.

The guard read ``.git/config`` (and submodules') for keys that name programs, but git also
reads ``.git/config.worktree`` once ``extensions.worktreeConfig`` is set (and a linked
worktree's own), and a sync peer can write both: a ``filter.<driver>.clean`` there, with
``.gitattributes`` naming the driver, ran on ``git status`` / ``git diff`` (an "allow"
command with ``shell = "allow"``) while the guard saw a plain repository.  The guard now
also asks git for the configuration it actually reads (``git config --list
--show-scope``), whichever files it comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_shell_redteam import _check, _git, needs_sandbox


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* A\nalpha\n", encoding="utf-8")
    return root


@needs_sandbox
@pytest.mark.parametrize("key", ["filter.evil.clean", "filter.evil.process",
                                 "diff.evil.textconv", "core.worktree"])
def test_a_program_named_in_the_worktree_config_asks(memex: Path, key: str) -> None:
    _git(memex, "init", "-q")
    assert _check(memex, "git status").verdict == "allow"
    _git(memex, "config", "extensions.worktreeConfig", "true")
    value = "/" if key == "core.worktree" else "sh -c 'echo planted >&2; cat'"
    parts = key.split(".")
    section = f'{parts[0]} "{parts[1]}"' if len(parts) == 3 else parts[0]
    (memex / ".git" / "config.worktree").write_text(
        f"[{section}]\n\t{parts[-1]} = {value}\n", encoding="utf-8")
    (memex / ".gitattributes").write_text("*.org filter=evil diff=evil\n", encoding="utf-8")
    for cmd in ("git status", "git diff", "git -C . status --short"):
        d = _check(memex, cmd)
        assert d.verdict == "ask" and key.rsplit(".", 1)[1] in d.reason, (cmd, d.reason)
