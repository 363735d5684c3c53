"""A ``.git`` inside the memex that leads outside it is not "the memex's repository".

Recall reads the memex's own git history by default.  A sync peer (or a client's write)
that plants ``memex/.git`` -- a ``gitdir:`` file or a symlink -- pointing at another
repository on the machine made that repository's history part of every client's recall
boundary, without the person naming it.  It is read only when ``[recall] sources`` names
it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.recall.engine import Recall


def _repo(at: Path) -> Path:
    at.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(at), "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["config", "user.email", "x@example.org"],
                 ["config", "user.name", "x"]):
        subprocess.run(["git", "-C", str(at), *args], check=True, env=env)
    (at / "f.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(at), "add", "f.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(at), "commit", "-qm", "secret work"], check=True, env=env)
    return at


@pytest.mark.parametrize("how", ["gitdir-file", "symlink"])
def test_a_planted_git_pointer_names_no_repository(tmp_path: Path, how: str) -> None:
    other = _repo(tmp_path / "other")
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* A\n")
    if how == "gitdir-file":
        (root / ".git").write_text(f"gitdir: {other / '.git'}\n")
    else:
        (root / ".git").symlink_to(other / ".git")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    for eng in (Recall(m, defaults=False, gateway=False),
                Recall.narrowed(m, [], defaults=False, gateway=False)):
        gits = [r.path for r in eng.base_roots if r.kind == "git"]
        assert gits == [], gits
    m.close()


def test_the_memex_own_repository_still_counts(tmp_path: Path) -> None:
    root = _repo(tmp_path / "memex")
    (root / "a.org").write_text("* A\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    eng = Recall.narrowed(m, [], defaults=False, gateway=False)
    assert [r.path for r in eng.base_roots if r.kind == "git"] == [str(root.resolve())]
    m.close()
