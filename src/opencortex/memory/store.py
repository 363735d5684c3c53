"""The index-store interface, and how to open one.

SQLite (stdlib) is the embedded default; PostgreSQL (``pg_store.PgStore``) implements the
same protocol for a shared memex.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .nodes import FileRows, Node, NodeLink
from .query import Predicate

if TYPE_CHECKING:
    from .pg_store import PgStore

__all__ = ["FileState", "IndexStore", "SqliteStore", "open_store"]

FileState = tuple[int, int, str]
"""(mtime_ns, size, hash) of a file as last indexed."""


class IndexStore(Protocol):
    """What the rest of OpenCortex needs from an index store."""

    path: str

    def file_states(self) -> dict[str, FileState]: ...
    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def put_file(self, rows: FileRows, state: FileState) -> int: ...
    def touch_file(self, relpath: str, state: FileState) -> None: ...
    def remove_files(self, relpaths: Iterable[str]) -> None: ...
    def resolve_links(self) -> None: ...
    def counts(self) -> dict[str, int]: ...
    def find(self, predicates: Sequence[Predicate], limit: int | None = None,
             order: str = "file") -> list[Node]: ...
    def nodes_by_ref(self, ref: str) -> list[Node]: ...
    def links_from(self, key: str) -> list[NodeLink]: ...
    def backlinks(self, key: str) -> list[NodeLink]: ...
    def close(self) -> None: ...


def open_store(path: str | Path, schema: str = "opencortex") -> SqliteStore | PgStore:
    """Open (creating and migrating as needed) the index at ``path``: a SQLite file, or
    a ``postgresql://`` URL (``sqlite:PATH`` is accepted too); ``schema``: PostgreSQL only."""
    s = str(path)
    if s.startswith(("postgresql://", "postgres://")):
        from .pg_store import PgStore

        return PgStore(s, schema=schema)
    if s.startswith("sqlite:"):
        s = s.removeprefix("sqlite:").removeprefix("//")
    return SqliteStore(s)


from .sqlite_store import SqliteStore  # noqa: E402  (re-export; avoids an import cycle)
