"""Issue 12, shell: red-team findings against the allow-by-argument guard.  Each test is an
attack that got "allow" (or hid itself in the approval text) before its fix; the fix makes
the unknown ask instead of patching the one spelling."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from opencortex.guard import Action, Guard, GuardPolicy
from opencortex.guard.sandbox import status

SANDBOX = status(GuardPolicy().shell)
needs_sandbox = pytest.mark.skipif(
    not SANDBOX.available, reason=f"needs the OS sandbox: {SANDBOX.detail}")
PROGRAMS = ["ls", "rg", "git", "date", "cat", "echo", "wc", "head", "tail", "grep", "find",
            "sed", "sort", "uniq", "tar", "env", "nice", "timeout", "nohup", "command"]


def _policy(**shell: object) -> GuardPolicy:
    return GuardPolicy.from_config({"guard": {"tools": {"shell": "allow"}, "shell": {
        "allow": PROGRAMS, **shell}}})


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* A\nalpha\n", encoding="utf-8")
    return root


def _check(memex: Path, command: str | list[str], **shell: object):
    key = "command" if isinstance(command, str) else "argv"
    return Guard(_policy(**shell), memex_root=memex).check(
        Action("shell", {key: command}, "shell"))


# -- 1. words the shell reads differently from the checker (allow_shell) ---------------
SHELL_QUOTING = [
    # bash's ANSI-C quoting: the checker saw the literal word "$\x2d\x2dpre=..."
    r"bash -c 'rg $'\''\x2d\x2dpre=/usr/bin/id'\'' alpha .'",
    r"ls; rg $'\055\055pre=/usr/bin/id' alpha .",
    r"ls; git diff $'\x2d\x2doutput=a.org'",
    # $"..." (locale translation) is plain text to bash
    'ls; rg $"--pre=/usr/bin/id" alpha .',
    # backslash-newline joins two words in the shell, the checker saw two commands
    "ls; git diff \"--out\\\nput=a.org\"",
    "ls; rg \"-\\\n-pre=/usr/bin/id\" alpha .",
    # sequence brace expansion
    "ls; echo {a..c}",
]


@pytest.mark.parametrize("command", SHELL_QUOTING)
def test_shell_quoting_the_checker_does_not_read_asks(memex: Path, command: str) -> None:
    d = _check(memex, command, allow_shell=True)
    assert d.verdict != "allow", d.reason


@needs_sandbox
def test_ansi_c_quoted_pre_does_not_run(memex: Path, tmp_path: Path) -> None:
    """Proof through the pipeline: before the fix this ran /usr/bin/id through rg --pre."""
    g = Guard(_policy(allow_shell=True), memex_root=memex)
    a = Action("shell", {"command": r"bash -c 'rg $'\''\x2d\x2dpre=/usr/bin/id'\'' alpha .'"},
               "shell")
    d = g.check(a)
    assert d.needs_approval and "expands" in d.reason


# -- 2. values stuck to short options that leave the memex -----------------------------
@pytest.mark.parametrize("command", [
    "env -C.. cat a.org", "env -C../.. cat etc/passwd", "date -f../x", "head -c../x",
    "env -C.. git log", "tar -tf a.tar -C..",
])
def test_stuck_dotdot_values_are_paths(memex: Path, command: str) -> None:
    d = _check(memex, command)
    assert d.verdict != "allow", d.reason


# -- 3. env can strip the variables that neutralise a repository's own config ----------
@pytest.mark.parametrize("command", [
    "env -i git status", "env -u GIT_CONFIG_COUNT git status",
    "env --unset=GIT_CONFIG_COUNT git log", "env --ignore-environment git log",
    "env -iu X git log",
])
def test_env_cannot_drop_the_safety_variables(memex: Path, command: str) -> None:
    d = _check(memex, command)
    assert d.verdict != "allow", d.reason


# -- 4. symlinks in the memex that point outside it -----------------------------------
def test_a_named_symlink_to_outside_asks(memex: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret\n")
    (memex / "notes.org").symlink_to(secret)
    (memex / "dir").symlink_to(tmp_path)
    for cmd in ("cat notes.org", "head -n1 notes.org", "rg s3cret dir",
                "grep --file=notes.org a.org", "git diff --no-index a.org notes.org"):
        d = _check(memex, cmd)
        assert d.verdict != "allow", (cmd, d.reason)
        assert "outside the memex" in d.reason
    assert _check(memex, "cat a.org").verdict == "allow"
    # a glob in a shell string expands to the symlink
    d = _check(memex, "ls; cat *.org", allow_shell=True)
    assert d.verdict != "allow" and "notes.org" in d.reason, d.reason
    assert _check(memex, "ls; cat a.*", allow_shell=True).verdict == "allow"


@pytest.mark.parametrize("command", [
    "rg -L x", "rg --follow x", "grep -R x .", "grep --dereference-recursive x .",
    "find -L . -name x", "find . -follow -name x", "ls -LR .",
    # file names read from a memex file are paths the path check never sees
    "sort --files0-from=a.org", "wc --files0-from=a.org", "find -files0-from a.org",
])
def test_following_symlinks_or_reading_names_from_a_file_asks(memex: Path, command: str) -> None:
    d = _check(memex, command)
    assert d.verdict != "allow", d.reason


# -- 5. the approval text cannot hide what runs ----------------------------------------
@pytest.mark.parametrize("word", [
    "a.org\x1b[2K\r\x1b[1Acat a.org",       # erase the line, show something else
    "a.org\u202e gro.txt",                   # right-to-left override
    "a.org\u200b",                           # zero-width space
    "a.org\n\n\n\n\n\n",                     # push the rest off the screen
])
def test_the_approval_text_shows_control_characters(memex: Path, word: str) -> None:
    pol = GuardPolicy.from_config({"guard": {"tools": {"shell": "ask"}}})
    d = Guard(pol, memex_root=memex).check(Action("shell", {"argv": ["cat", word]}, "shell"))
    assert d.needs_approval
    assert all(c.isprintable() or c == " " for c in d.reason), repr(d.reason)


# -- 6. git options that make git start gpg / a configured command ---------------------
@pytest.mark.parametrize("command", [
    "git log --format=%G?", "git log --pretty=format:%GS", "git show -s --format=%GK",
    "git log --pretty=tformat:%GG", "git log --alternate-refs",
])
def test_git_formats_that_run_gpg_ask(memex: Path, command: str) -> None:
    d = _check(memex, command)
    assert d.verdict != "allow", d.reason


@needs_sandbox
def test_a_planted_gpg_program_does_not_run(memex: Path, tmp_path: Path) -> None:
    """Even approved, %G? in a repository whose config names a gpg.program runs gpg from
    the environment's setting (which is `false`), not the planted one."""
    from opencortex.guard.shell import run_shell
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_GLOBAL": "/dev/null"}
    marker = memex / "ran.txt"

    def git(*a: str) -> None:
        subprocess.run(["git", *a], cwd=memex, check=True, env=env, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one")
    # a commit object with a (fake) signature, so log asks gpg to verify it
    head = subprocess.run(["git", "cat-file", "commit", "HEAD"], cwd=memex, env=env,
                          capture_output=True, text=True, check=True).stdout
    body = head.replace("\n\n", "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n"
                        " x\n -----END PGP SIGNATURE-----\n\n", 1)
    sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=memex,
                         env=env, input=body, capture_output=True, text=True,
                         check=True).stdout.strip()
    git("update-ref", "HEAD", sha)
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho RAN-PLANTED-GPG\ntouch {marker}\n")
    os.chmod(script, 0o755)
    git("config", "gpg.program", str(script))
    r = subprocess.run(["git", "log", "--format=%G?"], cwd=memex, env=env,
                       capture_output=True, text=True, check=False)
    assert marker.exists()  # control: unguarded, the planted program runs
    marker.unlink()
    policy = GuardPolicy.from_config({"guard": {"shell": {"allow": ["git"]}}})
    r = run_shell(["git", "log", "--format=%G?"], policy, memex, memex_root=memex,
                  sandbox=False)
    assert not marker.exists(), r.stdout + r.stderr


def test_a_long_command_cannot_push_the_reason_out_of_view(memex: Path) -> None:
    """Approval UIs cut long texts (a chat message, a TUI line): the reason comes first and
    each part of it is short, so the dangerous option is named near the start."""
    filler = ["a.org"] * 2000
    for argv in (["git", "diff", *filler, "--output=a.org"],
                 ["git", "diff", "--" + "x" * 5000, "--output=a.org"],
                 ["sort", "--" + "y" * 5000, "-o", "a.org", "a.org"]):
        d = _check(memex, argv)
        assert d.needs_approval
        head = d.reason[:700]
        assert "--output" in head or "sort -o:" in head, head


# -- 7. long inputs cannot stall the guard (it runs inside the daemon's request) --------
@pytest.mark.parametrize("command", [
    "rm -rf " + "/." * 7990,          # was 25 s: a backstop regex and _rootish were O(n^2)
    "cat " + "a/" * 7990,
    "curl " + "a/" * 7990,
    "f(){ " + "f|" * 7990,
    "ls; echo " + "'a'" * 5300,
])
def test_long_commands_are_judged_quickly(memex: Path, command: str) -> None:
    import time
    t = time.monotonic()
    d = _check(memex, command, allow_shell=True)
    assert time.monotonic() - t < 3.0, d.verdict


# -- 8. the sandbox: only the capped /tmp is writable ----------------------------------
@needs_sandbox
def test_only_the_capped_tmp_is_writable_in_the_sandbox(memex: Path, tmp_path: Path) -> None:
    """/run, the hidden home and the new /dev (its /dev/shm) were writable tmpfs without a
    size cap: a command could fill the machine's memory past the 64 MB /tmp cap."""
    from opencortex.guard import sandbox
    from opencortex.guard.shell import minimal_env
    home = tmp_path / "home"
    home.mkdir()
    script = (f"for d in /dev/shm /dev /run {home} /tmp; do touch $d/probe 2>/dev/null && "
              "echo W $d; done; echo x > /dev/null && echo null-ok")
    argv = sandbox.wrap(SANDBOX.bwrap, ["sh", "-c", script], "/bin/sh", memex, memex,
                        home=home, sized=SANDBOX.sized)
    env = minimal_env(GuardPolicy().shell)
    r = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=memex,
                       timeout=30, check=False)
    assert r.stdout.split("\n") == ["W /tmp", "null-ok", ""], r.stdout + r.stderr


# -- 9. a synced repository whose own config names drivers ------------------------------
def _git(cwd: Path, *a: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(["git", *a], cwd=cwd, check=True, env=env, capture_output=True)


@needs_sandbox
@pytest.mark.parametrize("key,value", [
    ("diff.evil.textconv", "sh -c 'id' -"), ("diff.external", "sh -c id"),
    ("filter.evil.clean", "sh -c id"), ("diff.evil.command", "sh -c id"),
    ("include.path", "../../elsewhere.cfg"), ("core.worktree", "/"),
])
def test_a_repository_config_that_names_programs_asks(memex: Path, key: str,
                                                      value: str) -> None:
    """git diff / status / log -p run diff.external, textconv and filter programs named by
    the repository itself: the environment cannot pin names it does not know, so asks."""
    _git(memex, "init", "-q")
    for cmd in ("git diff", "git status", "git log -p", "git blame a.org"):
        assert _check(memex, cmd).verdict == "allow", cmd  # a plain repository: allowed
    _git(memex, "config", key, value)
    sub = memex / "sub"
    sub.mkdir()
    for cmd in ("git diff", "git status", "git log -p", "git blame a.org",
                "git -C sub diff", "git --git-dir=.git log -p"):
        d = _check(memex, cmd)
        assert d.verdict == "ask" and key.split(".")[-1] in d.reason, (cmd, d.reason)
    # from inside a subdirectory (git walks up) and through -C from elsewhere in the memex
    d = Guard(_policy(), memex_root=memex).check(
        Action("shell", {"command": "git diff", "cwd": "sub"}, "shell"))
    assert d.verdict == "ask", d.reason


@needs_sandbox
@pytest.mark.parametrize("text", [
    "[diff] external = sh -c id\n",  # git reads a key on its section's own line
    "[diff]\r\texternal = sh -c id\n",  # a bare CR is whitespace to git, not a line end
    '[diff "evil"] textconv = sh -c id\n',
    "[filter \"x\"] process = sh -c id\n",
])
def test_a_key_on_its_section_line_is_read_as_git_reads_it(memex: Path, text: str) -> None:
    """The config check read the text line by line; git ran `[diff] external = cmd` while
    the guard said allow. It now lists the keys with git's own parser."""
    _git(memex, "init", "-q")
    with (memex / ".git" / "config").open("a", encoding="utf-8", newline="") as f:
        f.write(text)
    for cmd in ("git diff", "git log -p"):
        d = _check(memex, cmd)
        assert d.verdict == "ask", (cmd, d.reason)
    d = _check(memex, "git diff")
    assert any(k in d.reason for k in ("external", "textconv", "process")), d.reason


@needs_sandbox
def test_a_config_planted_between_check_and_run_is_refused(memex: Path) -> None:
    _git(memex, "init", "-q")
    g = Guard(_policy(), memex_root=memex)
    a = Action("shell", {"command": "git diff"}, "shell")
    d = g.check(a)
    assert d.allowed
    _git(memex, "config", "diff.external", "sh -c id")
    with pytest.raises(Exception, match="now needs approval"):
        g.run_shell(a, approved=d)


@needs_sandbox
def test_a_submodule_config_that_names_programs_asks(memex: Path) -> None:
    _git(memex, "init", "-q")
    mod = memex / ".git" / "modules" / "notes"
    mod.mkdir(parents=True)
    (mod / "config").write_text("[diff]\n\texternal = sh -c id\n")
    d = _check(memex, "git diff --submodule=diff")
    assert d.verdict == "ask" and "modules" in d.reason, d.reason


def test_a_git_pointer_to_a_repository_outside_the_memex_asks(memex: Path,
                                                             tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _git(elsewhere, "init", "-q")
    sub = memex / "sub"
    sub.mkdir()
    (sub / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    (memex / "linked").mkdir()
    (memex / "linked" / ".git").symlink_to(elsewhere / ".git")
    for cmd in ("git -C sub log", "git -C linked status"):
        d = _check(memex, cmd)
        assert d.verdict != "allow" and "outside the memex" in d.reason, (cmd, d.reason)
