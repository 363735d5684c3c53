"""Write each conversation as an Org file in the memex:
``sessions/YYYY/MM/DD-<session>.org``, one headline per turn with an inactive timestamp
and the turn's origin (person, assistant, tool, external, injected); text in an example
block with Org's comma-escaping, so no turn can inject structure into the file.
Plain text, indexed like any note; the recall issue reads them."""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable
from pathlib import Path

from ..atomic import atomic_write, read_snapshot
from ..org.model import Heading
from ..org.parser import parse
from ..org.timestamps import format_timestamp
from ..write.neutralise import escape_block_content, neutralise_title, normalise_lines
from ..write.verify import Intent, verify_write
from .ids import validate_session_id

__all__ = ["ORIGINS", "SessionRecorder", "escape_block"]

ORIGINS = ("person", "assistant", "tool", "external", "injected")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def escape_block(text: str) -> str:
    """Org's escaping for text inside a block (the neutraliser's one definition)."""
    return escape_block_content(text)


class SessionRecorder:
    def __init__(self, root: Path, clock: Callable[[], dt.datetime] | None = None) -> None:
        self.root = root
        self.clock = clock or dt.datetime.now
        self._lock = threading.Lock()
        self._paths: dict[str, Path] = {}

    def path_for(self, session: str) -> Path:
        validate_session_id(session)
        if session not in self._paths:
            now = self.clock()
            sid = _SAFE.sub("-", session).strip("-")[:60] or "session"
            self._paths[session] = (self.root / "sessions" / f"{now:%Y}" / f"{now:%m}"
                                    / f"{now:%d}-{sid}.org")
        return self._paths[session]

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
            path = self.path_for(session)
            for _ in range(3):  # someone else wrote meanwhile: re-read and retry
                snap = read_snapshot(path)
                old = snap.text
                if not old:
                    old = (f"#+TITLE: Session {session}\n#+FILETAGS: :session:\n"
                           f"#+PROPERTY: SESSION {session}\n\n")
                stamp = format_timestamp(self.clock(), active=False, with_time=True)
                head = neutralise_title((title or text.strip().split("\n")[0]
                                         if text.strip() else origin)[:80])
                props = {"ORIGIN": origin, **(properties or {})}
                lines = [f"* {stamp} {origin}: {head}" + (f" :{tag}:" if tag else ""),
                         ":PROPERTIES:"]
                lines += [f":{k}: {' '.join(normalise_lines(str(v)).split())}"
                          for k, v in props.items()]
                lines += [":END:", "#+begin_example", escape_block(text.rstrip("\n")),
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
