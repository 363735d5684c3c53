"""Confine paths to the memex: the one place that decides whether a path may be written.

Every component is checked, so a symlink anywhere on the way (a directory or the file
itself) that points outside the memex is refused, not just the final target.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from .errors import UnsafePathError

__all__ = ["CODE_DIR", "confine", "confine_note", "in_code_dir", "is_inside"]

_MAX_SYMLINKS = 40
CODE_DIR = "skills"
"""The memex folder whose ``.org`` files are code (literate skills).  Notes never go there:
only the skill-creator writes it, after the person approved the code."""


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def confine(path: str | os.PathLike[str], root: str | os.PathLike[str], *,
            suffixes: tuple[str, ...] | None = (".org",), directory: bool = False) -> Path:
    """The resolved absolute path of ``path`` under ``root``, or UnsafePathError.

    ``path`` is relative to ``root`` (an absolute path must already lie under it).
    Refused: NUL / control characters, ``~``, any ``..`` component, ``.git``, symlinks whose
    target is outside ``root``, existing non-regular files, and names not ending in one of
    ``suffixes`` (default: memex writes go to ``.org`` files only; ``None`` = any).
    ``directory=True`` confines a directory that must exist (e.g. a shell cwd).
    """
    raw = os.fspath(path)
    if not isinstance(raw, str):
        raise UnsafePathError(f"path must be text, got {type(raw).__name__}")
    if not raw.strip():
        raise UnsafePathError("empty path refused")
    if any(ord(c) < 32 or c == "\x7f" for c in raw):
        raise UnsafePathError(f"path {raw!r} contains NUL or control characters; refused")
    if raw.startswith("~"):
        raise UnsafePathError(f"{raw}: home-relative paths are refused; give a path inside "
                              "the memex")
    try:
        root_abs = Path(os.path.abspath(os.fspath(root)))
        root_real = root_abs.resolve(strict=True)
    except (OSError, RuntimeError) as e:
        raise UnsafePathError(f"memex root {root!s} is not usable: {e}") from e
    if not root_real.is_dir():
        raise UnsafePathError(f"memex root {root_real} is not a directory")

    p = PurePosixPath(raw)
    if ".." in p.parts:
        raise UnsafePathError(f"{raw}: '..' is not allowed in memex paths")
    if p.is_absolute():
        for base in (root_abs, root_real):
            try:
                rel = p.relative_to(base)
                break
            except ValueError:
                continue
        else:
            raise UnsafePathError(f"{raw} is outside the memex ({root_real}); refused")
    else:
        rel = p
    parts = [x for x in rel.parts if x not in ("", ".")]
    if any(x.casefold() == ".git" for x in parts):
        raise UnsafePathError(f"{raw}: writing inside .git is refused")

    current = root_real
    for i, part in enumerate(parts):
        nxt = current / part
        try:
            st = nxt.lstat()
        except FileNotFoundError:
            current = nxt  # the rest does not exist yet: no symlinks to follow
            continue
        except OSError as e:
            raise UnsafePathError(f"{raw}: cannot inspect {nxt}: {e}") from e
        if stat.S_ISLNK(st.st_mode):
            try:
                target = nxt.resolve(strict=False)
            except (OSError, RuntimeError) as e:  # loops
                raise UnsafePathError(f"{raw}: symlink {nxt} cannot be resolved: {e}") from e
            if not is_inside(target, root_real):
                raise UnsafePathError(
                    f"{raw}: {nxt} is a symlink to {target}, outside the memex; refused")
            nxt = target
        last = i == len(parts) - 1
        if not last and nxt.exists() and not nxt.is_dir():
            raise UnsafePathError(f"{raw}: {nxt} is not a directory")
        current = nxt

    if not is_inside(current, root_real):  # belt and braces
        raise UnsafePathError(f"{raw} resolves to {current}, outside the memex; refused")
    if directory:
        if not current.is_dir():
            raise UnsafePathError(f"{raw}: {current} is not an existing directory")
        return current
    if current == root_real:
        raise UnsafePathError(f"{raw}: names the memex root, not a file")
    if suffixes is not None:
        for name in {PurePosixPath(raw).name, current.name}:
            if not name.endswith(suffixes):
                raise UnsafePathError(
                    f"{raw}: only {', '.join(suffixes)} files may be written in the memex")
    if current.exists() and not current.is_file():
        raise UnsafePathError(f"{raw}: {current} exists and is not a regular file")
    return current


def in_code_dir(path: Path, root: Path) -> bool:
    """True when the resolved ``path`` lies in the memex's skills folder (by name, any case,
    or through a symlinked skills folder)."""
    root_real = root.resolve()
    try:
        rel = path.relative_to(root_real)
    except ValueError:
        return False
    if rel.parts and rel.parts[0].casefold() == CODE_DIR:
        return True
    code = root_real / CODE_DIR
    try:
        return code.exists() and is_inside(path, code.resolve())
    except (OSError, RuntimeError):
        return True  # a skills folder we cannot resolve: refuse rather than guess


def confine_note(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> Path:
    """:func:`confine` for note writes (capture, append, new note, edits): also refuses the
    skills folder, whose files are code that runs with the person's rights."""
    real = confine(path, root)
    if in_code_dir(real, Path(os.path.abspath(os.fspath(root)))):
        raise UnsafePathError(
            f"{os.fspath(path)}: files in {CODE_DIR}/ are code (literate skills), not notes; "
            "captures, appends and notes may not write there. Create a skill with the "
            "skill-creator (\"create a skill that ...\"), which shows you the code to "
            "approve, or edit the file yourself and run `opencortex skills trust NAME`")
    return real
