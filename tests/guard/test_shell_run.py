"""The runner, with real subprocesses."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from opencortex.guard import (
    Action,
    Guard,
    GuardDenied,
    ShellError,
    minimal_env,
    run_shell,
)

from .conftest import needs_sandbox, policy


def test_echo(memex: Path) -> None:
    r = run_shell(["echo", "hello"], policy(), memex, memex_root=memex)
    assert (r.returncode, r.stdout, r.stderr, r.truncated, r.timed_out) == (
        0, "hello\n", "", False, False)


def test_runs_in_cwd_without_a_shell(memex: Path) -> None:
    r = run_shell(["ls"], policy(), memex / "notes", memex_root=memex)
    assert r.stdout.split() == ["a.org"]
    r = run_shell(["echo", "$HOME;", "`id`", "|", "*"], policy(), memex, memex_root=memex)
    assert r.stdout == "$HOME; `id` | *\n"  # nothing expanded: no shell


def test_nonzero_exit_and_stderr(memex: Path) -> None:
    r = run_shell(["ls", "does-not-exist"], policy(), memex, memex_root=memex)
    assert r.returncode != 0 and "does-not-exist" in r.stderr


def test_timeout_kills_the_process_group(memex: Path) -> None:
    p = policy(allow=["sleep", "echo"], allow_shell=True, timeout=0.5)
    t = time.monotonic()
    r = run_shell(["sleep", "5"], p, memex, memex_root=memex, sandbox=False)
    assert time.monotonic() - t < 2.5
    assert r.timed_out and r.returncode != 0 and "timed out" in r.stderr
    # a child that outlives its parent is killed with the group and does not hold us up
    marker = memex / "survived"
    t = time.monotonic()
    r = run_shell(["/bin/sh", "-c", f"(sleep 1; echo x > {marker}) & sleep 5"], p, memex,
                  memex_root=memex, sandbox=False)  # unboxed: the marker could be written
    assert r.timed_out and time.monotonic() - t < 2.0
    time.sleep(1.0)
    assert not marker.exists()


def test_background_straggler_does_not_hang(memex: Path) -> None:
    p = policy(allow=["sleep", "echo"], allow_shell=True, timeout=10)
    t = time.monotonic()
    r = run_shell(["/bin/sh", "-c", "sleep 5 & echo done"], p, memex, memex_root=memex,
                  sandbox=False)
    assert time.monotonic() - t < 2.5
    assert r.stdout == "done\n" and not r.timed_out


def test_output_cap(memex: Path) -> None:
    p = policy(allow=["head", "yes"], max_output=1000)
    r = run_shell(["head", "-c", "1000000", "/dev/zero"], p, memex, memex_root=memex)
    assert r.truncated and not r.timed_out
    assert r.stdout.startswith("\0" * 1000) and "truncated at 1000 bytes" in r.stdout
    t = time.monotonic()  # an endless producer is stopped, not waited for
    r = run_shell(["yes"], p, memex, memex_root=memex)
    assert r.truncated and time.monotonic() - t < 2


def test_one_megabyte_fits_a_big_cap(memex: Path) -> None:
    p = policy(max_output=2_000_000)
    r = run_shell(["head", "-c", "1048576", "/dev/zero"], p, memex, memex_root=memex)
    assert not r.truncated and len(r.stdout) == 1048576


def test_minimal_environment(memex: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ["OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SECRET", "DB_PASSWORD", "AWS_SESSION_TOKEN",
              "RANDOM_SETTING"]:
        monkeypatch.setenv(k, "leak-me")
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    p = policy(allow=["env"])
    r = run_shell(["env"], p, memex, memex_root=memex)
    assert "leak-me" not in r.stdout and "LD_PRELOAD" not in r.stdout
    env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert env["PATH"] == os.pathsep.join(p.shell.path)
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    e = minimal_env(p, {"HOME": "/h", "API_KEY_HOME": "x", "LC_ALL": "C"}, {"SAFE": "1",
                                                                          "X_TOKEN": "t"})
    assert e["HOME"] == "/h" and e["LC_ALL"] == "C" and e["SAFE"] == "1"
    assert "API_KEY_HOME" not in e and "X_TOKEN" not in e


def test_output_is_redacted(memex: Path) -> None:
    (memex / "creds.org").write_text("token: ghp_" + "a" * 36 + "\n")
    r = run_shell(["cat", "creds.org"], policy(), memex, memex_root=memex)
    assert "ghp_" not in r.stdout and "[REDACTED:" in r.stdout
    raw = run_shell(["cat", "creds.org"], policy(), memex, memex_root=memex,
                    redact_output=False)
    assert "ghp_" in raw.stdout


def test_runner_refuses_what_the_guard_refuses(memex: Path, tmp_path: Path) -> None:
    with pytest.raises(ShellError, match="rm"):
        run_shell(["rm", "-rf", "/"], policy(allow=["rm"]), memex, memex_root=memex)
    with pytest.raises(ShellError, match="not an allowed program"):
        run_shell(["python3", "-V"], policy(), memex, memex_root=memex)
    with pytest.raises(ShellError, match="argv list"):
        run_shell("echo hi", policy(), memex)  # type: ignore[arg-type]
    with pytest.raises(ShellError, match="cwd"):
        run_shell(["ls"], policy(), tmp_path, memex_root=memex)
    with pytest.raises(ShellError, match="not found"):
        run_shell(["nosuchprogram"], policy(allow=["nosuchprogram"]), memex)


@needs_sandbox
def test_guard_run_shell_end_to_end(memex: Path) -> None:
    g = Guard(policy(tools={"shell": "allow"}), memex_root=memex)
    r = g.run_shell(Action("shell", {"command": "cat inbox.org"}, "shell"))
    assert r.stdout == "* TODO Call Sam\n"
    with pytest.raises(GuardDenied) as e:
        g.run_shell(Action("shell", {"command": "rm -rf /"}, "shell"))
    assert e.value.decision.denied


def test_guard_run_shell_needs_approval_when_ask(memex: Path) -> None:
    g = Guard(policy(), memex_root=memex)
    a = Action("shell", {"argv": ["echo", "ok"]}, "shell")
    with pytest.raises(GuardDenied, match="needs approval"):
        g.run_shell(a)
    d = g.check(a)
    assert d.needs_approval
    assert g.run_shell(a, approved=d.action).stdout == "ok\n"
