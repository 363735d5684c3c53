"""Stage 1 of reading: a live, index-free scan of the memex with ripgrep.

Returns the *headlines* that matches belong to (with ID and outline path), not bare
lines.  Two ripgrep passes: the query over every .org file, then — only over the files
that matched — the lines that give structure (headlines, planning lines, property
drawers, :ID:, #+TODO keywords).  The query goes to ripgrep as one argv element after
``-e`` (never through a shell), as a fixed string unless ``regex=True``; ripgrep's regex
engine runs in linear time, so no pattern can hang it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScanError
from ..guard import runner
from ..guard.errors import ShellError

__all__ = ["ScanError", "ScanHit", "find_rg", "scan"]

_STRUCT = (  # the lines that give a file its structure, in one pattern (one rg pass)
    r"(?i)^(?:\*|[ \t]*(?::(?:properties|end|id):|#\+(?:todo|seq_todo|typ_todo):"
    r"|scheduled:|deadline:|closed:))"
)
_RG_LINE = re.compile(r"([^\0\n]*)\0(\d+):([^\n]*)")


@dataclass(slots=True)
class ScanHit:
    """A headline with the lines under it that matched."""

    file: str
    line: int | None
    """Line of the headline; None for matches before the first headline."""
    title: str | None
    level: int = 0
    todo: str | None = None
    id: str | None = None
    outline: list[str] = field(default_factory=list)
    """Ancestor titles, outermost first, then the headline's own title."""
    matches: list[dict[str, Any]] = field(default_factory=list)
    """[{"line": n, "text": "..."}] in file order."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_rg() -> str:
    """ripgrep: $OPENCORTEX_RG, the one installed beside this Python (PyPI ``ripgrep``),
    else the system's."""
    from ..config import env

    cands = [env("OPENCORTEX_RG"), str(Path(sys.executable).parent / "rg"),
             shutil.which("rg")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise ScanError("ripgrep (rg) not found: pip install ripgrep==14.1.0, or "
                    "apt-get install ripgrep, or set OPENCORTEX_RG")


_BASE = ["--no-config", "--no-messages", "--color", "never"]


def _rg(args: list[str], cwd: Path) -> bytes:
    """One ripgrep pass through the one runner (argv, the sandbox, a timeout, a cap)."""
    try:
        ran = runner.run([find_rg(), *_BASE, *args], cwd=cwd, memex_root=cwd, timeout=120,
                         env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"})
    except ShellError as e:
        raise ScanError(f"ripgrep could not start: {e}") from e
    if ran.timed_out:
        raise ScanError("ripgrep took more than 120 s; narrow the query")
    if ran.returncode == 2 and not ran.stdout:
        msg = ran.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ScanError(f"ripgrep rejected the query: {msg[-1] if msg else 'error'}"
                        " (without --regex the query is a plain string)")
    return ran.stdout


def _lines_by_file(raw: bytes) -> dict[str, list[tuple[int, str]]]:
    """``path\\0N:text`` lines (plain output: parsing JSON costs 10x more) by file."""
    out: dict[str, list[tuple[int, str]]] = {}
    for path, num, body in _RG_LINE.findall(raw.decode("utf-8", "replace")):
        lst = out.get(path)
        if lst is None:
            lst = out[path] = []
        lst.append((int(num), body[:-1] if body.endswith("\r") else body))
    return out


_LINES = ["--no-heading", "--with-filename", "--line-number", "--null"]


def scan(root: str | os.PathLike[str], query: str, regex: bool = False,
         ignore_case: bool | None = None, limit: int | None = 100,
         exclude: Callable[[str], bool] | None = None) -> list[ScanHit]:
    """Headlines under ``root`` whose entry text (or headline) matches ``query``, in file
    order; at most ``limit`` of them (None: all) — a sparse first look, not a dump.
    ``exclude``: memex-relative paths that are not notes (never listed).

    Pass 1 counts matching lines per file (``rg --count``: tiny output); pass 2 runs,
    concurrently, the query and the structure pattern over just enough files (in path
    order) to hold ``limit`` hits, taking more only if the lines fell under fewer headlines.
    """
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise ScanError(f"memex {root} is not a directory (pass --memex DIR)")
    if not query:
        raise ScanError("empty query")
    case = ["--ignore-case"] if ignore_case else (["--smart-case"] if ignore_case is None
                                                  else ["--case-sensitive"])
    q = [*case, *([] if regex else ["--fixed-strings"]), "-e", query]
    listing = _rg((["--count", "--null", "--glob", "*.org", "--max-filesize",
                              "256M", "--no-ignore-parent", *q, "--", "."]), root)
    counts: dict[str, int] = {}
    for line in listing.decode("utf-8", "replace").split("\n"):
        path, sep, n = line.partition("\0")
        if sep and n.strip().isdigit():
            counts[path] = int(n)
    # not the person's notes (the agent's session records: Settings.is_record_file)
    files = sorted(p for p in counts if exclude is None or not exclude(p.removeprefix("./")))
    hits: list[ScanHit] = []
    i = 0
    while i < len(files):
        j, lines = i, 0
        while j < len(files) and j - i < 500 and (not limit or lines < limit - len(hits)):
            lines += counts[files[j]]
            j += 1
        chunk = files[i:j]
        i = j
        threads = ["--threads", "1"] if len(chunk) <= 100 else []  # startup dominates
        with ThreadPoolExecutor(2) as pool:  # the two passes run side by side
            pm = pool.submit(_rg, [*_LINES, "--no-ignore", *threads, *q, "--", *chunk], root)
            ps = pool.submit(_rg, [*_LINES, "--no-ignore", *threads, "-e", _STRUCT, "--",
                                   *chunk], root)
            matched, structure = _lines_by_file(pm.result()), _lines_by_file(ps.result())
        for f in chunk:
            if f in matched:
                hits.extend(_hits_for_file(f, structure.get(f, []), matched[f]))
            if limit and len(hits) >= limit:
                return hits[:limit]
    return hits


_HEAD = re.compile(r"^(\*+)(?:[ \t]|$)")


_PLANNING = re.compile(r"^[ \t]*(?i:scheduled|deadline|closed):")
_PROPS = re.compile(r"^[ \t]*:properties:[ \t]*$", re.I)
_END = re.compile(r"^[ \t]*:end:[ \t]*$", re.I)
_ID = re.compile(r"^[ \t]*:id:[ \t]*([^\n]*)$", re.I)
"""An ``:ID:`` line; its value is group 1 stripped of blanks (a lazy value before a blank
run was retried over the run at each step: quadratic on a line of blanks)."""
_TODO_KW = re.compile(r"^[ \t]*#\+(todo|seq_todo|typ_todo):(.*)$", re.I)


def _hits_for_file(path: str, struct: list[tuple[int, str]],
                   matched: list[tuple[int, str]]) -> list[ScanHit]:
    """Attach each matched line to the headline it belongs to (outline, ID, keyword)."""
    from ..org.headline import parse_headline_line
    from ..org.settings import compute_settings

    rel = path[2:] if path.startswith("./") else path
    kws = [(m.group(1).upper(), m.group(2).strip()) for _, t in struct
           if t[:1] in " \t#" and (m := _TODO_KW.match(t))]
    keywords = compute_settings(kws, None, lambda p: None).all_todo
    lines = dict(struct)
    heads = [(n, len(t) - len(t.lstrip("*")), t) for n, t in struct
             if t[:1] == "*" and _HEAD.match(t)]
    parsed: dict[int, Any] = {}

    def title(n: int, raw: str) -> Any:
        if n not in parsed:
            parsed[n] = parse_headline_line(raw, keywords)
        return parsed[n]

    def head_id(n: int) -> str | None:
        nxt = n + 1
        if _PLANNING.match(lines.get(nxt, "")):
            nxt += 1
        if not _PROPS.match(lines.get(nxt, "")):
            return None
        k = nxt + 1
        found = None
        while k in lines and not _END.match(lines[k]) and not _HEAD.match(lines[k]):
            m = _ID.match(lines[k])
            if m and m.group(1).strip(" \t"):
                found = m.group(1).strip(" \t")  # Org's :ID is the last one in the drawer
            k += 1
        return found

    out: dict[int | None, ScanHit] = {}
    stack: list[tuple[int, int, str]] = []  # (stars, line, raw)
    hi = 0
    for ln, text in matched:
        while hi < len(heads) and heads[hi][0] <= ln:
            hl, stars, raw = heads[hi]
            while stack and stack[-1][0] >= stars:
                stack.pop()
            stack.append((stars, hl, raw))
            hi += 1
        key = stack[-1][1] if stack else None
        hit = out.get(key)
        if hit is None:
            if stack:
                outline = [title(n, r).title for _, n, r in stack]
                me = title(stack[-1][1], stack[-1][2])
                hit = ScanHit(rel, key, me.title, stack[-1][0], me.todo, head_id(stack[-1][1]),
                              outline)
            else:
                hit = ScanHit(rel, None, None)
            out[key] = hit
        hit.matches.append({"line": ln, "text": text})
    return list(out.values())
