"""Stage 1 of reading: a live, index-free scan of the memex with ripgrep.

Returns the *headlines* that matches belong to (with ID and outline path), not bare
lines.  Two ripgrep passes: the query over every .org file, then — only over the files
that matched — the lines that give structure (headlines, planning lines, property
drawers, :ID:, #+TODO keywords).  The query goes to ripgrep as one argv element after
``-e`` (never through a shell), as a fixed string unless ``regex=True``; ripgrep's regex
engine runs in linear time, so no pattern can hang it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OpenCortexError

__all__ = ["ScanError", "ScanHit", "find_rg", "scan"]

_STRUCT = [
    r"^\*+[ \t]",                                         # headline (or "*" alone)
    r"^\*+$",
    r"^[ \t]*(?i:scheduled|deadline|closed):",           # planning
    r"^[ \t]*(?i::properties:)[ \t]*$",
    r"^[ \t]*(?i::end:)[ \t]*$",
    r"^[ \t]*(?i::id:)([ \t]|$)",
    r"^[ \t]*#\+(?i:todo|seq_todo|typ_todo):",
]


class ScanError(OpenCortexError):
    pass


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
    cands = [os.environ.get("OPENCORTEX_RG"), str(Path(sys.executable).parent / "rg"),
             shutil.which("rg")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise ScanError("ripgrep (rg) not found: pip install ripgrep==14.1.0, or "
                    "apt-get install ripgrep, or set OPENCORTEX_RG")


def _rg_json(args: list[str], cwd: Path) -> list[dict]:
    rg = find_rg()
    try:
        proc = subprocess.run([rg, "--json", "--no-config", "--no-messages", *args],
                              cwd=cwd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        raise ScanError("ripgrep took more than 120 s; narrow the query") from e
    if proc.returncode == 2 and not proc.stdout:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ScanError(f"ripgrep rejected the query: {msg[-1] if msg else 'error'}"
                        " (without --regex the query is a plain string)")
    out = []
    for raw in proc.stdout.splitlines():
        try:
            ev = json.loads(raw)
        except ValueError:
            continue
        if ev.get("type") == "match":
            out.append(ev["data"])
    return out


def _text(d: dict) -> str:
    v = d.get("text")
    if v is None:  # not UTF-8: ripgrep sends base64 bytes
        import base64

        v = base64.b64decode(d.get("bytes", "")).decode("utf-8", "replace")
    return v.rstrip("\r\n")


def scan(root: str | os.PathLike[str], query: str, regex: bool = False,
         ignore_case: bool | None = None, limit: int | None = None) -> list[ScanHit]:
    """Headlines under ``root`` whose entry text (or headline) matches ``query``."""
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise ScanError(f"memex {root} is not a directory (pass --memex DIR)")
    if not query:
        raise ScanError("empty query")
    case = ["--ignore-case"] if ignore_case else (["--smart-case"] if ignore_case is None
                                                  else ["--case-sensitive"])
    common = ["--glob", "*.org", "--max-filesize", "256M", "--no-ignore-parent"]
    matches = _rg_json([*common, *case, *([] if regex else ["--fixed-strings"]),
                        "-e", query, "--", "."], root)
    if not matches:
        return []
    by_file: dict[str, list[tuple[int, str]]] = {}
    for m in matches:
        path = _text(m["path"])
        by_file.setdefault(path, []).append((m["line_number"], _text(m["lines"])))
    files = sorted(by_file)
    struct_args = [a for p in _STRUCT for a in ("-e", p)]
    structure: dict[str, list[tuple[int, str]]] = {f: [] for f in files}
    for i in range(0, len(files), 500):  # keep argv bounded
        for m in _rg_json(["--no-ignore", *struct_args, "--", *files[i:i + 500]], root):
            structure.setdefault(_text(m["path"]), []).append(
                (m["line_number"], _text(m["lines"])))
    hits: list[ScanHit] = []
    for f in files:
        hits.extend(_hits_for_file(f, sorted(structure.get(f, [])), by_file[f]))
        if limit and len(hits) >= limit:
            return hits[:limit]
    return hits


_HEAD = re.compile(r"^(\*+)(?:[ \t]|$)")


def _hits_for_file(path: str, struct: list[tuple[int, str]],
                   matched: list[tuple[int, str]]) -> list[ScanHit]:
    from ..org.headline import parse_headline_line
    from ..org.settings import compute_settings

    rel = path[2:] if path.startswith("./") else path
    kws = []
    for _, t in struct:
        m = re.match(r"^[ \t]*#\+(todo|seq_todo|typ_todo):(.*)$", t, re.I)
        if m:
            kws.append((m.group(1).upper(), m.group(2).strip()))
    st = compute_settings(kws, None, lambda p: None)
    keywords = st.all_todo
    # headlines with their IDs (ID only inside a drawer right after headline/planning)
    heads: list[tuple[int, int, str, str | None]] = []  # (line, stars, raw, todo)
    ids: dict[int, str] = {}
    lines = {n: t for n, t in struct}
    for n, t in struct:
        hm = _HEAD.match(t)
        if not hm:
            continue
        heads.append((n, len(hm.group(1)), t, None))
        nxt = n + 1
        if re.match(r"^[ \t]*(?i:scheduled|deadline|closed):", lines.get(nxt, "")):
            nxt += 1
        if re.match(r"^[ \t]*:properties:[ \t]*$", lines.get(nxt, ""), re.I):
            k = nxt + 1
            while k in lines and not re.match(r"^[ \t]*:end:[ \t]*$", lines[k], re.I):
                if _HEAD.match(lines[k]):
                    break
                mm = re.match(r"^[ \t]*:id:[ \t]*(\S.*?)?[ \t]*$", lines[k], re.I)
                if mm and n not in ids and mm.group(1):
                    ids[n] = mm.group(1)
                k += 1
    out: dict[int | None, ScanHit] = {}
    stack: list[tuple[int, str]] = []  # (stars, title)
    hi = 0
    for ln, text in sorted(matched):
        while hi < len(heads) and heads[hi][0] <= ln:
            hl, stars, raw, _ = heads[hi]
            parts = parse_headline_line(raw, keywords)
            while stack and stack[-1][0] >= stars:
                stack.pop()
            stack.append((stars, parts.title))
            hi += 1
            cur = ScanHit(rel, hl, parts.title, stars, parts.todo, ids.get(hl),
                          [t for _, t in stack])
            out[hl] = cur
        key = heads[hi - 1][0] if hi else None
        if key not in out:
            out[key] = ScanHit(rel, None, None)
        out[key].matches.append({"line": ln, "text": text})
    return [h for h in out.values() if h.matches]
