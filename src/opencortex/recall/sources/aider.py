"""Aider chat histories: ``.aider.chat.history.md`` in the directory aider ran in.

Each ``# aider chat started at`` line opens a launch, read as its own Record; ``#### ``
lines are the person, ``> `` lines tool output, the rest the assistant — except inside
``` fences, where prefixes are content. Aider keeps no ids, so the id is derived from the
path and the launch ordinal; times are the launch's local time (naive datetimes)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from pathlib import Path

from ..records import (
    Origin,
    Receipt,
    Record,
    Snapshot,
    Turn,
    head_line,
    is_entry,
    shell_handle,
)
from ..records import guarded as _guarded

__all__ = ["EXTRACTOR", "FILENAME", "SOURCE", "default_roots", "discover", "read"]

SOURCE = "aider"
EXTRACTOR = "opencortex.recall.aider@1"
FILENAME = ".aider.chat.history.md"
_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__"}


def default_roots() -> list[Path]:
    env = os.environ.get("AIDER_CHAT_HISTORY_FILE")
    return [Path(env).expanduser()] if env else [Path.cwd(), Path.home()]


def discover(roots: list[Path] | None = None, depth: int = 3) -> list[Path]:
    """History files: a root may be the file itself or a directory searched ``depth`` deep."""
    found: list[Path] = []

    def walk(d: Path, level: int) -> None:
        f = d / FILENAME
        if is_entry(f):
            found.append(f)
        if level >= depth:
            return
        try:
            subs = sorted(p for p in d.iterdir() if p.is_dir() and p.name not in _SKIP_DIRS
                          and not p.name.startswith("."))
        except OSError:
            return
        for s in subs:
            walk(s, level + 1)

    for root in roots if roots is not None else default_roots():
        root = Path(root)
        if is_entry(root):
            found.append(root)
        elif root.is_dir():
            walk(root, 0)
    return sorted(set(found))


def _root_of(path: Path) -> str:
    return str(path.parent)


def _parse(snap: Snapshot) -> list[Record]:
    path = snap.path
    root = _root_of(path)
    lines: list[str | None] = []
    for raw in snap.data.split(b"\n"):
        try:
            lines.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError:
            lines.append(None)
    if lines and lines[-1] == "":
        lines.pop()
    # launches: (start line index, timestamp)
    starts = [(i, m.group(1)) for i, line in enumerate(lines)
              if line is not None and (m := _START.match(line))]
    if not starts:
        starts = [(0, "")]  # a history without a header is one anonymous launch
    key = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    env = None if path.name == FILENAME else {"AIDER_CHAT_HISTORY_FILE": str(path)}
    handle = shell_handle(["aider", "--restore-chat-history"], str(path.parent), env)
    records: list[Record] = []
    for ordinal, (begin, stamp) in enumerate(starts, 1):
        end = starts[ordinal][0] if ordinal < len(starts) else len(lines)
        body_from = begin + 1 if stamp else begin
        try:
            started = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S") if stamp else None
        except ValueError:
            started = None
        skipped = 0
        blocks: list[list] = []  # [origin, lines, first line no, last line no]
        fence = False
        for i in range(body_from, end):
            line = lines[i]
            if line is None:
                skipped += 1
                continue
            if fence:
                origin, text = "assistant", line
                if _FENCE.match(line):
                    fence = False
            elif line.startswith("####"):
                origin, text = "person", line[5:] if line.startswith("#### ") else line[4:]
            elif line.startswith(">"):
                origin, text = "tool", line[2:] if line.startswith("> ") else line[1:]
            elif not line.strip():
                if blocks:
                    blocks[-1][1].append("")
                continue
            else:
                origin, text = "assistant", line
                if _FENCE.match(line):
                    fence = True
            if blocks and blocks[-1][0] == origin:
                blocks[-1][1].append(text)
                blocks[-1][3] = i + 1
            else:
                blocks.append([origin, [text], i + 1, i + 1])
        turns: list[Turn] = []
        for origin, texts, first, last in blocks:
            text = "\n".join(texts).strip("\n")
            if text.strip():
                o: Origin = origin
                turns.append(Turn(len(turns), o, text, None, f"{path}:{first}-{last}"))
        sid = f"{key}-{ordinal}"
        loc = f"{path}:{begin + 1}-{max(end, begin + 1)}"
        receipt = Receipt(source=SOURCE, root=root, session_id=sid, locator=loc,
                          revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                          state="succeeded" if turns else "empty", skipped_lines=skipped,
                          unverified_person_turns=None, omitted_chars=0)
        first_person = next((t for t in turns if t.origin == "person"), None)
        records.append(Record(source=SOURCE, session_id=sid, root=root, locator=loc,
                              title=head_line(first_person.text) if first_person else None,
                              cwd=str(path.parent), branch=None, started=started, ended=None,
                              turns=turns, handle=handle, receipt=receipt))
    return records


read = _guarded(SOURCE, EXTRACTOR, _root_of, _parse)
