"""Issue 12, shell: allow by argument.  Every bypass of the old denylist, and abbreviations of
every dangerous option of every program with a table, must not be "allow" even with
``[guard.tools] shell = "allow"``; run through the pipeline they must not execute.  Ordinary
read-only commands stay allowed."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opencortex.guard import Action, Guard, GuardPolicy, check_argv
from opencortex.guard.gitargs import EXEC_LONG
from opencortex.guard.readonly import grammars
from opencortex.guard.sandbox import status

SANDBOX = status(GuardPolicy().shell)
needs_sandbox = pytest.mark.skipif(
    not SANDBOX.available, reason=f"'allow' needs the OS sandbox: {SANDBOX.detail}")
PROGRAMS = [*GuardPolicy().shell.allow, "sed", "sort", "uniq", "tar", "env", "nice",
            "timeout", "xargs", "sh"]
M = "MARKER"  # replaced by a real path where execution is tested


def _policy(**shell: object) -> GuardPolicy:
    return GuardPolicy.from_config({"guard": {"tools": {"shell": "allow"}, "shell": {
        "allow": PROGRAMS, **shell}}})


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    root.mkdir()
    for name, text in {"gtd.org": "* TODO Call Sam\n", "a.org": "* A\nalpha\n",
                       "b.org": "* B\nbeta\n"}.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _verdict(memex: Path, command: str | list[str], **shell: object) -> tuple[str, str]:
    key = "command" if isinstance(command, str) else "argv"
    d = Guard(_policy(**shell), memex_root=memex).check(Action("shell", {key: command},
                                                               "shell"))
    return d.verdict, d.reason


# -- the bypasses of the old denylist, and their cousins ------------------------------
BYPASSES = [
    # quoted in the issue
    f"git ls-remote --upload-pac='touch {M}' .", f"git ls-remote --upl='touch {M}' .",
    f"git clone -u 'touch {M}' . clone-dst", f"git grep --open-files='touch {M}' alpha",
    f"git grep --open='touch {M}' alpha",
    f"git config --global core.fsmonitor 'touch {M}' get",
    "git diff --no-index --output=gtd.org a.org b.org",
    # the same ideas, spelled differently
    f"git ls-remote --upload-pack='touch {M}' .", f"git ls-remote --u='touch {M}' .",
    f"git ls-remote -u 'touch {M}' .", f"git fetch --upload-pack='touch {M}' .",
    f"git fetch --upload-p 'touch {M}' .", f"git clone --upload-pack 'touch {M}' . d2",
    f"git clone -qu 'touch {M}' . d3", "git clone --templ=/tmp/t . d4",
    f"git push --receive-pack='touch {M}' . HEAD", f"git push --rec='touch {M}' . HEAD",
    f"git archive --exec='touch {M}' --remote=. HEAD", f"git grep -O'touch {M}' alpha",
    f"git grep -nO'touch {M}' alpha", f"git grep --open-files-in-pager='touch {M}' alpha",
    f"git grep --open-f='touch {M}' alpha", f"git -c core.pager='touch {M}' log",
    f"git -c alias.x='!touch {M}' x", "git --config-env=core.pager=HOME log",
    "git --config-env core.pager=HOME log", "git --exec-path=/tmp log",
    f"git config core.fsmonitor 'touch {M}'", f"git config --global core.pager 'touch {M}'",
    f"git config --add core.fsmonitor 'touch {M}'", "git config set core.pager x",
    "git config --get core.pager extra words", "git config -e", "git config --edit",
    "git diff --output=gtd.org", "git diff --output gtd.org", "git diff --out=gtd.org",
    "git diff --outp gtd.org", "git log -p --output=gtd.org", "git show --output=a.org",
    "git log --ext-diff -p", "git diff --ext-diff", "git diff --ext", "git diff --textconv",
    "git log --textc -p", "git show --show-signature", "git log --show-sig",
    "git -p log", "git --paginate log", "git help log", "git log --help",
    f"git rebase -x 'touch {M}' HEAD", f"git rebase --exec='touch {M}' HEAD",
    f"git submodule foreach 'touch {M}'", f"git bisect run touch {M}",
    "git difftool", "git mergetool", "git filter-branch", "git commit -m x",
    "git checkout gtd.org", "git reset --hard", "git stash", "git branch new-branch",
    "git tag v9", "git remote add x y", "git lin", "git st",
    f"git clone ext::'sh -c touch% {M}' d5",
    # find / tar / sed / sort / uniq / rg / date
    "find . -delete", f"find . -exec touch {M} ;", f"find . -execdir touch {M} +",
    f"find . -ok touch {M} ;", f"find . -fprint {M}", f"find . -fprint0 {M}",
    f"find . -fprintf {M} %p", f"find . -fls {M}", "find . -newerXY", "find . -unknown",
    f"tar -cf {M} a.org", f"tar cf {M} a.org", "tar -xf x.tar", "tar xf x.tar",
    f"tar --to-command='touch {M}' -xf x.tar", f"tar --to-com='touch {M}' -xf x.tar",
    f"tar -I 'touch {M}' -tf x.tar", f"tar --use-compress-program='touch {M}' -tf x.tar",
    f"tar --checkpoint-action=exec='touch {M}' -tf x.tar", "tar -tf host:x.tar",
    f"tar -F 'touch {M}' -tf x.tar", f"tar --info-script='touch {M}' -tf x.tar",
    "sed -i s/a/b/ a.org", "sed --in-place s/a/b/ a.org", "sed --in-pl s/a/b/ a.org",
    f"sed 's/a/b/w {M}' a.org", f"sed 'w {M}' a.org", f"sed -n '1W {M}' a.org",
    f"sed '1e touch {M}' a.org", "sed 's/a/touch x/e' a.org", "sed -f script.sed a.org",
    f"sort -o {M} a.org", f"sort --output={M} a.org", f"sort --out={M} a.org",
    f"sort --compress-program='touch {M}' a.org", f"sort --compress='touch {M}' a.org",
    f"uniq a.org {M}", f"rg --pre='touch {M}' alpha", f"rg --pre 'touch {M}' alpha",
    f"rg --pr='touch {M}' alpha", f"rg --hostname-bin='touch {M}' alpha", "date -s 12:00",
    "date --set=12:00", "date 010112002030", "ls --colo=always",
    # wrappers, interpreters, environment
    f"env touch {M}", f"xargs touch {M}", f"nice git ls-remote --upl='touch {M}' .",
    f"timeout 5 git grep --open='touch {M}' alpha", f"env GIT_PAGER='touch {M}' git log",
    f"env GIT_SSH_COMMAND='touch {M}' git log", f"env -S 'touch {M}'",
    f"sh -c 'touch {M}'", "sh script.sh", f"find . -exec git ls-remote --upl='touch {M}' . ;",
]
SHELL_STRINGS = [  # with guard.shell.allow_shell = true: redirections and expansions
    "git log > gtd.org", "git log >> gtd.org", "ls >| gtd.org", "ls &> gtd.org",
    "ls 2> gtd.org", "cat a.org <> gtd.org", "echo x > /tmp/elsewhere", "ls; git log > a.org",
    "ls | tee gtd.org", "ls; cat $HOME/.ssh/id_rsa", "ls; git log $OPTS", "ls; ls ${X:-x}",
    "ls; git diff {--output=gtd.org,a.org}", "git log `echo --output=gtd.org`",
    "git log $(echo --output=gtd.org)", "ls; sort *", "ls; git diff *",
    "LANG=C git log > x.org", "ls && git log -- a.org > b.org", "diff <(ls) <(ls)",
]
# (without a metacharacter no shell runs: "git log $OPTS" passes the literal word "$OPTS")


def test_enough_variants() -> None:
    assert len(BYPASSES) + len(SHELL_STRINGS) >= 40


@pytest.mark.parametrize("command", BYPASSES)
def test_bypass_is_never_allowed(memex: Path, command: str) -> None:
    verdict, reason = _verdict(memex, command)
    assert verdict != "allow", reason
    argv = shlex.split(command)
    verdict2, _ = _verdict(memex, argv)  # the argv form too
    assert verdict2 != "allow"
    assert not check_argv(argv, _policy()).read_only


@pytest.mark.parametrize("command", SHELL_STRINGS)
def test_shell_strings_that_write_or_expand_are_never_allowed(memex: Path,
                                                              command: str) -> None:
    verdict, reason = _verdict(memex, command, allow_shell=True)
    assert verdict != "allow", reason


def test_the_person_sees_why(memex: Path) -> None:
    """In ask mode the approval text names the reason, not just the command."""
    g = Guard(GuardPolicy.from_config({"guard": {"shell": {"allow": PROGRAMS}}}),
              memex_root=memex)
    for command, why in [
            ("git diff --no-index --output=gtd.org a.org b.org",
             "--output: writes the diff into the file it names"),
            ("git log --outp=x", "--outp is an abbreviation of one of --output"),
            ("git branch new", "only listing is read-only"),
            ("find . -exec cat {} +", "find -exec: runs cat on every file found"),
            ("sed -i s/a/b/ a.org", "edits the files in place"),
            ("git st", "not a git subcommand known to be read-only"),
            ("ls --al", "abbreviations are not accepted as read-only")]:
        d = g.check(Action("shell", {"command": command}, "shell"))
        assert d.verdict == "ask", (command, d.reason)
        assert "not known to be read-only" in d.reason and why in d.reason, d.reason
    d = g.check(Action("shell", {"command": "git ls-remote --upl='touch x' ."}, "shell"))
    assert d.verdict == "deny" and "abbreviation of --upload-pack" in d.reason, d.reason


# -- abbreviations, generated from the option tables ---------------------------------
def _dangerous() -> list[tuple[str, str, str, bool]]:
    out = []
    for name, g in grammars().items():
        for opt, spec in g.long.items():
            if spec.kind != "ro":
                out.append((name, opt, spec.kind, g.abbrev))
    return out


def _exact_elsewhere(prog: str, prefix: str, opt: str) -> bool:
    """``--text`` is an option of its own, not an abbreviation of ``--textconv``."""
    return prefix != opt and prefix in grammars()[prog].long


DANGEROUS = _dangerous()


def test_tables_have_dangerous_options() -> None:
    names = {(n, o) for n, o, _, _ in DANGEROUS}
    for must in [("git diff", "output"), ("git log", "ext-diff"), ("git grep",
                 "open-files-in-pager"), ("sort", "output"), ("sort", "compress-program"),
                 ("tar", "to-command"), ("sed", "in-place"), ("rg", "pre")]:
        assert must in names


@pytest.mark.parametrize(("prog", "opt", "kind", "abbrev"), DANGEROUS,
                         ids=[f"{p}--{o}" for p, o, _, _ in DANGEROUS])
def test_every_abbreviation_of_a_dangerous_option(memex: Path, prog: str, opt: str,
                                                  kind: str, abbrev: bool) -> None:
    words = prog.split()
    policy = _policy()
    for n in range(1, len(opt) + 1):
        if _exact_elsewhere(prog, opt[:n], opt):
            continue
        spelled = f"--{opt[:n]}"
        for argv in ([*words, f"{spelled}=x", "a.org"], [*words, spelled, "x", "a.org"]):
            scan = check_argv(argv, policy)
            assert not scan.read_only, argv
            if kind == "deny" and abbrev and "=" in argv[len(words)]:
                assert scan.deny, (argv, scan.asks)
            verdict, reason = _verdict(memex, argv)
            assert verdict != "allow", (argv, reason)


GIT_NO_TABLE = ["ls-remote", "fetch", "clone", "push", "pull", "archive", "submodule",
                "remote-ext", "frobnicate"]


@pytest.mark.parametrize("opt", EXEC_LONG)
def test_git_program_options_refused_in_every_spelling_everywhere(opt: str) -> None:
    policy = _policy()
    for sub in GIT_NO_TABLE:
        for n in range(1, len(opt) + 1):
            for argv in (["git", sub, f"--{opt[:n]}=touch x", "."],
                         ["git", sub, f"--{opt[:n]}", "touch x", "."]):
                scan = check_argv(argv, policy)
                assert scan.deny, (argv, scan.asks)


# -- they do not execute: through the pipeline, in allow mode -------------------------
EXECUTING = [
    "git ls-remote --upload-pac='touch {m}' .", "git ls-remote --upl='touch {m}' .",
    "git clone -u 'touch {m}' . {d}", "git grep --open-files='touch {m}' alpha",
    "git grep --open='touch {m}' alpha", "git -c core.pager='touch {m}' -p log",
    "find . -exec touch {m} ;", "sed '1e touch {m}' a.org", "sort --compress='touch {m}' a.org",
    "git config --global core.fsmonitor 'touch {m}' get",
]


def _git_memex(memex: Path) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(memex.parent), "PATH": "/usr/bin:/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "first"]):
        subprocess.run(cmd, cwd=memex, check=True, env=env)


@pytest.fixture
def piped(memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from opencortex.memex import Memex
    from opencortex.pipeline.kernel import Kernel

    _git_memex(memex)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # `git config --global` would write here
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m, guard=Guard(_policy(), memex_root=memex))
    k.approval_timeout = 0
    yield k, home
    k.shutdown(timeout=10)
    m.close()


def test_the_payloads_are_real(memex: Path, tmp_path: Path) -> None:
    """Control: without the guard the payloads do run on this machine's git/find/sed."""
    _git_memex(memex)
    for i, cmd in enumerate([*EXECUTING[:2], "find . -exec touch {m} ;"]):
        marker = tmp_path / f"control-{i}"
        argv = shlex.split(cmd.format(m=marker, d=tmp_path / f"c{i}"))
        subprocess.run(argv, cwd=memex, capture_output=True, timeout=20,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert marker.exists(), cmd


@pytest.mark.parametrize("command", EXECUTING)
def test_bypass_does_not_execute_through_the_pipeline(piped, tmp_path: Path,
                                                      command: str) -> None:
    k, home = piped
    marker = tmp_path / "executed"
    inside = k.memex.root / "executed"
    for m in (marker, inside):
        out = k.ask("run " + command.format(m=m, d=tmp_path / "dst"))
        assert out, command
        assert not m.exists(), (command, out)
    assert not (home / ".gitconfig").exists()


def test_the_pipeline_shows_why_it_asks(piped) -> None:
    k, _ = piped
    out = k.ask("run git diff --no-index --output=gtd.org a.org b.org")
    assert "Needs your approval" in out[0] and "--output: writes the diff" in out[0], out
    assert "not known to be read-only" in out[0]
    assert k.memex.root.joinpath("gtd.org").read_text() == "* TODO Call Sam\n"


@needs_sandbox
def test_read_only_commands_run_through_the_pipeline(piped) -> None:
    k, _ = piped
    out = k.ask("run git log -1 --oneline")
    assert any("first" in x and "exited 0" in x for x in out), out
    out = k.ask("run rg -n alpha")
    assert any("a.org:2:alpha" in x for x in out), out


# -- ordinary read-only use stays allowed --------------------------------------------
READ_ONLY = [
    "git status", "git status --short", "git log -5 --oneline", "git log -n 3 --stat",
    "git log --since=2.weeks --author=Sam --format=%h%x09%s", "git show HEAD:gtd.org",
    "git show --stat HEAD", "git diff", "git diff --cached --name-only", "git diff HEAD~1 -- a.org",
    "git diff --no-index a.org b.org", "git blame -L 1,2 a.org", "git grep -n alpha",
    "git ls-files", "git rev-parse --show-toplevel", "git branch -a", "git branch --list 'f*'",
    "git tag -l", "git config --get user.name", "git config user.name", "git config --list",
    "git config get user.name", "git remote -v", "git stash list", "git describe --tags --always",
    "git --no-pager log -p -1", "git -C . log -1", "git shortlog -sn",
    "ls", "ls -la", "ls -lhR notes", "ls --color=never -1", "rg foo", "rg -n -i 'call sam'",
    "rg --files -g '*.org'", "rg -C2 -tmd TODO", "wc -l a.org", "wc -w a.org b.org", "cat a.org",
    "cat -n a.org", "head a.org", "head -n 3 a.org", "head -5 a.org", "tail -n 1 a.org",
    "tail -3 a.org", "grep -rn TODO .", "grep -c alpha a.org", "grep -E 'a|b' -- a.org",
    "date", "date +%F", "date -u +%Y-%m-%dT%H:%M", "echo hello world", "echo --output=x",
    "find . -name '*.org'", "find . -type f -mtime -7 -print", "find . -maxdepth 1 -name a.org",
    "sed -n 1,5p a.org", "sed 's/alpha/beta/g' a.org", "sed -e '1d' -e 's/a/b/2' a.org",
    "sort a.org", "sort -u -k2 a.org", "uniq -c a.org", "tar -tvf x.tar", "tar tzf x.tgz",
    "tar -xOf x.tar a.org", "env ls", "nice -n 5 ls", "timeout 5 git status",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_recognised(command: str) -> None:
    scan = check_argv(shlex.split(command), _policy())
    assert scan.read_only, (scan.deny, scan.asks)


@needs_sandbox
@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_allowed(memex: Path, command: str) -> None:
    verdict, reason = _verdict(memex, shlex.split(command))
    assert verdict == "allow", reason


@needs_sandbox
@pytest.mark.parametrize("command", ["ls | wc -l", "rg TODO | head -3", "git log 2>&1 | head",
                                     "ls > /dev/null && date", "cat a.org 2>/dev/null",
                                     "grep alpha *.org", "git log -- *.org"])
def test_read_only_shell_strings_are_allowed(memex: Path, command: str) -> None:
    verdict, reason = _verdict(memex, command, allow_shell=True)
    assert verdict == "allow", reason


def test_no_sandbox_means_shell_always_asks(memex: Path) -> None:
    verdict, reason = _verdict(memex, "ls -la", sandbox="off")
    assert verdict == "ask" and "no OS sandbox" in reason and "sandbox" in reason
    verdict, reason = _verdict(memex, "ls -la", sandbox="required", path=["/nonexistent"])
    assert verdict == "deny" and "required" in reason


# -- a repository's own config cannot make a read-only git command run a program -------
def _plant_repo_config(memex: Path, marker: Path) -> None:
    _git_memex(memex)
    cfg = ["git", "config", "--file", str(memex / ".git" / "config")]
    subprocess.run([*cfg, "core.fsmonitor", f"touch {marker}; false"], check=True)
    subprocess.run([*cfg, "core.hooksPath", str(memex)], check=True)


def test_repo_fsmonitor_is_neutralised_even_unsandboxed(memex: Path, tmp_path: Path) -> None:
    from opencortex.guard import run_shell

    marker = tmp_path / "fsmonitor-ran"
    _plant_repo_config(memex, marker)
    subprocess.run(["git", "status"], cwd=memex, capture_output=True, check=False,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert marker.exists()  # control: plain git runs the planted fsmonitor
    marker.unlink()
    r = run_shell(["git", "status"], _policy(), memex, memex_root=memex, sandbox=False)
    assert r.returncode == 0 and not marker.exists(), r.stderr


# -- the parser never crashes, hangs, or lets unknown words through -------------------
_WORDS = ["-", "--", "-n", "-5", "--out", "--output=x", "-O", "-c", "x=y", "log", "diff",
          "status", "s/a/b/w f", "1e", "{", "}", ";", "-exec", "+", "tvf", "-f", "a.org",
          "--upl", "-u", "config", "get", "--get", "grep", "-Ox", "=", "--=", "-=", "\\"]


@settings(max_examples=200, deadline=None)
@given(prog=st.sampled_from(["git", "find", "sed", "tar", "sort", "ls", "rg", "date", "uniq",
                             "grep", "head", "env", "timeout"]),
       args=st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=12)), max_size=8))
def test_random_arguments_are_judged_not_crashed(prog: str, args: list[str]) -> None:
    args = [a for a in args if "\x00" not in a]
    scan = check_argv([prog, *args], _policy())  # never raises, always ends
    assert scan.deny is None or scan.deny.startswith(("refused", "'", "\"", "command"))
    assert all(isinstance(a, str) and a for a in scan.asks)
    if "--output=x" in args and prog in ("git", "sort") and args[0] != "--output=x":
        before = args[:args.index("--output=x")]
        if "--" not in before and not any(b.startswith("-") for b in before):
            assert not scan.read_only  # an option position: --output is never read-only
