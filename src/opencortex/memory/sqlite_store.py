"""The SQLite index store (stdlib ``sqlite3``, WAL, FTS5)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IndexStoreError
from .dialect import SQLITE, fts_match
from .migrations import MigrationSet, apply_migrations, migration_sets
from .nodes import FileRows, PassageRow
from .sql_store import JournalRow, SqlStore

if TYPE_CHECKING:
    from .nodes import Vector

__all__ = ["JournalRow", "SqliteStore", "fts_match"]


class SqliteStore(SqlStore):
    """The index in one SQLite file: files, nodes, links, FTS5 and the write journal."""

    dialect = SQLITE

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            self.db.execute("PRAGMA cache_size=-65536")
            # the index's steps, and every other owner's registered so far
            self.migrations_applied = apply_migrations(self.db, migration_sets())
        except sqlite3.DatabaseError as e:
            raise IndexStoreError(
                f"{self.path}: not a usable index ({e}). The index is disposable: "
                "delete the file or run `opencortex index --rebuild`.") from e

    # -- transactions -------------------------------------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.close()

    def insert_id(self, sql: str, params: Sequence[Any] = ()) -> int:
        # RETURNING costs SQLite ~0.15 ms a row more than lastrowid (2000 files: 0.3 s)
        rid = self.q(sql, params).lastrowid
        if rid is None:
            raise IndexStoreError(f"an INSERT inserted no row: {sql[:60]}")
        return int(rid)

    def ensure_migrations(self, mset: MigrationSet) -> None:
        """Apply another owner's migration set to this database."""
        self.migrations_applied += apply_migrations(self.db, [mset])

    def _clear_tables(self) -> None:
        self.db.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('delete-all')")
        super()._clear_tables()

    def status(self) -> dict[str, Any]:
        """Backend, location, migration level and row counts."""
        from .migrations import migration_status

        q = self.db.execute
        done = [r[0] for r in q("SELECT name FROM _migrations ORDER BY name")]
        emb = q("SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim "
                "ORDER BY model, dim").fetchall()
        return {"backend": "sqlite", "path": self.path,
                "migrations": migration_status(done, "sqlite"),
                "counts": {**self.counts(),
                           "journal": q("SELECT count(*) FROM journal").fetchone()[0],
                           "embeddings": sum(c for _, _, c in emb)},
                "embeddings": [{"model": m, "dim": d, "count": c} for m, d, c in emb]}

    def _query_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.OperationalError,)

    # -- sync ----------------------------------------------------------------
    def _delete_file_rows(self, file_id: int) -> None:
        self.db.execute(
            "INSERT INTO nodes_fts(nodes_fts, rowid, title, tags, body) "
            "SELECT 'delete', id, title, tags, body FROM nodes WHERE file_id = ?", (file_id,))
        super()._delete_file_rows(file_id)

    def put_file(self, rows: FileRows, state: tuple[int, int, str]) -> int:
        """Replace everything indexed for one file (call inside begin/commit)."""
        db = self.db
        mtime_ns, size, h = state
        file_id = self._put_file_meta(rows.relpath, (
            mtime_ns, size, h, rows.title, " ".join(rows.filetags),
            json.dumps(rows.todo_keywords), json.dumps(rows.done_keywords),
            json.dumps(rows.errors), len(rows.nodes), time.time()))
        if not rows.nodes:
            return file_id
        first = self._next_node_id()
        db.executemany(
            "INSERT INTO nodes (id, file_id, idx, key, org_id, level, line, title, todo, "
            "todo_type, priority, local_tags, tags, outline, properties, category, scheduled, "
            "scheduled_raw, deadline, deadline_raw, closed, closed_raw, body, byte_start, "
            "byte_end, parent_idx, archived, embed_hash, agenda, agenda_lo, agenda_hi, "
            "agenda_pend, agenda_sexps) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(first + i, file_id, *r) for i, r in enumerate(rows.nodes)])
        db.executemany(
            "INSERT INTO nodes_fts (rowid, title, tags, body) VALUES (?,?,?,?)",
            [(first + i, r[5], r[10], r[20]) for i, r in enumerate(rows.nodes)])
        if rows.links:
            db.executemany(
                "INSERT INTO links (source_id, file_id, type, path, description, search) "
                "VALUES (?,?,?,?,?,?)",
                [(first + ni, file_id, t, p, d, s) for ni, t, p, d, s in rows.links])
        if rows.passages:
            db.executemany(
                "INSERT INTO passages (node_id, file_id, seq, line, hash, body_line) "
                "VALUES (?,?,?,?,?,?)",
                [(first + ni, file_id, q, ln, h, bl) for ni, q, ln, h, bl in rows.passages])
        return file_id

    # -- the vector engine's rows (retrieval.vectors ranks them in numpy) --------------
    def embedding_pending(self, model: str, dim: int, limit: int | None = None
                          ) -> list[PassageRow]:
        """(hash, outline, title, body, seq, line, body_line) of each distinct passage
        text without a vector of this model and dimension."""
        sql = ("SELECT p.hash, n.outline, n.title, n.body, p.seq, n.line, p.body_line "
               "FROM passages p JOIN nodes n ON n.id = p.node_id "
               "WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
               "WHERE e.hash = p.hash AND e.model = ? AND e.dim = ?) "
               "GROUP BY p.hash")
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.db.execute(sql, (model, dim)).fetchall()

    def embedding_rows(self, model: str, dim: int) -> Iterable[tuple[str, int, str, object]]:
        """(node key, passage line, hash, little-endian float32 blob) per passage with a
        vector, in node and passage order."""
        return self.db.execute(
            "SELECT n.key, p.line, e.hash, e.vec FROM passages p "
            "JOIN nodes n ON n.id = p.node_id JOIN embeddings e ON "
            "e.hash = p.hash AND e.model = ? AND e.dim = ? ORDER BY p.node_id, p.seq",
            (model, dim))

    def embeddings_put(self, model: str, dim: int, pairs: Sequence[tuple[str, Vector]]
                       ) -> None:
        """Store (hash, float32 vector) rows in one transaction (bumps the generation)."""
        self._embeddings_write(
            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
            [(h, model, dim, v.tobytes()) for h, v in pairs])

    def embeddings_drop(self, model: str, dim: int, hashes: Iterable[str]) -> None:
        """Delete vectors (a corrupted row: the next embedding run redoes it)."""
        self._embeddings_write("DELETE FROM embeddings WHERE hash = ? AND model = ? AND dim = ?",
                               [(h, model, dim) for h in hashes])

    def _embeddings_write(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        with self.transaction():
            self.db.executemany(sql, rows)
            self.bump_generation()
