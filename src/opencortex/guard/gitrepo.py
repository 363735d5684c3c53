"""Does a repository's own config name programs that read-only git commands would run?

The environment pins what it can (core.fsmonitor, core.pager, gpg.program, ... in
``shell.minimal_env``), but drivers are named per repository: ``diff.external``,
``diff.<driver>.textconv`` / ``.command``, ``filter.<driver>.clean`` / ``.smudge`` /
``.process``, ``merge.<driver>.driver``, ``include`` sections that pull in more, and
``core.worktree`` (which makes ``git diff`` read files from anywhere).  A
synced ``.git/config`` with any of them makes ``git diff`` / ``git log -p`` / ``git status``
run that program, so such a command is not known to be read-only: it asks.

The config is read by git's own parser (``git config --file F --list``): git accepts a key
on its section's line (``[diff] external = cmd``, or after a bare CR), which no line-based
reading of the text sees.
"""

from __future__ import annotations

import itertools
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from . import runner
from .errors import ShellError

__all__ = ["configured_programs", "git_dirs"]

_MAX_CONFIG = 1 << 20
_MAX_UP = 64
_MAX_MODULES = 200
_KEY = re.compile(r"^\s*(textconv|external|clean|smudge|process|command|driver|path"
                  r"|worktree)\s*=", re.I | re.M)
_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)", re.M)
_RISKY_SECTIONS = ("diff", "filter", "merge", "include", "includeif")


def git_dirs(start: Path) -> Iterable[tuple[Path, Path]]:
    """(where found, git directory) that git would use from ``start`` (walking up, as
    discovery does)."""
    d = start
    for _ in range(_MAX_UP):
        if (d / "HEAD").is_file() and (d / "objects").is_dir():
            yield d, d  # a bare repository / a git dir named directly (--git-dir)
        dot = d / ".git"
        if dot.is_dir():
            yield d, dot.resolve()
            return
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8", errors="replace")[:4096]
            except OSError:
                return
            m = re.match(r"gitdir:\s*(.+)", text)
            if m:
                g = (d / m.group(1).strip()).resolve()
                yield d, g
                common = g / "commondir"
                if common.is_file():
                    try:
                        yield d, (g / common.read_text(encoding="utf-8").strip()).resolve()
                    except OSError:
                        pass
            return
        if d.parent == d:
            return
        d = d.parent


def configured_programs(starts: Iterable[Path], root: Path | None = None) -> list[str]:
    """``section.key`` names in the repositories' configs that can make git run a program
    (empty: none, or no repository); with ``root`` (the resolved memex), also a ``.git``
    inside it that is a pointer or symlink to a git directory outside it."""
    found: list[str] = []
    seen: set[Path] = set()
    asked: set[Path] = set()
    for s in starts:
        for where, g in git_dirs(s):
            if root is not None and _inside(where.resolve(), root) and not _inside(g, root):
                found.append(f"{where / '.git'} leads to a git directory outside the "
                             f"memex ({g})")
            if where not in asked:
                asked.add(where)
                found += _effective_names(where)
            if g in seen:
                continue
            seen.add(g)
            # the submodules' own configs too: --recurse-submodules, --submodule=diff and
            # status run git inside them
            subs = itertools.islice(g.glob("modules/**/config"), _MAX_MODULES)
            for cfg in [g / "config", *subs]:
                try:
                    if not cfg.is_file():
                        continue
                    with cfg.open("rb") as f:
                        text = f.read(_MAX_CONFIG).decode("utf-8", "replace")
                except OSError:
                    found.append(f"{cfg} (unreadable)")
                    continue
                found += _risky(text, cfg)
                found += _risky_names(cfg)
    return list(dict.fromkeys(found))


def _inside(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


def _risky_names(cfg: Path) -> list[str]:
    """The risky keys as git itself reads ``cfg`` (a config git cannot read is risky)."""
    if shutil.which("git") is None:
        return []  # no git: no git command can run either
    try:
        # not boxed: ``config --file F --no-includes --list`` reads that one file and runs
        # nothing, and this runs inside the guard's check of every git command
        p = runner.run(runner.git_argv(cfg.parent, "config", "--file", str(cfg),
                                       "--no-includes", "--list", "--name-only", "-z"),
                       cwd=cfg.parent, timeout=5, max_output=_MAX_CONFIG * 4, sandbox=False,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    except ShellError:
        return [f"{cfg} (git could not read it)"]
    if p.returncode != 0 or p.timed_out or p.truncated:
        return [f"{cfg} (git could not parse it)"]
    out = []
    for name in p.stdout.decode("utf-8", "replace").split("\0"):
        if not name:
            continue
        sec, _, key = name.lower().rpartition(".")
        out += _risky(f"[{sec}]\n{key} =", cfg)
    return out


def _effective_names(where: Path) -> list[str]:
    """The risky keys of the configuration git itself reads in ``where`` -- every file it
    would: ``.git/config``, ``config.worktree`` (``extensions.worktreeConfig``), a linked
    worktree's, what ``include``/``includeIf`` pull in -- not only the files named above
    (a filter's ``clean`` in ``config.worktree`` ran on ``git status``).  The pins on the
    command line (scope ``command``) are ours; system and global are off (``GIT_ENV``)."""
    if shutil.which("git") is None:
        return []
    try:
        # not boxed, as _risky_names: listing the configuration runs nothing
        p = runner.run(runner.git_argv(where, "config", "--list", "--name-only", "-z",
                                       "--show-scope"),
                       cwd=where, timeout=5, max_output=_MAX_CONFIG * 4, sandbox=False,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    except ShellError:
        return [f"the configuration git reads in {where} (git could not read it)"]
    if p.timed_out or p.truncated:
        return [f"the configuration git reads in {where} (git could not read it)"]
    if p.returncode != 0:
        return []  # not a repository git can open: a git command there runs nothing either
    words = p.stdout.decode("utf-8", "replace").split("\0")
    out = []
    for scope, name in zip(words[0::2], words[1::2], strict=False):
        if scope == "command" or not name:
            continue
        sec, _, key = name.lower().rpartition(".")
        out += _risky(f"[{sec}]\n{key} =", Path(f"{where} ({scope} configuration)"))
    return out


def _risky(text: str, cfg: Path) -> list[str]:
    out = []
    sections = [(m.start(), m.group(1).lower()) for m in _SECTION.finditer(text)]
    for m in _KEY.finditer(text):
        sec = ""
        for pos, name in sections:
            if pos > m.start():
                break
            sec = name
        top = sec.split(".", 1)[0]
        key = m.group(1).lower()
        if key == "worktree":  # core.worktree: git reads "the work tree" from anywhere
            if sec == "core":
                out.append(f"core.worktree in {cfg}")
        elif top in _RISKY_SECTIONS and (key != "path" or top.startswith("include")) and (
                key != "external" or top == "diff"):
            out.append(f"{sec}.{key} in {cfg}")
    return out
