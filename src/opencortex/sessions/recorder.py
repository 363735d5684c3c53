"""Write each conversation as an Org file in the sessions folder
(``Settings.sessions_path``: by default under the XDG data dir, not in the memex):
``YYYY/MM/DD-<session>.org``, one headline per turn with an inactive timestamp and the
turn's origin (person, assistant, tool, external, injected); text in an example block with
Org's comma-escaping, so no turn can inject structure into the file, and with clock,
planning and active-timestamp words defused (``defuse_agenda``), so Emacs never counts a
quoted LOGBOOK or meeting.  They are the agent's records, never the person's notes: the
index skips them (``Settings.is_record_file``); recall reads them as a record source.
Files whose last turn is older than ``[sessions] retention_days`` are pruned."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings

from ..atomic import atomic_write, read_snapshot
from ..org.model import Heading
from ..org.parser import parse
from ..org.timestamps import format_timestamp
from ..write.neutralise import (
    defuse_agenda,
    escape_block_content,
    neutralise_title,
    normalise_lines,
)
from ..write.verify import Intent, verify_write
from .ids import validate_session_id

__all__ = ["ORIGINS", "SessionRecorder", "escape_block", "record_files"]

ORIGINS = ("person", "assistant", "tool", "external", "injected")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def escape_block(text: str) -> str:
    """Org's escaping for text inside a block (the neutraliser's one definition)."""
    return escape_block_content(text)


def record_files(folder: Path) -> list[Path]:
    """The session records under ``folder`` (``YYYY/MM/*.org``), oldest month first."""
    if not folder.is_dir():
        return []
    from ..config import RECORD_GLOB

    return sorted(p for p in folder.glob(RECORD_GLOB)
                  if p.is_file() and not p.is_symlink())


class SessionRecorder:
    """Appends turns to ``<folder>/YYYY/MM/DD-<session>.org``; ``folder`` is the sessions
    folder itself (``Settings.sessions_path``), see :meth:`for_settings`."""

    def __init__(self, folder: Path, clock: Callable[[], dt.datetime] | None = None,
                 retention_days: float = 0.0) -> None:
        self.folder = Path(folder)
        self.clock = clock or dt.datetime.now
        self.retention_days = retention_days
        self._lock = threading.Lock()
        self._paths: dict[str, Path] = {}
        self._pruned: dt.date | None = None

    @classmethod
    def for_settings(cls, settings: Settings,
                     clock: Callable[[], dt.datetime] | None = None) -> SessionRecorder | None:
        """The recorder ``[sessions]`` asks for, or None when recording is off."""
        if not settings.sessions.record:
            return None
        return cls(settings.sessions_path, clock, settings.sessions.retention_days)

    def path_for(self, session: str) -> Path:
        validate_session_id(session)
        if session not in self._paths:
            now = self.clock()
            sid = _SAFE.sub("-", session).strip("-")[:60] or "session"
            self._paths[session] = (self.folder / f"{now:%Y}" / f"{now:%m}"
                                    / f"{now:%d}-{sid}.org")
        return self._paths[session]

    def prune(self) -> list[Path]:
        """Delete records whose last turn (the file's mtime) is older than the retention;
        returns what was deleted.  Nothing when retention is 0 (kept forever)."""
        if self.retention_days <= 0:
            return []
        cutoff = time.time() - self.retention_days * 86400  # file mtimes are real time
        gone: list[Path] = []
        for p in record_files(self.folder):
            try:
                if p.stat().st_mtime < cutoff and p not in self._paths.values():
                    p.unlink()
                    gone.append(p)
            except OSError:
                continue
        for d in {p.parent for p in gone} | {p.parent.parent for p in gone}:
            try:
                d.rmdir()  # only when empty
            except OSError:
                pass
        return gone

    def _prune_daily(self) -> None:
        today = dt.date.today()
        if self._pruned != today:
            self._pruned = today
            self.prune()

    def record(self, session: str, origin: str, text: str, *, title: str | None = None,
               properties: dict[str, str] | None = None, tag: str | None = None) -> Path:
        """Append one turn; returns the file written. ``tag`` (a privacy tag) marks a turn
        of a conversation that could see private notes, so that clients not trusted with
        them never read it back through search, reads or recall."""
        if tag is not None and not re.fullmatch(r"[\w@#%]+", tag):
            raise ValueError(f"tag {tag!r} is not an Org tag")
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}")
        validate_session_id(session)
        text = normalise_lines(text)  # the lines checked below are the lines Emacs sees
        with self._lock:
            self._prune_daily()
            path = self.path_for(session)
            for _ in range(3):  # someone else wrote meanwhile: re-read and retry
                snap = read_snapshot(path)
                old = snap.text
                if not old:
                    old = (f"#+TITLE: Session {session}\n#+FILETAGS: :session:\n"
                           f"#+PROPERTY: SESSION {session}\n\n")
                stamp = format_timestamp(self.clock(), active=False, with_time=True)
                head = defuse_agenda(neutralise_title((title or text.strip().split("\n")[0]
                                                       if text.strip() else origin)[:80]))
                props = {"ORIGIN": origin, **(properties or {})}
                lines = [f"* {stamp} {origin}: {head}" + (f" :{tag}:" if tag else ""),
                         ":PROPERTIES:"]
                lines += [f":{k}: {defuse_agenda(' '.join(normalise_lines(str(v)).split()))}"
                          for k, v in props.items()]
                lines += [":END:", "#+begin_example", escape_block(defuse_agenda(text.rstrip("\n"))),
                          "#+end_example", ""]
                sep = "" if old.endswith("\n") else "\n"
                new = old + sep + "\n".join(lines)
                start = len(old) + len(sep)
                # the same whole-file check as every memex write: one new entry, no other
                # entry and no setting of the record changed
                def new_entry(h: Heading, at: int = start) -> bool:
                    return h.start == at

                verify_write(parse(old, str(path)), new, Intent(added=1),
                             new_entry, f"record a turn in {path.name}")
                try:
                    atomic_write(snap, new.encode("utf-8", "surrogateescape"))
                    return path
                except Exception as e:  # ConflictError: retry on the fresh content
                    from ..errors import ConflictError

                    if not isinstance(e, ConflictError):
                        raise
            raise RuntimeError(f"could not record the turn in {path}")
