"""Red team (issue 23): the command recall gives the person to reopen a commit ran what the
repository's own config names.

``(reopen: git -C REPO show SHA)`` is meant to be pasted into the person's terminal.  In a
cloned or synced repository (or one a transcript says a session ran in) whose
``.git/config`` sets ``filter.<driver>.process``, ``diff.<driver>.textconv``,
``core.pager`` or ``pager.log``, a plain ``git show`` / ``git log -p`` starts those
programs: OpenCortex's own git is pinned (``guard.runner.git_argv``), the command it hands
the person was not.  The reopen command now pins them off too, and still reopens."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from opencortex.recall.sources import git as gitsrc

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _hostile_repo(tmp_path: Path) -> tuple[Path, Path, str]:
    repo, marks = tmp_path / "cloned", tmp_path / "marks"
    repo.mkdir()
    marks.mkdir()
    g = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=Sam"]
    subprocess.run([*g, "init", "-q"], check=True)
    (repo / ".gitattributes").write_text("*.org filter=x diff=y\n")
    (repo / "f.org").write_text("* one\n")
    subprocess.run([*g, "add", "-A"], check=True)
    subprocess.run([*g, "commit", "-qm", "fix the flaky login test"], check=True)
    (repo / "f.org").write_text("* one\n* two\n")
    subprocess.run([*g, "commit", "-qam", "second fix"], check=True)
    sha = subprocess.run([*g, "rev-parse", "HEAD"], check=True, capture_output=True,
                         text=True).stdout.strip()
    with (repo / ".git" / "config").open("a") as f:  # planted after the commits
        for key, name in [("core.pager", "pager"), ("pager.log", "pagerlog"),
                          ("pager.show", "pagershow"), ("filter.x.process", "process"),
                          ("filter.x.clean", "clean"), ("filter.x.smudge", "smudge"),
                          ("diff.y.textconv", "textconv"), ("diff.y.command", "diffcmd"),
                          ("diff.external", "external"), ("gpg.program", "gpg")]:
            sec, _, k = key.rpartition(".")
            head = sec.split(".", 1)
            f.write(f'[{head[0]} "{head[1]}"]\n' if len(head) > 1 else f"[{sec}]\n")
            f.write(f'\t{k} = "touch {marks}/{name} #"\n')
        f.write("[log]\n\tshowSignature = true\n")
    return repo, marks, sha


def _paste(handle: str, tmp_path: Path) -> None:
    """Run the handle as the person would: in a shell, on a terminal when ``script`` is
    there (git pages only to a terminal)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "TERM": "dumb", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["sh", "-c", handle], env=env, cwd=tmp_path, capture_output=True,
                   timeout=60, check=False)
    if shutil.which("script"):
        subprocess.run(["script", "-qc", handle, "/dev/null"], env=env, cwd=tmp_path,
                       capture_output=True, timeout=60, check=False, stdin=subprocess.DEVNULL)


def test_the_reopen_command_of_a_commit_runs_nothing_the_repository_names(
        tmp_path: Path) -> None:
    repo, marks, sha = _hostile_repo(tmp_path)
    rec = gitsrc.commit_record(repo, sha)
    words = shlex.split(rec.handle)
    assert words[:3] == ["git", "-C", str(repo)] and sha in words
    _paste(rec.handle, tmp_path)
    assert sorted(p.name for p in marks.iterdir()) == []
    assert rec.handle == gitsrc.reopen(str(repo), sha)  # the one spelling, the index's too


@pytest.mark.parametrize("ident", [None, "one"])
def test_the_reopen_command_of_a_span_history_runs_nothing(tmp_path: Path,
                                                           ident: str | None) -> None:
    repo, marks, _ = _hostile_repo(tmp_path)
    rec = gitsrc.span_history(repo, "f.org", ident)
    assert "log" in shlex.split(rec.handle)
    _paste(rec.handle, tmp_path)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_reopen_command_still_shows_the_commit(tmp_path: Path) -> None:
    repo, _, sha = _hostile_repo(tmp_path)
    out = subprocess.run(shlex.split(gitsrc.reopen(str(repo), sha)), capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout
    assert sha in out and "second fix" in out and "+* two" in out
