"""The registry of recall sources: each module offers ``discover(roots)`` and ``read(path)``;
``read_all`` runs them and never raises, so one broken history cannot hide the others."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..records import Record, Snapshot
from . import aider, claude_code, codex, gemini, opencode, opencortex_sessions

__all__ = ["SOURCES", "Source", "read_all"]


@dataclass(frozen=True)
class Source:
    """One kind of conversation history and how to find and read it."""

    kind: str
    discover: Callable[[list[Path] | None], list[Path]]
    read: Callable[[Path], list[Record]]
    extractor: str
    default_roots: Callable[[], list[Path]]
    from_snapshot: Callable[[Snapshot], list[Record]]
    """Parse bytes already read (an archived copy) as if they were read from their path."""


SOURCES: dict[str, Source] = {
    m.SOURCE: Source(m.SOURCE, m.discover, m.read, m.EXTRACTOR, m.default_roots,
                     m.read.from_snapshot)
    for m in (claude_code, codex, gemini, aider, opencode, opencortex_sessions)
}


def read_all(kinds_and_roots: Mapping[str, list[Path] | None]
             | Iterable[tuple[str, list[Path] | None]]) -> list[Record]:
    """Discover and read every requested source (roots None = that source's defaults).
    Unknown kinds raise KeyError: that is the caller's mistake, not bad input."""
    pairs = (kinds_and_roots.items() if isinstance(kinds_and_roots, Mapping)
             else kinds_and_roots)
    records: list[Record] = []
    for kind, roots in pairs:
        source = SOURCES[kind]
        for path in source.discover(roots):
            records.extend(source.read(path))
    return records
