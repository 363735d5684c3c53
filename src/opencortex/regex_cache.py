"""Regular expressions compiled once per machine, not once per process.

Python's ``re`` parses and compiles a pattern in Python code; the router's and the GTD
skill's phrase grammars (hundreds of patterns, some of them thousands of characters long)
took ~0.2 s of CPU at every ``opencortex ask``'s start.  :func:`compile` keeps what the
compiler made — the program ``_sre`` runs, its group count and names — in one file in the
cache dir, keyed by the exact pattern text and flags and by the interpreter's version and
regex engine magic, and builds the pattern object from it (``_sre.compile``, what
``re.compile`` itself ends with): the same object, ~50x cheaper.  Any miss or failure
(another Python, an unreadable or damaged file: ``_sre`` validates every program it is
given) compiles as ``re`` does; new entries are written at exit, atomically.

Only for patterns that read a request's wording (router, GTD phrases); the guard, the
writer's neutraliser and the egress checks keep plain ``re.compile``.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = ["compile"]

_Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
_MAX = 4096
"""Entries kept in the file (the patterns of this version and of a few before it)."""

_lock = threading.Lock()
_known: dict[tuple[str, int], _Entry] | None = None
_new: dict[tuple[str, int], _Entry] = {}


def _file() -> Path:
    import _sre  # type: ignore[import-not-found]

    from .config import cache_dir

    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}-{_sre.CODESIZE}"
    return cache_dir() / f"regex-{tag}.json"


def _load() -> dict[tuple[str, int], _Entry]:
    try:
        # JSON, never marshal or pickle: the file is data (a program _sre validates before
        # it runs), and a damaged or planted one can at worst make a pattern fall back
        rows = json.loads(_file().read_text("utf-8"))
        return {(str(p), int(f)): (int(fl), [int(c) for c in code], int(g),
                                   {str(k): int(v) for k, v in gi.items()},
                                   tuple(None if n is None else str(n) for n in ig))
                for p, f, fl, code, g, gi, ig in rows}
    except Exception:  # no file yet, another format, damaged: compile afresh
        return {}


def _save() -> None:
    with _lock:
        if not _new:
            return
        rows = {**(_known or {}), **_new}
        _new.clear()
    keep = list(rows.items())[-_MAX:]
    try:
        path = _file()
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-regex-",
                                         delete=False) as f:
            f.write(json.dumps([(p, fl0, *e) for (p, fl0), e in keep],
                               separators=(",", ":")).encode("utf-8"))
        os.replace(f.name, path)
    except Exception:  # an unwritable cache costs the next process a compile, nothing more
        pass


def _parts(pattern: str, flags: int) -> _Entry:
    """What ``re._compiler.compile`` hands ``_sre.compile``, as plain ints and strings."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    p = _parser.parse(pattern, flags)
    code = [int(c) for c in _compiler._code(p, flags)]
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return int(flags | p.state.flags), code, p.state.groups - 1, groupindex, tuple(indexgroup)


def compile(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, from the machine's cache when it holds it."""
    global _known
    key = (pattern, int(flags))
    with _lock:
        if _known is None:
            _known = _load()
        entry = _known.get(key)
    try:
        import _sre  # type: ignore[import-not-found]

        if entry is None:
            entry = _parts(pattern, int(flags))
            with _lock:
                if not _new:
                    atexit.register(_save)
                _new[key] = entry
        fl, code, groups, groupindex, indexgroup = entry
        compiled: Any = _sre.compile(pattern, fl, code, groups, groupindex, indexgroup)
        return compiled
    except Exception:  # another interpreter or a damaged entry: as re compiles it
        return re.compile(pattern, flags)
