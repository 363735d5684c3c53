"""The one way OpenCortex starts an external program: argv (never a shell string), a
pinned environment, the sandbox, a timeout and an output cap.

Every program the project runs over untrusted bytes goes through :func:`run`: the shell
actuator's commands (after ``guard.shell`` decided they may run), ``git`` for recall, ``rg``
for the scan.  ``tests/guard/test_runner.py`` greps ``src/`` so no other module calls
``subprocess`` except the few listed there with their reason.

git reads its configuration from the repository it runs in, and a repository is data: a
synced or cloned ``.git/config`` can name programs (``gpg.program`` with
``log.showSignature``, ``core.fsmonitor``, ``core.pager``, diff drivers, ...).  Settings
given on the command line (``-c``) and in ``GIT_CONFIG_*`` outrank every config file, so
:data:`GIT_PINS` (from ``git help config``: every key whose value git runs) go on every
git command line and into the environment, and :func:`run` refuses to start git without
them.  The keys with a driver name in them (``diff.<driver>.command`` / ``.textconv``)
cannot be pinned by name: ``--no-ext-diff --no-textconv`` (added to every log/show/diff
by :func:`git_argv`) turn them off; ``filter.<driver>.*`` and ``merge.<driver>.driver``
run only when git writes the work tree or merges, which no read-only command does.
``uploadpack.packObjectsHook`` is honoured only from the system/global config, which
``GIT_CONFIG_NOSYSTEM`` / ``GIT_CONFIG_GLOBAL=/dev/null`` leave out.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import sandbox as _sandbox
from .errors import ShellError
from .policy import ShellPolicy

__all__ = ["GIT_ENV", "GIT_PINS", "Ran", "git_argv", "git_env_pins", "run"]

GIT_PINS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"), ("core.editor", "false"), ("sequence.editor", "false"),
    ("core.sshCommand", "false"), ("ssh.variant", "ssh"), ("core.askPass", "false"),
    ("core.gitProxy", "none"), ("core.alternateRefsCommand", "true"),
    ("log.showSignature", "false"),
    # a repository's own config cannot choose the program git verifies with
    ("gpg.program", "false"), ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"), ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("credential.helper", ""), ("protocol.allow", "never"),
    ("gc.auto", "0"), ("maintenance.auto", "false"), ("core.untrackedCache", "false"),
)
"""Every git key (``git help config``) whose value is a program git may start, pinned to
a value that runs nothing.  The one list: the shell guard's environment uses it too."""

GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1", "LC_ALL": "C",
}
"""What git itself reads from the environment, pinned (everything else is dropped)."""

_DIFFING = frozenset({"log", "show", "diff", "whatchanged", "diff-tree", "diff-index",
                      "diff-files"})
_MAX_OUTPUT = 256 << 20


@dataclass(frozen=True, slots=True)
class Ran:
    """What a program did: exit status, output (capped), and how it ended."""

    returncode: int
    stdout: bytes
    stderr: bytes
    truncated: bool
    """Output passed the cap: the program was stopped."""
    timed_out: bool
    seconds: float
    sandboxed: bool


def git_env_pins() -> dict[str, str]:
    """:data:`GIT_PINS` as ``GIT_CONFIG_COUNT`` / ``_KEY_n`` / ``_VALUE_n`` variables."""
    env = {f"GIT_CONFIG_{kv}_{n}": x for n, pair in enumerate(GIT_PINS)
           for kv, x in zip(("KEY", "VALUE"), pair, strict=True)}
    env["GIT_CONFIG_COUNT"] = str(len(GIT_PINS))
    return env


def git_argv(root: str | os.PathLike[str], *args: str) -> list[str]:
    """``git -C ROOT --no-pager -c KEY=VALUE... SUB --no-ext-diff --no-textconv ARGS``."""
    pins = [w for k, v in GIT_PINS for w in ("-c", f"{k}={v}")]
    sub, rest = (args[0], list(args[1:])) if args else ("", [])
    if sub in _DIFFING:
        rest = ["--no-ext-diff", "--no-textconv", *rest]
    return ["git", "-C", str(root), "--no-pager", *pins, sub, *rest]


def _has_pins(argv: Sequence[str]) -> bool:
    given = {argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "-c"}
    return all(f"{k}={v}" in given for k, v in GIT_PINS) and "--no-pager" in argv


def run(argv: Sequence[str], *, cwd: str | os.PathLike[str], timeout: float,
        max_output: int = _MAX_OUTPUT, env: Mapping[str, str] | None = None,
        readable: Iterable[str | os.PathLike[str]] = (), memex_root: str | os.PathLike[str]
        | None = None, sandbox: bool | None = None, policy: ShellPolicy | None = None,
        stdin: str | None = None, exe: str | None = None) -> Ran:
    """Run ``argv`` (a list; ``argv[0]`` looked up in ``policy.path``) in ``cwd``.

    ``env`` is the child's whole environment (plus :data:`GIT_ENV` and the pins for git).
    ``sandbox``: None = bubblewrap when it works here, True = bubblewrap or ShellError,
    False = directly (only for callers that say why).  Inside the sandbox the filesystem
    is read-only, the home hidden except ``memex_root``, ``cwd`` and ``readable``, and
    there is no network.  The whole process group is killed at ``timeout`` or when either
    stream passes ``max_output`` bytes.  Raises ShellError when it cannot start.
    """
    if isinstance(argv, str) or not argv:
        raise ShellError("the runner takes a non-empty argv list, never a shell string")
    argv = list(argv)
    pol = policy or ShellPolicy()
    prog = exe or shutil.which(argv[0], path=os.pathsep.join(pol.path)) or (
        argv[0] if "/" in argv[0] else None)
    if prog is None:
        raise ShellError(f"{argv[0]}: not found in {os.pathsep.join(pol.path)}")
    child_env = dict(env or {"PATH": os.pathsep.join(pol.path), "LANG": "C.UTF-8"})
    if Path(prog).name == "git":
        if not _has_pins(argv):
            raise ShellError("git without the pinned configuration (runner.git_argv) could "
                             "run a program the repository's config names; refused")
        child_env.update(GIT_ENV)
        child_env.update(git_env_pins())
        child_env.pop("GIT_EXTERNAL_DIFF", None)
        child_env.pop("GIT_ASKPASS", None)
        child_env.pop("SSH_ASKPASS", None)
    box = _sandbox.status(pol)
    if sandbox is None:
        sandbox = box.available
    elif sandbox and not box.available:
        raise ShellError(f"no sandbox: {box.detail}")
    cmd, program = argv, prog
    if sandbox:
        assert box.bwrap is not None
        child_env.update({"HOME": _sandbox.HOME, "TMPDIR": "/tmp"})
        cmd = _sandbox.wrap(box.bwrap, argv, prog, cwd, memex_root, sized=box.sized,
                            readable=readable)
        program = box.bwrap
    ran = spawn(cmd, program, cwd, child_env, timeout, max_output, stdin, bool(sandbox))
    if sandbox and ran.returncode != 0 and ran.stderr.startswith(b"bwrap: "):
        # the box itself failed (the program not visible inside it, say): an error, never
        # an exit status the caller would read as the program's own ("no matches")
        raise ShellError(f"the sandbox could not start {argv[0]}: "
                         f"{ran.stderr.decode(errors='replace').strip()[:300]}")
    return ran


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def spawn(cmd: Sequence[str], program: str, cwd: str | os.PathLike[str],
          env: Mapping[str, str], timeout: float, cap: int, stdin: str | None = None,
          sandboxed: bool = False) -> Ran:
    """Start ``cmd`` in its own process group and read both streams up to ``cap`` bytes
    each, until it exits, ``timeout`` passes (the group is killed) or the cap is hit."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(cmd), executable=program, cwd=cwd, env=dict(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            close_fds=True)
    except OSError as e:
        raise ShellError(f"cannot start {cmd[0]}: {e}") from e
    if stdin is not None:
        assert proc.stdin is not None
        pipe = proc.stdin

        def feed() -> None:
            try:
                pipe.write(stdin.encode())
                pipe.close()
            except OSError:
                pass

        threading.Thread(target=feed, daemon=True).start()

    bufs = {"out": bytearray(), "err": bytearray()}
    truncated = timed_out = False
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    deadline = start + timeout
    drain_until: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if drain_until is not None and now > drain_until:
                break  # something escaped the group and holds the pipe; stop reading
            if now >= deadline:
                timed_out = True
                _kill_group(proc)
                break
            events = sel.select(min(deadline - now, 0.05))
            for key, _ in events:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                b = bufs[key.data]
                room = cap - len(b)
                if room > 0:
                    b += chunk[:room]
                if len(chunk) > room:
                    truncated = True
            if truncated:
                _kill_group(proc)
                break
            if drain_until is None and proc.poll() is not None:
                _kill_group(proc)  # stragglers left in the group
                drain_until = time.monotonic() + 0.5
    finally:
        sel.close()
        for f in (proc.stdout, proc.stderr):
            f.close()
    try:
        rc = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        rc = proc.wait()
    return Ran(rc, bytes(bufs["out"]), bytes(bufs["err"]), truncated, timed_out,
               time.monotonic() - start, sandboxed)
