"""The OS sandbox for shell commands: bubblewrap, when it is installed and works.

Every command the agent runs goes through :func:`wrap` when a sandbox is available: the
whole filesystem read-only, the person's home hidden behind an empty tmpfs (only the memex
shows through, read-only), a fresh tmpfs for /tmp (the child's HOME lives there) and /run
(no sockets of the desktop, ssh-agent or docker), no network, its own pid/ipc/uts
namespaces, killed with us.  The argument check decides what may run; the sandbox limits
what it can do if the check were ever wrong.

Whether bubblewrap works is probed once per process (it needs unprivileged user
namespaces, which some containers forbid); :func:`status` says why not and how to fix it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .policy import ShellPolicy

__all__ = ["HOME", "TMP_BYTES", "SandboxStatus", "status", "wrap"]

HOME = "/tmp/home"
"""The child's HOME inside the sandbox (writable, thrown away)."""
TMP_BYTES = 64 << 20
"""Size of the sandbox's /tmp."""
FIX = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    available: bool
    bwrap: str | None
    detail: str
    """Why not (and how to fix it), or what is used."""
    sized: bool = True
    """This bwrap knows ``--size`` (0.7+): the sandbox's /tmp is capped at TMP_BYTES."""


def status(policy: ShellPolicy) -> SandboxStatus:
    """Is the sandbox used for commands under this policy (``guard.shell.sandbox``)?"""
    if policy.sandbox == "off":
        return SandboxStatus(False, None, 'turned off by guard.shell.sandbox = "off"; '
                             'set it to "auto" to use bubblewrap')
    return _probe(tuple(policy.path))


@functools.cache
def _probe(path: tuple[str, ...]) -> SandboxStatus:
    exe = shutil.which("bwrap", path=os.pathsep.join(path))
    if exe is None:
        return SandboxStatus(False, None, f"bubblewrap (bwrap) not found; {FIX}")
    true = shutil.which("true", path=os.pathsep.join(path)) or "/bin/true"
    sized = True
    for sized in (True, False):
        try:
            r = subprocess.run([exe, *_base_args(sized), "--", true], capture_output=True,
                               timeout=10, env={"PATH": os.pathsep.join(path)}, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return SandboxStatus(False, exe, f"{exe} does not start ({e}); {FIX}")
        if not (r.returncode and b"--size" in r.stderr):
            break  # an old bwrap without --size: try once more without the cap
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxStatus(False, exe, f"{exe} cannot create a sandbox here "
                             f"({err[-1] if err else f'exit {r.returncode}'}); it needs "
                             "unprivileged user namespaces (sysctl "
                             "kernel.unprivileged_userns_clone=1, or a container allowed "
                             "to create namespaces)")
    return SandboxStatus(True, exe, f"bubblewrap {exe}: read-only filesystem, no network",
                         sized)


def _base_args(sized: bool = True) -> list[str]:
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            *(["--size", str(TMP_BYTES)] if sized else []), "--tmpfs", "/tmp", "--dir", HOME,
            "--unshare-all", "--die-with-parent", "--new-session"]


def wrap(bwrap: str, argv: Sequence[str], exe: str, cwd: str | os.PathLike[str],
         memex_root: str | os.PathLike[str] | None, *,
         home: str | os.PathLike[str] | None = None, sized: bool = True,
         readable: Iterable[str | os.PathLike[str]] = ()) -> list[str]:
    """The bwrap command line that runs ``argv`` (program ``exe``) in ``cwd``, boxed in.

    ``home`` (default: the real $HOME) is hidden behind an empty tmpfs; ``memex_root`` is
    bound back read-only on top, so it stays visible wherever it lives; so are the
    directories in ``readable`` (a repository's git directory, say).
    """
    out = [bwrap, *_base_args(sized)[:-3]]
    hide: list[str] = []
    if Path("/run").is_dir():
        hide.append("/run")
    real_home = Path(home if home is not None else os.path.expanduser("~"))
    if real_home.is_absolute() and real_home.is_dir() and len(real_home.parts) > 1:
        hide.append(str(real_home))
    for h in hide:
        out += ["--tmpfs", h]
    keep = [Path(memex_root).resolve()] if memex_root is not None else []
    keep.append(Path(cwd).resolve())
    keep += [Path(r).resolve() for r in readable if Path(r).exists()]
    prog = Path(exe).resolve()
    if any(_inside(prog, Path(h)) for h in [*hide, "/tmp"]):
        # an allowlisted tool under the hidden home or the fresh /tmp (a virtualenv's rg in
        # a checkout under /tmp, say) stays runnable: that one file is bound back read-only
        keep.append(prog)
    for k in dict.fromkeys(keep):
        out += ["--ro-bind", str(k), str(k)]
    # the tmpfs that only hide things (/run, the home) and the new /dev (its /dev/shm) have
    # no size cap: read-only, so /tmp (capped) is the one place a command can write
    for hidden in hide:
        out += ["--remount-ro", hidden]
    out += ["--remount-ro", "/dev"]
    out += ["--unshare-all", "--die-with-parent", "--new-session",
            "--chdir", str(Path(cwd).resolve()), "--", exe, *argv[1:]]
    return out


def _inside(p: Path, root: Path) -> bool:
    try:
        p.relative_to(root)
        return True
    except ValueError:
        return False
