"""The shapes every recall source returns, plus the read-only helpers they share.

Records are only ever read: files are opened ``rb``, SQLite through ``mode=ro`` URIs, and
nothing is written or touched, so recall can never damage another tool's history. A failed
read still yields a Record whose Receipt names the failing state, never an exception."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "ORIGINS",
    "STATES",
    "Origin",
    "Receipt",
    "Record",
    "Revision",
    "Snapshot",
    "State",
    "Turn",
    "failed_record",
    "find_files",
    "guarded",
    "head_line",
    "jsonl_lines",
    "parse_time",
    "shell_handle",
    "snapshot",
]

Origin = Literal["person", "assistant", "tool", "injected", "unknown"]
State = Literal["succeeded", "empty", "invocation_failed", "validation_failed",
                "input_failed", "skipped"]
ORIGINS: tuple[str, ...] = ("person", "assistant", "tool", "injected", "unknown")
STATES: tuple[str, ...] = ("succeeded", "empty", "invocation_failed", "validation_failed",
                           "input_failed", "skipped")


@dataclass(frozen=True)
class Turn:
    """One utterance; ``origin`` says whose words these are (only "person" is the human)."""

    index: int
    origin: Origin
    text: str
    timestamp: dt.datetime | None
    locator: str


@dataclass(frozen=True)
class Revision:
    """Which version of the file was read, to notice later changes cheaply."""

    mtime: float
    size: int


@dataclass(frozen=True)
class Receipt:
    """What a read of one record left behind. Counts that were not measured are None."""

    source: str
    root: str
    session_id: str
    locator: str
    revision: Revision | None
    sha256: str | None
    extractor: str
    state: State
    skipped_lines: int | None = None
    unverified_person_turns: int | None = None
    omitted_chars: int | None = None
    detail: str | None = None
    archived: str | None = None
    """Set when the record was read from the transcript archive because its original is
    gone: "archived copy of … — the original was deleted on …"."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "source": self.source, "root": self.root, "session_id": self.session_id,
            "locator": self.locator,
            "revision": (None if self.revision is None
                         else {"mtime": self.revision.mtime, "size": self.revision.size}),
            "sha256": self.sha256, "extractor": self.extractor, "state": self.state,
            "skipped_lines": self.skipped_lines,
            "unverified_person_turns": self.unverified_person_turns,
            "omitted_chars": self.omitted_chars,
        }
        if self.detail:
            d["detail"] = self.detail
        if self.archived:
            d["archived"] = self.archived
        return d


@dataclass
class Record:
    """One conversation as found on disk, with how to reopen it (``handle``)."""

    source: str
    session_id: str
    root: str
    locator: str
    title: str | None
    cwd: str | None
    branch: str | None
    started: dt.datetime | None
    ended: dt.datetime | None
    turns: list[Turn]
    handle: str
    receipt: Receipt
    parent_id: str | None = None  # a subagent's parent session (Claude Code)
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def person_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.origin == "person"]


@dataclass(frozen=True)
class Snapshot:
    """The bytes of a file read once, with the revision and hash they belong to."""

    path: Path
    data: bytes
    revision: Revision
    sha256: str


def snapshot(path: Path) -> Snapshot:
    """Read a file once, read-only; stat before and after so a file changing under us is
    noticed (the stat of the bytes we hashed is the one recorded). Raises OSError."""
    from ..regular import read_regular

    before = os.stat(path)
    data = read_regular(path)  # a FIFO or device raises instead of blocking
    after = os.stat(path)
    st = after if (after.st_mtime_ns, after.st_size) != (before.st_mtime_ns, before.st_size) \
        else before
    return Snapshot(path, data, Revision(st.st_mtime, st.st_size),
                    hashlib.sha256(data).hexdigest())


def find_files(top: Path, pattern: str) -> list[Path]:
    """Files (non-directories) under ``top`` whose name matches ``pattern``, sorted — one
    ``os.walk`` (pathlib's rglob + is_file stats every file again: with 10,000 sessions
    that was most of a no-op refresh)."""
    import fnmatch

    out: list[str] = []
    for dirpath, _dirs, files in os.walk(top):
        out.extend(os.path.join(dirpath, f) for f in fnmatch.filter(files, pattern))
    return [Path(p) for p in sorted(out)]


def is_entry(path: Path) -> bool:
    """A non-directory entry that exists: discovery keeps FIFOs, sockets and devices so
    the refresh can skip and count them (never open them)."""
    try:
        return path.exists() and not path.is_dir()
    except OSError:
        return False


def jsonl_lines(data: bytes) -> Iterator[tuple[int, Any | None]]:
    """Yield (1-based line number, parsed object or None when undecodable/invalid).
    Blank lines are not yielded; a truncated last line simply fails to parse."""
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            yield n, json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            yield n, None


def parse_time(value: Any) -> dt.datetime | None:
    """ISO 8601 strings (``Z`` allowed) or epoch numbers (s or ms) to an aware datetime."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            secs = value / 1000 if value > 1e11 else value
            return dt.datetime.fromtimestamp(secs, dt.UTC)
        if isinstance(value, str) and value:
            s = value.strip()
            if s.endswith("Z"):
                s = s[:-1] + "+00:00"
            t = dt.datetime.fromisoformat(s)
            return t if t.tzinfo else t.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def head_line(text: str, width: int = 80) -> str | None:
    """A one-line title from the first non-blank line."""
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())[:width]
    return None


def shell_handle(argv: Sequence[str], cwd: str | None, env: dict[str, str] | None = None
                 ) -> str:
    """``cd <cwd> && [ENV=..] command``, leaving out the ``cd`` when the directory is gone
    (a dead ``cd`` would stop the resume before it starts).  Every word is quoted: a
    session id or path comes from a transcript file, and the person pastes this line
    into a shell."""
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items()
                     if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
    cmd = prefix + shlex.join(argv)
    if cwd and os.path.isdir(cwd):
        return f"cd {shlex.quote(cwd)} && {cmd}"
    return cmd


def failed_record(source: str, extractor: str, path: Path, root: str, state: State,
                  detail: str, snap: Snapshot | None = None, handle: str = "") -> Record:
    """A Record standing for a read that did not produce a conversation."""
    receipt = Receipt(source=source, root=root, session_id=path.stem, locator=str(path),
                      revision=snap.revision if snap else None,
                      sha256=snap.sha256 if snap else None, extractor=extractor,
                      state=state, detail=detail)
    return Record(source=source, session_id=path.stem, root=root, locator=str(path),
                  title=None, cwd=None, branch=None, started=None, ended=None, turns=[],
                  handle=handle or str(path), receipt=receipt)


def guarded(source: str, extractor: str, root_of: Callable[[Path], str],
            parse: Callable[[Snapshot], list[Record]]) -> Callable[[Path], list[Record]]:
    """Wrap a parser so unreadable input and parser bugs become receipts, not exceptions.
    The reader also carries ``from_snapshot`` (bytes already in hand, e.g. an archived copy
    of a file that is gone, parsed as if read from ``snap.path``)."""

    def from_snapshot(snap: Snapshot) -> list[Record]:
        try:
            return parse(snap)
        except Exception as e:  # a bug or a shape we did not foresee: say so, keep going
            return [failed_record(source, extractor, snap.path, root_of(snap.path),
                                  "invocation_failed", f"{type(e).__name__}: {e}", snap)]

    def read(path: Path) -> list[Record]:
        path = Path(path).absolute()
        try:
            snap = snapshot(path)
        except OSError as e:
            return [failed_record(source, extractor, path, root_of(path), "input_failed",
                                  str(e))]
        return from_snapshot(snap)

    read.from_snapshot = from_snapshot  # type: ignore[attr-defined]
    return read
