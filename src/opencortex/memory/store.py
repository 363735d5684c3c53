"""The index-store interface, and how to open one.

SQLite (stdlib) is the embedded default; PostgreSQL (``pg_store.PgStore``) implements the
same protocol for a shared memex.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .nodes import FileRows, Node, NodeLink, PassageRow
from .query import Predicate

if TYPE_CHECKING:
    from .dialect import Dialect
    from .migrations import MigrationSet
    from .nodes import Vector
    from .pg_store import PgStore
    from .sql_store import JournalRow

__all__ = ["EmbeddingBlobs", "EmbeddingRows", "EmbeddingSearch", "FileState", "IndexStore",
           "RankedFullText", "SqliteStore", "open_store", "store_dialect"]

FileState = tuple[int, int, str]
"""(mtime_ns, size, hash) of a file as last indexed."""


class IndexStore(Protocol):
    """What the rest of OpenCortex asks of an index store: both ``SqliteStore`` and
    ``PgStore`` (one implementation, ``sql_store.SqlStore``, two dialects). No SQL leaves
    ``memory/``: a caller that needs rows asks for them by a method here.

    The search engines' rows beyond this (``EmbeddingRows`` and its two kinds below,
    PostgreSQL's ``keyword_search``) are asked for by the engine chosen for the store's
    dialect (``retrieval.keyword``, ``retrieval.vectors``)."""

    path: str

    @property
    def dialect(self) -> Dialect: ...

    # transactions and life
    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def transaction(self) -> contextlib.AbstractContextManager[None]: ...
    def sync_lock(self) -> contextlib.AbstractContextManager[None]: ...
    def close(self) -> None: ...
    def clear(self) -> None: ...
    def status(self) -> dict[str, Any]: ...
    def ensure_migrations(self, mset: MigrationSet) -> None: ...

    # sync
    def file_states(self) -> dict[str, FileState]: ...
    def put_file(self, rows: FileRows, state: FileState) -> int: ...
    def touch_file(self, relpath: str, state: FileState) -> None: ...
    def remove_files(self, relpaths: Iterable[str]) -> None: ...
    def resolve_links(self) -> None: ...
    def generation(self) -> str: ...
    def bump_generation(self) -> None: ...
    def counts(self) -> dict[str, int]: ...
    def file_errors(self) -> dict[str, list[str]]: ...

    # queries
    def find(self, predicates: Sequence[Predicate], limit: int | None = None,
             order: str = "file", today: dt.date | None = None,
             with_body: bool = False) -> list[Node]: ...
    def all_nodes(self, with_body: bool = False) -> list[Node]: ...
    def file_nodes(self, relpath: str, with_body: bool = False) -> list[Node]: ...
    def nodes_by_keys(self, keys: Sequence[str], with_body: bool = True
                      ) -> dict[str, Node]: ...
    def nodes_by_ref(self, ref: str) -> list[Node]: ...
    def links_from(self, key: str) -> list[NodeLink]: ...
    def backlinks(self, key: str) -> list[NodeLink]: ...
    def dangling_links(self) -> list[NodeLink]: ...

    # the write journal
    def journal_add(self, op: str, description: str, path: str, before_hash: str | None,
                    after_hash: str, before_data: bytes | None, before_mode: int | None,
                    batch: str | None = None) -> int: ...
    def journal(self, limit: int = 20, include_undone: bool = False) -> list[JournalRow]: ...
    def journal_before(self, entry_id: int) -> tuple[bytes | None, int | None]: ...
    def journal_mark_undone(self, entry_id: int) -> None: ...

    # the keyword engine's sync state
    def keyword_synced(self) -> dict[str, str]: ...
    def keyword_sync_reset(self) -> None: ...
    def keyword_sync_record(self, removed: Iterable[str],
                            changed: Iterable[tuple[str, str]]) -> None: ...
    def files_hashed(self) -> list[tuple[int, str, str]]: ...
    def keyword_docs(self, file_id: int) -> list[tuple[int, str, str, str, str, str]]: ...

    def node_keys(self, ids: Sequence[int]) -> dict[int, str]: ...


class EmbeddingRows(Protocol):
    """What both vector engines ask of a store: the passages still to embed, how many are
    embedded, and storing new vectors (both stores: content-addressed ``embeddings``)."""

    def embedding_pending(self, model: str, dim: int, limit: int | None = None
                          ) -> list[PassageRow]: ...
    def embedding_counts(self, model: str, dim: int) -> tuple[int, int]: ...
    def embedding_passage_count(self, model: str, dim: int) -> int: ...
    def embeddings_put(self, model: str, dim: int, pairs: Sequence[tuple[str, Vector]]
                       ) -> None: ...
    def generation(self) -> str: ...


@runtime_checkable
class EmbeddingBlobs(EmbeddingRows, Protocol):
    """SQLite: the raw vector rows an in-process engine ranks (``retrieval.vectors``
    loads them into a numpy matrix)."""

    def embedding_rows(self, model: str, dim: int) -> Iterable[tuple[str, int, str, object]]: ...
    def embeddings_drop(self, model: str, dim: int, hashes: Iterable[str]) -> None: ...


@runtime_checkable
class EmbeddingSearch(EmbeddingRows, Protocol):
    """PostgreSQL + pgvector: vectors searched in the server through an HNSW index."""

    def embedding_index(self, model: str, dim: int) -> bool: ...
    def embedding_search(self, model: str, dim: int, qvec: Sequence[float], want: int,
                         ef_search: int, exact: bool = False
                         ) -> list[tuple[str, float, int]]: ...
    def embedding_matrix(self, model: str, dim: int) -> tuple[list[str], Vector]: ...


class RankedFullText(Protocol):
    """PostgreSQL: keyword search ranked in the server (its ``tsvector``); a SQLite index
    has tantivy beside it instead."""

    def keyword_search(self, terms: Sequence[str], prefixes: Sequence[str] = (),
                       k: int = 10) -> list[tuple[str, float]]: ...


def store_dialect(path: str | Path) -> Dialect:
    """The dialect of the store ``open_store(path)`` opens, without opening it (the
    search engines are chosen by it: a memex's store stays unopened until used)."""
    from .dialect import POSTGRES, SQLITE

    return POSTGRES if str(path).startswith(("postgresql://", "postgres://")) else SQLITE


def open_store(path: str | Path, schema: str = "opencortex") -> SqliteStore | PgStore:
    """Open (creating and migrating as needed) the index at ``path``: a SQLite file, or
    a ``postgresql://`` URL (``sqlite:PATH`` is accepted too); ``schema``: PostgreSQL only."""
    s = str(path)
    if store_dialect(s).name == "postgresql":
        from .pg_store import PgStore

        return PgStore(s, schema=schema)
    if s.startswith("sqlite:"):
        s = s.removeprefix("sqlite:").removeprefix("//")
    return SqliteStore(s)


from .sqlite_store import SqliteStore  # noqa: E402  (re-export; avoids an import cycle)
