"""``POST /v1/recall`` keeps a session's boundary: a reply without ``sources`` still searches
the git history the first turn named (a real repository, a real loopback server).  The
repository is one the person configured (``[recall] sources``): a client's ``sources``
may narrow recall to it, never add a root (tests/security/test_hostile_repo.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest


def _repo(path: Path) -> Path:
    env = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.org",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.org", "PATH": "/usr/bin:/bin"}
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    for i, msg in enumerate(["Add the quokka feeder schedule", "Fix the quokka feeder "
                             "overflow when the hopper sensor reads zero", "Docs: tidy"]):
        (path / f"f{i}.txt").write_text(f"{i}\n")
        subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", msg], check=True, env=env)
    return path


def test_a_reply_without_sources_keeps_the_first_turns(make_live: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "feeder")
    monkeypatch.setenv("OPENCORTEX_RECALL_SOURCES", f"git:{repo}")
    live = make_live()
    st, first, _ = live.request("POST", "/v1/recall", {
        "cue": "that commit where we fixed the quokka feeder overflow",
        "sources": [f"git:{repo}"]})
    assert st == 200, first
    roots = [r["root"] for r in first["searched"]["roots"]]
    assert any(r.startswith("git:") and r.endswith("feeder") for r in roots), roots
    st, second, _ = live.request("POST", "/v1/recall", {
        "session": first["session"], "reply": "no, the one about the hopper sensor"})
    assert st == 200, second
    again = {r["root"]: r["records"] for r in second["searched"]["roots"]}
    git = [r for r in again if r.startswith("git:") and r.endswith("feeder")]
    assert git and again[git[0]] >= 3, again
