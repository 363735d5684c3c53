"""Provenance of a git span: an Org file whose history ever held a privacy tag.

``private_history`` judged a span by the file's privacy *now*: the history of a memex file
whose private entry was deleted (or moved out), and any file of another repository (a copy
of the memex, a backup) counted as public -- their diffs quote what the private entry said,
which no note holds any more for the content check to match."""

from __future__ import annotations

import subprocess
from pathlib import Path

from opencortex.memex import Memex
from opencortex.recall.ground import private_history

ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "x",
       "GIT_AUTHOR_EMAIL": "x@example.org", "GIT_COMMITTER_NAME": "x",
       "GIT_COMMITTER_EMAIL": "x@example.org"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={**ENV, "HOME": str(cwd)})


def _commit(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    _git(repo, "add", rel)
    _git(repo, "commit", "-qm", f"edit {rel}")


def test_a_memex_file_once_private_has_a_private_history(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    _git(root, "init", "-q")
    _commit(root, "journal.org", "* Therapy notes :private:\nWhat I said on Tuesday.\n")
    _commit(root, "journal.org", "* Groceries\nMilk.\n")  # the private entry deleted
    _commit(root, "plain.org", "* Groceries\nBread.\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    assert private_history(str(root), "journal.org", m)
    assert not private_history(str(root), "plain.org", m)
    m.close()


def test_a_copy_in_another_repository_is_judged_by_its_history(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* A\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    backup = tmp_path / "backup"
    backup.mkdir()
    _git(backup, "init", "-q")
    _commit(backup, "notes/health.org", "#+FILETAGS: :Private:\n* Blood test\nResults.\n")
    _commit(backup, "notes/todo.org", "* TODO call the bank :work:\n")
    assert private_history(str(backup), "notes/health.org", m)
    assert not private_history(str(backup), "notes/todo.org", m)
    m.close()
