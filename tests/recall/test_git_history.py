"""Recall over a git history as a person meets one: a repository with a detached HEAD and
no local branch (a fresh clone of a bundle, a CI checkout) is searched through HEAD's
history; commits are ranked by what the cue means, a long body does not win by volume,
and a presented candidate is records, each once, with its best lines."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.recall.engine import Recall, parse_source
from opencortex.recall.index import RecordIndex

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def _git(repo: Path, *args: str, when: str = "2024-01-01T10:00:00+00:00",
         who: str = "Ada Lovelace") -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL="a@x",
               GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL="a@x",
               GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def _commit(repo: Path, path: str, text: str, message: str, **kw: str) -> str:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    _git(repo, "add", path, **kw)
    _git(repo, "commit", "-qm", message, **kw)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    _commit(r, "README.md", "a tool\n", "Add a readme", when="2023-02-01T10:00:00+00:00")
    _commit(r, "src/store.py", "x = 1\n", "Keep the cache in a database file on disk",
            when="2023-03-01T10:00:00+00:00")
    return r


def _engine(tmp_path: Path, repo: Path) -> tuple[Recall, Memex]:
    (tmp_path / "memex").mkdir(exist_ok=True)
    m = Memex(tmp_path / "memex", tmp_path / "index.sqlite3")
    return Recall(m, [parse_source(f"git:{repo}")], defaults=False,
                  state_dir=tmp_path / "state", gateway=False), m


def test_a_detached_head_without_branches_is_searched_through_its_history(
        repo: Path, tmp_path: Path) -> None:
    _git(repo, "checkout", "-q", "--detach")
    _git(repo, "branch", "-q", "-D", "main")
    assert _git(repo, "for-each-ref", "refs/heads") == ""
    engine, m = _engine(tmp_path, repo)
    try:
        assert engine.refresh(embed=False).commits_added == 2
        # a commit made on the detached HEAD is picked up incrementally
        _commit(repo, "NOTES.md", "n\n", "Write down the release steps",
                when="2023-04-01T10:00:00+00:00")
        again = engine.refresh(embed=False)
        assert again.commits_added == 1
        assert RecordIndex.for_memex(m).counts().get("commit") == 3
    finally:
        m.close()
