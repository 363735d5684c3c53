"""Shell: decide whether an argv may run, and run it without a shell, boxed in.

Commands are argv lists executed directly (no ``/bin/sh``) unless ``allow_shell`` is set.
The analysis looks through wrappers (``env``, ``nice``, ``timeout``, ``xargs``,
``find -exec``, ``sh -c '...'``) so ``env rm -rf /`` is judged as ``rm -rf /``; a short
denylist of catastrophic patterns is refused even when every program is allowlisted.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import sandbox as _sandbox
from .argspec import parse
from .errors import ShellError, UnsafePathError
from .paths import confine
from .policy import GuardPolicy, ShellPolicy
from .readonly import WRAPPER_GRAMMARS, classify, exec_commands, globs_ok
from .runner import git_env_pins, spawn
from .secrets import redact

__all__ = [
    "ShellCheck",
    "ShellResult",
    "check_argv",
    "minimal_env",
    "normalise_command",
    "run_shell",
]

MAX_COMMAND = 16384
SHELL_METACHARS = (";", "|", "&", ">", "<", "$(", "`", "\n")
_MAX_DEPTH = 8

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
                     "yash", "posh", "rbash"})
_INTERP = re.compile(r"(?:python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node(?:js)?|php[0-9.]*"
                     r"|lua[0-9.]*|tclsh|deno|bun|osascript|pwsh|powershell|awk|gawk|mawk|nawk"
                     r"|Rscript|julia|jshell|irb|expect|eval|source)")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "xh", "http", "https", "lwp-request",
                          "GET"})
_PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "runuser", "sudoedit", "run0", "chroot"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "telinit", "kexec", "killall5"})
_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate",
                          "hybrid-sleep", "rescue", "emergency", "default", "isolate"})
_DISK_TOOLS = frozenset({"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk",
                         "sgdisk", "parted", "blkdiscard", "mkdosfs", "newfs", "diskutil",
                         "format", "shred"})
_RAW_DISK = re.compile(r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d"
                       r"|mapper/|dm-\d|md\d|loop\d|sr\d|nbd\d)")
_DEV_OK = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin",
                     "/dev/random", "/dev/urandom", "/dev/tty"})
# wrapper -> (options that take a value, positional words before the wrapped command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "command": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "builtin": (frozenset(), 0),
    "xargs": (frozenset({"-I", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "--max-args",
                         "--max-procs", "--delimiter", "--arg-file", "--max-lines",
                         "--max-chars", "--eof", "--process-slot-var"}), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-E", "-u"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s", "-u"}), 0),
    "busybox": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "watch": (frozenset({"-n", "--interval", "-d"}), 0),
    "catchsegv": (frozenset(), 0),
    "firejail": (frozenset(), 0),
}
_SAFE_ENV_NAMES = re.compile(r"(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|LINES|TERM"
                             r"|GIT_(?:AUTHOR|COMMITTER)_(?:NAME|EMAIL|DATE))")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)
_RESERVED = frozenset({"!", "{", "}", "(", ")", "()", "if", "then", "else", "elif", "fi", "do",
                       "done", "while", "until", "for", "case", "esac", "in", "select",
                       "function", "coproc"})

# Text backstops: shell syntax that is catastrophic however it is tokenised.
_DL = r"(?:curl|wget|fetch|aria2c|xh|https?|lwp-request)"
_INT = (r"(?:(?:ba|da|z|k|c|tc|fi|a|mk|ya)?sh|python[0-9.]*|perl|ruby|node(?:js)?|php|lua|tclsh"
        r"|deno|bun|osascript|pwsh|source|eval)")
_TEXT_DENY: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"([\w:.-]{1,64})\s*\(\s*\)\s*\{[^}]{0,200}?\1\s*\|\s*&?\s*\1\s*&"),
     "a fork bomb"),
    (re.compile(rf"(?<![\w-]){_DL}\b[^|\n]{{0,4000}}\|&?\s*(?:\S*/)?"
                rf"(?:(?:sudo|env|exec|nohup|command|time|nice)\s+(?:-\S*\s+)*)*{_INT}(?![\w.-])"),
     "piping a download into an interpreter"),
    (re.compile(rf"(?<![\w-]){_INT}(?![\w.-])[^\n]{{0,400}}?(?:<\(|\$\(|`)\s*"
                rf"(?:\S*/)?{_DL}\b"),
     "running a download through an interpreter"),
]
_CODE_DENY: list[tuple[re.Pattern[str], str]] = [  # for python -c / perl -e code: no structure
    (re.compile(r"\brm\s+(?:-\S+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*[\"']?"
                r"(?:/|~|\$HOME|/\*)[\"']?(?=[\s\"';),]|$)"), "rm -rf on / or ~"),
    (re.compile(r"--no-preserve-root"), "rm --no-preserve-root"),
    (re.compile(r"\bmkfs\b|\bmkfs\.\w+"), "formatting a disk (mkfs)"),
    (re.compile(r"\bdd\b[^\n]{0,400}\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)"),
     "dd onto a device"),
    (re.compile(r"\b(?:shutdown|reboot|poweroff|halt)\b"), "shutting down / rebooting"),
    (re.compile(r"\b(?:sudo|doas|pkexec)\b"), "privilege escalation (sudo)"),
    (re.compile(r"\bchmod\s+(?:-\S+\s+)*-R\b[^\n]{0,80}\s[\"']?/[\"']?(?=[\s\"';),]|$)"),
     "chmod -R on /"),
]


@dataclass(slots=True)
class ShellCheck:
    """Outcome of analysing one argv: the first reason to refuse, and path-like arguments."""

    deny: str | None = None
    paths: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    """Every argument word of every command (and values after ``=``): the caller checks
    the ones that name an existing file for symlinks that lead outside the memex."""
    asks: list[str] = field(default_factory=list)
    """Why the command is not known to be read-only (each shown to the person); empty =
    every program, option and redirection was recognised as read-only."""

    def refuse(self, reason: str) -> None:
        if self.deny is None:
            self.deny = reason

    def ask(self, reason: str) -> None:
        if reason not in self.asks:
            self.asks.append(reason)

    @property
    def read_only(self) -> bool:
        return self.deny is None and not self.asks


@dataclass(frozen=True, slots=True)
class ShellResult:
    returncode: int
    stdout: str
    stderr: str
    truncated: bool
    """Output went past ``max_output``: it was cut (and said so in the text), the command
    stopped."""
    timed_out: bool
    argv: tuple[str, ...] = ()
    duration: float = 0.0
    sandboxed: bool = False
    """It ran under bubblewrap (read-only filesystem, no network)."""


# --------------------------------------------------------------------------- normalising


def _text_backstop(text: str, table: list[tuple[re.Pattern[str], str]]) -> str | None:
    for pat, what in table:
        if pat.search(text):
            return f"refused: {what} is never run (matched in {_short(text)!r})"
    return None


def _short(s: str, n: int = 80) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def normalise_command(proposal: object, policy: ShellPolicy) -> list[str]:
    """The argv that will run for a proposal (string or list), or ShellError saying why not.

    A string is ``shlex.split``; one containing shell syntax is refused unless
    ``allow_shell`` is on, in which case it becomes ``["/bin/sh", "-c", string]``.
    """
    if isinstance(proposal, str):
        if len(proposal) > MAX_COMMAND:
            raise ShellError(f"command longer than {MAX_COMMAND} characters refused")
        if "\x00" in proposal:
            raise ShellError("command contains a NUL byte; refused")
        why = _text_backstop(proposal, _TEXT_DENY)
        if why:
            raise ShellError(why)
        found = [m for m in SHELL_METACHARS if m in proposal]
        if found:
            if not policy.allow_shell:
                shown = " ".join(repr(m) for m in found)
                raise ShellError(
                    f"{_short(proposal)!r} contains shell syntax ({shown}); commands run "
                    "without a shell, so pipes, redirections, ';' and '$(...)' do not work. "
                    "Propose a single command, or set guard.shell.allow_shell = true to run "
                    "strings under /bin/sh")
            return ["/bin/sh", "-c", proposal]
        try:
            argv = shlex.split(proposal)
        except ValueError as e:
            raise ShellError(f"cannot parse command {_short(proposal)!r}: {e}") from e
    elif isinstance(proposal, Sequence) and not isinstance(proposal, bytes | bytearray):
        argv = list(proposal)
        if not all(isinstance(a, str) for a in argv):
            raise ShellError("argv must be a list of strings")
        if any("\x00" in a for a in argv):
            raise ShellError("argv contains a NUL byte; refused")
        if sum(len(a) for a in argv) > MAX_COMMAND:
            raise ShellError(f"command longer than {MAX_COMMAND} characters refused")
    else:
        raise ShellError(f"a command must be a string or a list of strings, got "
                         f"{type(proposal).__name__}")
    if not argv or not argv[0]:
        raise ShellError("empty command")
    return argv


# --------------------------------------------------------------------------- analysis


def check_argv(argv: Sequence[str], policy: ShellPolicy | GuardPolicy) -> ShellCheck:
    """Analyse an argv against the allowlist and the denylist (deterministic, no I/O but
    ``realpath`` of bin dirs).  ``ShellCheck.deny`` is None when it may run."""
    sp = policy.shell if isinstance(policy, GuardPolicy) else policy
    scan = ShellCheck()
    if not argv or not all(isinstance(a, str) for a in argv) or not argv[0]:
        scan.refuse("empty or malformed argv")
        return scan
    if any("\x00" in a for a in argv):
        scan.refuse("argv contains a NUL byte")
        return scan
    _command(list(argv), sp, scan, depth=0, under=None, top=True)
    return scan


def _base(prog: str) -> str:
    return posixpath.basename(posixpath.normpath(prog)) if "/" in prog else prog


def _is_shell(name: str) -> bool:
    return name in _SHELLS


def _is_interp(name: str) -> bool:
    return _is_shell(name) or bool(_INTERP.fullmatch(name))


def _opts_then_rest(args: list[str], takes_value: frozenset[str], positional: int) -> list[str]:
    """Skip a wrapper's own options (and ``positional`` words) to find the wrapped command."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("-") and len(a) > 1:
            i += 2 if a in takes_value else 1
            continue
        break
    return args[i + positional:]


def _rootish(target: str) -> bool:
    """Does a deletion/chmod target mean "everything" (/, ~, /*, ., *, /etc, /home/x, ..)?"""
    t = target.strip().strip("\"'")
    t = re.sub(r"^\$\{?HOME\}?", "~", t)
    t = re.sub(r"/+", "/", t)
    end = len(t)
    while True:  # strip trailing "/", "/.", "/*", "/.*" (linear: no regex per step)
        for suffix in ("/.*", "/*", "/.", "/"):
            if t.endswith(suffix, 0, end):
                end -= len(suffix)
                break
        else:
            break
    t = t[:end]
    if t in ("", "~", ".", "..", "*", ".*", "./*", "~*"):
        return True
    if re.fullmatch(r"~[^/]*", t) or re.fullmatch(r"/[^/]+", t):
        return True
    if re.fullmatch(r"/(?:home|Users|root|usr/[^/]+|var/[^/]+)(?:/[^/]+)?", t):
        return True
    return ".." in t.split("/")


def _recursive(args: list[str], long: str = "--recursive", letters: str = "rR") -> bool:
    for a in args:
        if a == "--":
            break
        if a == long:
            return True
        if a.startswith("-") and not a.startswith("--") and any(c in a[1:] for c in letters):
            return True
    return False


def _operands(args: list[str]) -> list[str]:
    out, opts = [], True
    for a in args:
        if opts and a == "--":
            opts = False
        elif opts and a.startswith("-") and len(a) > 1:
            continue
        else:
            out.append(a)
    return out


def _pathish(arg: str) -> str | None:
    v = arg
    if arg.startswith("-") and "=" in arg:
        v = arg.split("=", 1)[1]
    elif (m := re.match(r"-[A-Za-z0-9]+?([/~.].*)", arg, re.S)) is not None:
        v = m.group(1)  # a value stuck to a short option: grep -f/etc/shadow, env -C..
    elif re.fullmatch(r"(?:of|if)=.*", arg, re.S):
        v = arg[3:]
    if v.startswith(("/", "~", "$HOME", "${HOME}")) or ".." in v.split("/"):
        return v
    return None


def _allowlisted(prog: str, sp: ShellPolicy) -> str | None:
    """None if ``prog`` may run, else why not (and how to allow it)."""
    allow = set(sp.allow)
    if "/" in prog:
        norm = posixpath.normpath(prog)
        if not prog.startswith("/"):
            return (f"{prog!r}: relative program paths are refused; name the program "
                    "(looked up in the standard bin directories)")
        if prog in allow or norm in allow:
            return None
        d = posixpath.dirname(norm)
        std = set(sp.path) | {os.path.realpath(p) for p in sp.path}
        if d not in std and os.path.realpath(d) not in std:
            return (f"{prog!r} is outside the standard bin directories; add the full path to "
                    "guard.shell.allow to permit it")
        name = posixpath.basename(norm)
    else:
        name = prog
    if name in allow:
        return None
    return (f"{name!r} is not an allowed program; add it to guard.shell.allow to permit it "
            f"(allowed: {', '.join(sorted(allow)) or 'none'})")


def _command(words: list[str], sp: ShellPolicy, scan: ShellCheck, *, depth: int,
             under: str | None, top: bool = False) -> None:
    if depth > _MAX_DEPTH:
        scan.refuse("command nests wrappers too deeply to check")
        return
    if not words:
        return
    prog, args = words[0], words[1:]
    name = _base(prog)
    scan.programs.append(name)
    shown = _short(shlex.join(words))

    # -- the denylist: refused whatever the allowlist says
    if name in _PRIVILEGE:
        scan.refuse(f"refused: {name!r} (privilege escalation) is never run by the agent: "
                    f"{shown!r}")
    if name in _POWER or (name == "init" and any(a in ("0", "6") for a in args)) or (
            name == "systemctl" and any(a in _POWER_VERBS for a in args)):
        scan.refuse(f"refused: shutting down / rebooting is never run by the agent: {shown!r}")
    if name.startswith("mkfs") or name in _DISK_TOOLS:
        scan.refuse(f"refused: {name!r} formats, partitions or wipes disks; never run: "
                    f"{shown!r}")
    for a in args:
        p = _pathish(a) or a
        if _RAW_DISK.match(p) or (a.startswith("of=/dev/") and a[3:] not in _DEV_OK):
            scan.refuse(f"refused: writes to or reads a raw disk device ({a}); never run: "
                        f"{shown!r}")
    if name == "rm":
        if "--no-preserve-root" in args:
            scan.refuse(f"refused: rm --no-preserve-root is never run: {shown!r}")
        if _recursive(args):
            targets = _operands(args)
            bad = [t for t in targets if _rootish(t)]
            if bad:
                scan.refuse(f"refused: recursive rm of {bad[0]!r} would delete everything "
                            f"there; never run: {shown!r}")
            elif under in ("xargs", "find") or not targets or "{}" in targets:
                scan.refuse(f"refused: recursive rm on targets chosen at run time "
                            f"({under or 'no operands'}); never run: {shown!r}")
        elif any(_rootish(t) and "*" in t for t in _operands(args)):
            scan.refuse(f"refused: rm with a wildcard at the top of the tree: {shown!r}")
    if name in ("chmod", "chown", "chgrp") and _recursive(args, letters="R"):
        bad = [t for t in _operands(args)[1:] if _rootish(t)]
        if bad:
            scan.refuse(f"refused: recursive {name} of {bad[0]!r}; never run: {shown!r}")
    if name in ("kill", "pkill") and "-1" in args[1:]:
        scan.refuse(f"refused: kill -1 signals every process; never run: {shown!r}")
    _read_only(prog, name, args, sp, scan, depth, shown, under)
    for a in args:
        scan.words.append(a)
        if a.startswith("-") and "=" in a:
            scan.words.append(a.split("=", 1)[1])
        elif a.startswith("-") and not a.startswith("--") and len(a) > 2:
            scan.words.append(a[2:])  # a value stuck to a short option: -fnotes.org
    for a in args:
        path = _pathish(a)
        if path is not None:
            scan.paths.append(path)

    # -- look through wrappers and inline scripts
    if name in _WRAPPERS:
        takes, positional = _WRAPPERS[name]
        wg = WRAPPER_GRAMMARS.get(name)
        if wg is None:
            scan.ask(f"{name} runs another command in a way that is not checked as "
                     "read-only")
        else:
            wp = parse(args, wg)
            for f in wp.findings:
                scan.ask(f.reason)
        if name == "env":
            if any(a in ("-S", "--split-string") or a.startswith("--split-string=")
                   or (a.startswith("-") and not a.startswith("--") and "S" in a)
                   for a in args):
                scan.refuse(f"refused: env -S (a command packed in one string): {shown!r}")
            rest = _opts_then_rest(args, takes, 0)
            while rest and _ASSIGNMENT.fullmatch(rest[0]):
                _assignment(rest[0], scan, shown)
                rest = rest[1:]
        elif name == "flock" and any(a in ("-c", "--command") for a in args):
            i = max(i for i, a in enumerate(args) if a in ("-c", "--command"))
            rest = []
            if i + 1 < len(args):
                _script(args[i + 1], sp, scan, depth + 1)
        elif name == "watch":
            rest = []
            cmd = _opts_then_rest(args, takes, 0)
            if cmd:
                _script(" ".join(cmd), sp, scan, depth + 1)
        else:
            rest = _opts_then_rest(args, takes, positional)
        if rest:
            _command(rest, sp, scan, depth=depth + 1, under=name)
    elif _is_shell(name):
        script = _shell_c(args)
        if script is not None:
            _script(script, sp, scan, depth + 1)
            if top and sp.allow_shell and len(words) == 3:
                # allow_shell: the shell itself needs no allowlisting (each inner command was
                # checked) but must still be a real shell from a standard bin directory
                why = _allowlisted(prog, ShellPolicy(allow=(name,), path=sp.path))
                if why:
                    scan.refuse(why)
                return
    elif _is_interp(name):
        for i, a in enumerate(args[:-1]):
            if a in ("-c", "-e", "-E", "--eval", "-r", "-x", "--exec", "-p", "--print"):
                why = _text_backstop(args[i + 1], _CODE_DENY + _TEXT_DENY)
                if why:
                    scan.refuse(why)

    why = _allowlisted(prog, sp)
    if why:
        scan.refuse(why if not (_is_shell(name) and _shell_c(args) is not None)
                    else why + "; inline shell scripts also need guard.shell.allow_shell = true")


def _read_only(prog: str, name: str, args: list[str], sp: ShellPolicy, scan: ShellCheck,
               depth: int, shown: str, under: str | None) -> None:
    """Allow by argument: record why ``prog args`` is not known to be read-only."""
    if "/" in prog:
        d = posixpath.dirname(posixpath.normpath(prog))
        std = set(sp.path) | {os.path.realpath(p) for p in sp.path}
        if d not in std and os.path.realpath(d) not in std:
            scan.ask(f"{prog} is not from the standard bin directories, so no read-only "
                     "table applies to it")
            return
    if name in _WRAPPERS:
        return  # judged with what it runs, below
    if _is_shell(name):
        if _shell_c(args) is None or len(args) != 2 or args[0] != "-c":
            scan.ask(f"{name} {'runs a script file' if args else 'starts a shell'}, "
                     "which cannot be checked")
        return
    for f in classify(name, args):
        if f.kind == "deny":
            scan.refuse(f"refused: {f.reason}: {shown!r}")
        else:
            scan.ask(f.reason)
    if name == "find":
        for cmd in exec_commands(args):
            _command(cmd, sp, scan, depth=depth + 1, under="find")


def _shell_c(args: list[str]) -> str | None:
    """The script of ``sh [-opts] -c SCRIPT``, or None if not an inline script."""
    i, has_c = 0, False
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if a == "--":
            i += 1
            break
        if a.startswith(("-", "+")) and len(a) > 1:
            if not a.startswith("--") and "c" in a[1:]:
                has_c = True
            i += 1
            continue
        break
    return args[i] if has_c and i < len(args) else None


def _assignment(word: str, scan: ShellCheck, shown: str) -> None:
    var = word.split("=", 1)[0]
    if not _SAFE_ENV_NAMES.fullmatch(var):
        scan.refuse(f"refused: setting {var} can make programs run other code; only "
                    f"locale/colour variables may be set: {shown!r}")


_REDIRECT = re.compile(r"\d*(?:[<>]|&>)")


def _script(script: str, sp: ShellPolicy, scan: ShellCheck, depth: int) -> None:
    """Check every command of an inline shell script (``sh -c`` / allow_shell strings)."""
    why = _text_backstop(script, _TEXT_DENY)
    if why:
        scan.refuse(why)
    if depth > _MAX_DEPTH:
        scan.refuse("script nests too deeply to check")
        return
    subst = [t for t in ("`", "$(", "<(", ">(") if t in script]
    if subst:
        scan.ask(f"the shell puts the output of a command ({' '.join(subst)}) into the "
                 "words that run, so they cannot be checked")
    if "\\\n" in script:
        scan.ask("a backslash-newline joins two lines into one word in the shell, so the "
                 "words that run cannot be checked")
    flat = script
    for tok in ("`", "$(", "<(", ">(", "\n", "\r"):
        flat = flat.replace(tok, " ; ")
    lex = shlex.shlex(flat, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        tokens = list(lex)
    except ValueError as e:
        scan.refuse(f"cannot parse shell script {_short(script)!r}: {e}")
        return
    segments: list[tuple[list[str], str]] = []
    cur: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t and all(c in "();<>|&" for c in t):
            if "<" in t or ">" in t:
                dup = t.endswith("&") and i + 1 < len(tokens) and re.fullmatch(
                    r"\d+|-", tokens[i + 1])
                if i + 1 < len(tokens) and not dup:
                    target = tokens[i + 1]
                    if _RAW_DISK.match(target):
                        scan.refuse(f"refused: redirection to a raw disk device ({target}); "
                                    "never run")
                    elif target not in _DEV_OK:
                        scan.paths.append(target)
                    if (">" in t or t == "<>") and target != "/dev/null":
                        scan.ask(f"the redirection {t} {target} writes to a file")
                elif i + 1 >= len(tokens) and ">" in t:
                    scan.ask(f"the redirection {t} has no target")
                i += 2
                continue
            segments.append((cur, t))
            cur = []
        else:
            cur.append(t)
        i += 1
    segments.append((cur, ""))
    names: list[tuple[str, str]] = []
    for words, op in segments:
        while words and (words[0] in _RESERVED or _ASSIGNMENT.fullmatch(words[0])):
            if _ASSIGNMENT.fullmatch(words[0]):
                _assignment(words[0], scan, _short(script))
            words = words[1:]
        names.append((_effective(words), op))
        if words:
            _expansions(words, scan)
            _command(words, sp, scan, depth=depth + 1, under=None)
    for (a, op), (b, _) in itertools.pairwise(names):
        if op in ("|", "|&") and a in _DOWNLOADERS and _is_interp(b):
            scan.refuse(f"refused: piping a download ({a}) into an interpreter ({b}) is never "
                        f"run: {_short(script)!r}")


# any "$" (parameters, $'..' ANSI-C and $".." locale quoting, arithmetic) and brace
# expansion ({a,b} and sequences {a..c}): the shell rewrites such words, shlex does not
_EXPANDS = re.compile(r"\$|\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?\[]")


def _expansions(words: list[str], scan: ShellCheck) -> None:
    """In a shell script, words the shell rewrites at run time are not known words."""
    prog = _effective(words)
    for w in words:
        if _EXPANDS.search(w):
            scan.ask(f"the shell expands {w!r} at run time, so the words that run cannot "
                     "be checked")
        elif _GLOB.search(w) and not globs_ok(prog) and "--" not in words[:words.index(w)]:
            scan.ask(f"the glob {w!r} could expand to a file name that {prog} reads as an "
                     "option; put it after --")


def _effective(words: list[str]) -> str:
    """The program a (possibly wrapped) command really runs, e.g. ``env sh`` -> ``sh``."""
    for _ in range(_MAX_DEPTH):
        if not words:
            return ""
        name = _base(words[0])
        if name not in _WRAPPERS:
            return name
        takes, positional = _WRAPPERS[name]
        words = _opts_then_rest(words[1:], takes, positional)
        while words and _ASSIGNMENT.fullmatch(words[0]):
            words = words[1:]
    return ""


# --------------------------------------------------------------------------- running

_SECRETISH = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.I)
_PASS_ENV = re.compile(r"HOME|USER|LOGNAME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR")




def minimal_env(policy: ShellPolicy | GuardPolicy, parent: Mapping[str, str] | None = None,
                extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's whole environment: locale, HOME/USER, our PATH, no pagers, no secrets.

    Variables are passed by allowlist; anything whose name looks like a secret (KEY, TOKEN,
    SECRET, PASSWORD, ...) is dropped even from ``extra``.
    """
    sp = policy.shell if isinstance(policy, GuardPolicy) else policy
    src = os.environ if parent is None else parent
    env = {k: v for k, v in src.items() if _PASS_ENV.fullmatch(k) and not _SECRETISH.search(k)}
    env.setdefault("LANG", "C.UTF-8")
    env.update({"PATH": os.pathsep.join(sp.path), "TERM": "dumb", "PAGER": "cat",
                "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"})
    # settings from the environment outrank every config file: a repository's own
    # .git/config cannot make a read-only command start its fsmonitor, hooks or gpg
    env.update(git_env_pins())
    for k, v in (extra or {}).items():
        if not _SECRETISH.search(k) and k not in ("PATH", "LD_PRELOAD", "LD_LIBRARY_PATH"):
            env[k] = v
    return env


def _resolve_program(prog: str, sp: ShellPolicy) -> str:
    if "/" in prog:
        p = posixpath.normpath(prog)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
        raise ShellError(f"{prog}: no such executable")
    found = shutil.which(prog, path=os.pathsep.join(sp.path))
    if not found:
        raise ShellError(f"{prog}: not found in {os.pathsep.join(sp.path)} "
                         "(guard.shell.path)")
    return found


def run_shell(argv: Sequence[str], policy: ShellPolicy | GuardPolicy, cwd: str | os.PathLike[str],
              *, memex_root: str | os.PathLike[str] | None = None, stdin: str | None = None,
              extra_env: Mapping[str, str] | None = None, redact_output: bool = True,
              timeout: float | None = None, sandbox: bool | None = None) -> ShellResult:
    """Run ``argv`` without a shell, in its own process group, with ``cwd`` in the memex.

    Re-checks ``argv`` itself (allowlist + denylist) so no caller can skip the guard.
    ``sandbox``: None = as ``guard.shell.sandbox`` says (bubblewrap when it works), True =
    bubblewrap or ShellError, False = run directly (tests of the runner itself).
    The whole group is killed at the timeout or when output passes ``max_output`` bytes per
    stream (the text then ends with a note saying so).  Output is redacted by default.
    """
    sp = policy.shell if isinstance(policy, GuardPolicy) else policy
    if isinstance(argv, str):
        raise ShellError("run_shell takes an argv list, not a string; use normalise_command")
    argv = list(argv)
    verdict = check_argv(argv, sp)
    if verdict.deny:
        raise ShellError(verdict.deny)
    try:
        if memex_root is not None:
            where = confine(cwd, memex_root, suffixes=None, directory=True)
        else:
            where = Path(cwd).resolve(strict=True)
            if not where.is_dir():
                raise ShellError(f"cwd {cwd} is not a directory")
    except (UnsafePathError, OSError) as e:
        raise ShellError(f"cwd refused: {e}") from e
    exe = _resolve_program(argv[0], sp)
    limit = sp.timeout if timeout is None else timeout
    cap = sp.max_output
    box = _sandbox.status(sp)
    if sandbox is None:
        if sp.sandbox == "required" and not box.available:
            raise ShellError(f'guard.shell.sandbox = "required" but {box.detail}')
        sandbox = box.available
    elif sandbox and not box.available:
        raise ShellError(f"no sandbox: {box.detail}")
    env = minimal_env(sp, extra=extra_env)
    run, prog = argv, exe
    if sandbox:
        assert box.bwrap is not None
        env.update({"HOME": _sandbox.HOME, "TMPDIR": "/tmp"})
        run = _sandbox.wrap(box.bwrap, argv, exe, where, memex_root, sized=box.sized)
        prog = box.bwrap
    ran = spawn(run, prog, where, env, limit, cap, stdin, bool(sandbox))
    truncated, timed_out = ran.truncated, ran.timed_out
    out = ran.stdout.decode("utf-8", "replace")
    err = ran.stderr.decode("utf-8", "replace")
    if redact_output:
        out, err = redact(out), redact(err)
    if truncated:
        note = f"\n[output truncated at {cap} bytes; the command was stopped]"
        out += note if len(ran.stdout) >= cap else ""
        err += note if len(ran.stderr) >= cap else ""
    if timed_out:
        err += f"\n[timed out after {limit:g}s; the command and its children were killed]"
    return ShellResult(ran.returncode, out, err, truncated, timed_out, tuple(argv),
                       ran.seconds, bool(sandbox))
