"""A hostile git repository: its own ``.git/config`` names a program (gpg.program with
log.showSignature, core.fsmonitor, a diff driver's textconv/command via .gitattributes,
core.pager, diff.external, core.alternateRefsCommand) that writes a canary file.  Recall
reads git histories; through every entry point the canary never appears — with the
sandbox and, for the pins alone, without it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencortex.guard import runner
from opencortex.guard import sandbox as sandbox_mod
from opencortex.guard.errors import ShellError

from .edge_live import daemons

_PLAIN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=M", "-c",
                           "user.email=m@x", "-c", "commit.gpgsign=false", *args],
                          input=stdin, capture_output=True, check=True, env=_PLAIN_ENV).stdout


def make_hostile(where: Path) -> tuple[Path, Path]:
    """(repository, canary path).  The repository has a commit carrying a (fake) gpg
    signature, a file whose diff goes through the ``evil`` driver, and a config naming the
    script in every key that runs a program."""
    canary = where / "canary"
    script = where / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran \"$0 $*\" >> {canary}\ncat \"$1\" 2>/dev/null\n"
                      "exit 0\n")
    script.chmod(0o755)
    repo = where / "hostile"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("*.txt diff=evil\n")
    (repo / "plan.txt").write_text("the umbrella migration plan, first draft\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "umbrella migration plan")
    (repo / "plan.txt").write_text("the umbrella migration plan, second draft\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "umbrella migration second draft")
    raw = _git(repo, "cat-file", "commit", "HEAD").decode()
    head, _, msg = raw.partition("\n\n")
    signed = (head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
              " -----END PGP SIGNATURE-----\n\n" + msg)
    sha = _git(repo, "hash-object", "-t", "commit", "-w", "--stdin",
               stdin=signed.encode()).decode().strip()
    _git(repo, "update-ref", "refs/heads/main", sha)
    for key in ("gpg.program", "core.fsmonitor", "diff.evil.textconv", "diff.evil.command",
                "diff.external", "core.pager", "pager.log", "pager.show",
                "core.alternateRefsCommand", "core.sshCommand", "credential.helper"):
        _git(repo, "config", key, str(script))
    _git(repo, "config", "log.showSignature", "true")
    _git(repo, "config", "core.hooksPath", str(where))
    return repo, canary


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    return make_hostile(tmp_path)


@pytest.fixture(params=["sandbox", "pins only"])
def boxed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each attack twice: in the sandbox, and with it off (the pins alone must hold)."""
    if request.param == "pins only":
        monkeypatch.setattr(sandbox_mod, "status", lambda policy: sandbox_mod.SandboxStatus(
            False, None, "turned off for this test"))
    elif not sandbox_mod.status(sandbox_mod.ShellPolicy()).available:
        pytest.skip("bubblewrap cannot create a sandbox here")
    return str(request.param)


def test_the_hostile_repository_does_run_its_programs_under_plain_git(
        hostile: tuple[Path, Path]) -> None:
    """The control: plain git (as recall ran it before) runs the planted program."""
    repo, canary = hostile
    subprocess.run(["git", "-C", str(repo), "--no-pager", "log", "-p", "-n2", "--", "plan.txt"],
                   capture_output=True, env=_PLAIN_ENV, check=False)
    assert canary.exists()


def test_every_recall_git_reader_runs_no_planted_program(hostile: tuple[Path, Path],
                                                         boxed: str) -> None:
    from opencortex.recall.sources import git as gitsrc

    repo, canary = hostile
    assert gitsrc.toplevel(repo) == repo.resolve()
    tips = gitsrc.branch_tips(repo)
    commits = list(gitsrc.log(repo))
    assert len(commits) == 2 and tips
    rec = gitsrc.commit_record(repo, commits[0].sha)
    assert "umbrella" in (rec.title or "")
    span = gitsrc.span_history(repo, "plan.txt")
    assert span.receipt.state == "succeeded", span.receipt
    assert "second draft" in "\n".join(t.text for t in span.turns)
    gitsrc.span_history(repo, "plan.txt", "umbrella")
    assert not canary.exists(), canary.read_text()


def test_the_runner_refuses_git_without_the_pins(hostile: tuple[Path, Path]) -> None:
    repo, canary = hostile
    with pytest.raises(ShellError, match="pinned"):
        runner.run(["git", "-C", str(repo), "log", "-p"], cwd=repo, timeout=10)
    argv = runner.git_argv(repo, "log", "-p")
    argv.remove("gpg.program=false")
    with pytest.raises(ShellError, match="pinned"):
        runner.run(argv, cwd=repo, timeout=10)
    with pytest.raises(ShellError, match="argv list"):
        runner.run(f"git -C {repo} log", cwd=repo, timeout=10)  # type: ignore[arg-type]
    assert not canary.exists()


def test_recall_over_a_configured_hostile_repository(memex: Path, hostile: tuple[Path, Path],
                                                     boxed: str, tmp_path: Path) -> None:
    """The person configured the repository (a clone they did not write): recall indexes
    it, searches it and grounds answers in it without running anything it names."""
    from opencortex.memex import Memex
    from opencortex.recall.engine import Recall
    from opencortex.recall.index import Root

    repo, canary = hostile
    m = Memex(memex, index=tmp_path / "idx.sqlite3")
    try:
        eng = Recall(m, [Root("git", str(repo))], defaults=False,
                     state_dir=tmp_path / "state")
        eng.refresh(embed=False)
        rnd = eng.start("when did I write the umbrella migration plan")
        assert rnd.to_dict()
    finally:
        m.close()
    assert not canary.exists(), canary.read_text()


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


def test_http_recall_cannot_name_a_new_repository(memex: Path, hostile: tuple[Path, Path],
                                                  live_factory: Any) -> None:
    """A client's ``sources`` and a cue's "in /path" may narrow recall, never add a root:
    the hostile repository is not read at all (and, were it read, would run nothing)."""
    repo, canary = hostile
    live = live_factory(memex)
    st, body, _ = live.request("POST", "/v1/recall", {"cue": "the umbrella migration plan",
                                                      "sources": [f"git:{repo}"]})
    assert st in (400, 403), body
    assert "configured" in json.dumps(body)
    st, body, _ = live.request("POST", "/v1/recall", {
        "cue": f"the umbrella migration plan in {repo}"})
    assert st == 200, body
    assert "second draft" not in json.dumps(body)
    assert str(repo) not in json.dumps(body.get("searched", body))
    assert not canary.exists(), canary.read_text()


def test_the_pins_come_from_one_list() -> None:
    """The shell guard's environment and the runner pin the same keys."""
    from opencortex.guard.policy import GuardPolicy
    from opencortex.guard.shell import minimal_env

    env = minimal_env(GuardPolicy().shell, parent={})
    keys = {env[f"GIT_CONFIG_KEY_{n}"] for n in range(int(env["GIT_CONFIG_COUNT"]))}
    assert keys == {k for k, _ in runner.GIT_PINS}
    for key in ("core.fsmonitor", "gpg.program", "core.pager", "core.hooksPath",
                "core.sshCommand", "credential.helper", "core.askPass", "core.editor",
                "log.showSignature", "protocol.allow", "core.alternateRefsCommand"):
        assert key in keys
    assert os.environ.get("GIT_EXTERNAL_DIFF") is None or "GIT_EXTERNAL_DIFF" not in env
