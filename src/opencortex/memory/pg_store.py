"""The PostgreSQL index store: the same interface and behaviour as ``SqliteStore``,
for a memex shared by a team or larger than one laptop indexes comfortably.

- Full text: a stored, weighted ``tsvector`` (outline path + title A, tags B, body C,
  English stemming) with a GIN index; the query's words OR-ed and ranked by
  ``ts_rank_cd``; user words go through ``websearch_to_tsquery`` so no tsquery syntax
  leaks through.
- Vectors: pgvector, keyed by (content hash, model, dim) and shared by every machine that
  points at the store; one partial HNSW index (cosine) per (model, dim).
- Concurrency: every write transaction takes one advisory lock per schema, and a whole
  sync holds it from reading file states to commit, so two processes syncing the same
  memex serialise into one consistent index; a sync is one transaction, so readers never
  see a half-synced file.

One store lives in one schema (default ``opencortex``), so several memexes (or test
runs) can share a database.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import IndexStoreError
from .dialect import POSTGRES, RANK_WEIGHTS, pg_tsquery
from .migrations import MigrationSet, migration_sets
from .nodes import FileRows, PassageRow
from .pg_migrations import apply_pg_migrations, pg_migration_status
from .query import QuerySyntaxError
from .sql_store import SqlStore

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

    from .nodes import Vector

__all__ = ["PgStore", "copy_vectors", "redact_url"]

WRITE_LOCK = 0x0C0_7E9
"""Advisory lock class for writes (second key: hashtext(schema))."""
_NODE_COPY_COLS = (
    "id, file_id, idx, key, org_id, level, line, title, todo, todo_type, priority, "
    "local_tags, tags, outline, properties, category, scheduled, scheduled_raw, deadline, "
    "deadline_raw, closed, closed_raw, body, byte_start, byte_end, parent_idx, archived, "
    "embed_hash, agenda, agenda_lo, agenda_hi, agenda_pend, agenda_sexps")


def _clean(v: object) -> object:
    """PostgreSQL text cannot hold NUL; Org files virtually never do, but never fail on it."""
    return v.replace("\x00", "") if isinstance(v, str) and "\x00" in v else v


class PgStore(SqlStore):
    """The index in one PostgreSQL schema: files, nodes, links, full text, vectors,
    the write journal and meta/generation."""

    dialect = POSTGRES

    def __init__(self, url: str, schema: str = "opencortex") -> None:
        import psycopg
        from psycopg import sql

        self.url, self.schema = url, schema
        self.path = f"{redact_url(url)}#{schema}"
        try:
            self.db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            raise IndexStoreError(
                f"cannot connect to the PostgreSQL store {redact_url(url)}: {e}".strip()) from e
        try:
            sets = migration_sets()  # the index's, and every other owner's registered so far
            self.migrations_applied = apply_pg_migrations(self.db, schema, sets)
            vschema = self.db.execute(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                "ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()[0]
            self.db.execute(sql.SQL("SET search_path TO {}, {}").format(
                sql.Identifier(schema), sql.Identifier(vschema)))
        except psycopg.Error as e:
            self.db.close()
            raise IndexStoreError(
                f"{self.path}: cannot prepare the store ({e}); the pgvector extension must "
                "be installable (CREATE EXTENSION vector) by this user") from e
        self._migrated = {m.owner for m in sets}
        self._lock = threading.RLock()
        self._in_tx = False
        self._sync_depth = 0

    # -- transactions -------------------------------------------------------
    def begin(self) -> None:
        """Start a write transaction; writers of this schema go one at a time."""
        self._lock.acquire()
        self.db.execute("BEGIN")
        self._in_tx = True
        try:
            self._wait_lock("pg_try_advisory_xact_lock")
        except BaseException:
            self.rollback()
            raise

    def _wait_lock(self, fn: str) -> None:
        """Take the schema's write lock, polling: a blocking pg_advisory_lock would hold
        this connection (shared by the process's threads) while another process syncs,
        stalling every reader here; between polls the connection stays free."""
        delay = 0.002
        while not self.db.execute(f"SELECT {fn}(%s, hashtext(%s))",
                                  (WRITE_LOCK, self.schema)).fetchone()[0]:
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def commit(self) -> None:
        try:
            self.db.execute("COMMIT")
        finally:
            self._end_tx()

    def rollback(self) -> None:
        if self._in_tx:
            try:
                self.db.execute("ROLLBACK")
            finally:
                self._end_tx()

    def _end_tx(self) -> None:
        if self._in_tx:
            self._in_tx = False
            self._lock.release()

    @contextlib.contextmanager
    def sync_lock(self) -> Iterator[None]:
        """Hold this schema's write lock for a whole sync (from reading the file states
        to commit): a second process syncing the same memex waits, then finds the work
        done — never two syncs interleaving their view of the files."""
        with self._lock:  # and one at a time among this process's threads
            self._sync_depth += 1
            if self._sync_depth == 1:
                try:
                    self._wait_lock("pg_try_advisory_lock")
                except BaseException:
                    self._sync_depth -= 1
                    raise
            try:
                yield
            finally:
                self._sync_depth -= 1
                if self._sync_depth == 0:
                    self.db.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))",
                                    (WRITE_LOCK, self.schema))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    def ensure_migrations(self, mset: MigrationSet) -> None:
        """Apply another owner's migration set to this schema (once per connection)."""
        if mset.owner in self._migrated:
            return
        self.migrations_applied += apply_pg_migrations(self.db, self.schema, [mset])
        self._migrated.add(mset.owner)

    def _query_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.errors.SyntaxError, psycopg.errors.DataException)

    # -- sync ----------------------------------------------------------------
    def put_file(self, rows: FileRows, state: tuple[int, int, str]) -> int:
        """Replace everything indexed for one file (call inside begin/commit)."""
        db = self.db
        mtime_ns, size, h = state
        file_id = self._put_file_meta(rows.relpath, (
            mtime_ns, size, h, _clean(rows.title), " ".join(rows.filetags),
            json.dumps(rows.todo_keywords), json.dumps(rows.done_keywords),
            json.dumps(rows.errors), len(rows.nodes), time.time()))
        if not rows.nodes:
            return file_id
        first = self._next_node_id()
        with db.cursor() as cur, cur.copy(f"COPY nodes ({_NODE_COPY_COLS}) FROM STDIN") as cp:
            for i, r in enumerate(rows.nodes):
                cp.write_row((first + i, file_id, *(_clean(v) for v in r)))
        if rows.links:
            with db.cursor() as cur, cur.copy(
                    "COPY links (source_id, file_id, type, path, description, search) "
                    "FROM STDIN") as cp:
                for ni, t, p, d, s in rows.links:
                    cp.write_row((first + ni, file_id, t, _clean(p), _clean(d), _clean(s)))
        if rows.passages:
            with db.cursor() as cur, cur.copy(
                    "COPY passages (node_id, file_id, seq, line, hash, body_line) "
                    "FROM STDIN") as cp:
                for ni, q, ln, h, bl in rows.passages:
                    cp.write_row((first + ni, file_id, q, ln, h, bl))
        return file_id

    def _clear_tables(self) -> None:
        self.db.execute("TRUNCATE files, nodes, links, passages")

    # -- health ------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Connection, server, pgvector, migration level and row counts."""
        ver = self.db.execute("SHOW server_version").fetchone()[0]
        ext = self.db.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        emb = self.db.execute(
            "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim "
            "ORDER BY model, dim").fetchall()
        return {"backend": "postgresql", "url": redact_url(self.url), "schema": self.schema,
                "server_version": ver, "pgvector": ext[0] if ext else None,
                "migrations": pg_migration_status(self.db),
                "counts": {**self.counts(),
                           "journal": self.db.execute(
                               "SELECT count(*) FROM journal").fetchone()[0],
                           "embeddings": sum(c for _, _, c in emb)},
                "embeddings": [{"model": m, "dim": d, "count": c} for m, d, c in emb],
                "hnsw_indexes": [r[0] for r in self.db.execute(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND "
                    "indexdef ILIKE '%%USING hnsw%%' ORDER BY indexname", (self.schema,))]}

    # -- the engines' rows (retrieval.keyword and retrieval.vectors rank with them) -----
    def keyword_search(self, terms: Sequence[str], prefixes: Sequence[str] = (),
                       k: int = 10) -> list[tuple[str, float]]:
        """Ranked full-text search: ``terms`` (words and phrases) and ``prefixes`` OR-ed
        (a node need not hold them all) and ranked by ``ts_rank_cd``, as the tantivy
        engine's BM25 does with SQLite.  Ranking every OR match reads each match's
        tsvector: slower than tantivy's block-max WAND on common words at 100k nodes, the
        price of the same semantics."""
        try:
            q, params = pg_tsquery(terms, op="||", prefixes=prefixes)
        except QuerySyntaxError:
            return []
        rows = self.db.execute(
            f"SELECT n.key, ts_rank_cd('{RANK_WEIGHTS}', n.tsv, q, 1) AS r "
            f"FROM nodes n, (SELECT {q}) AS qq(q) WHERE n.tsv @@ q "
            f"ORDER BY r DESC, n.id LIMIT %s", [*params, int(k)]).fetchall()
        return [(key, float(r)) for key, r in rows]

    def embedding_pending(self, model: str, dim: int, limit: int | None = None
                          ) -> list[PassageRow]:
        """(hash, outline, title, body, seq, line, body_line) of each distinct passage
        text without a vector of this model and dimension."""
        sql = ("SELECT DISTINCT ON (p.hash) p.hash, n.outline, n.title, n.body, p.seq, "
               "n.line, p.body_line FROM passages p JOIN nodes n ON n.id = p.node_id "
               "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = p.hash AND "
               "e.model = %s AND e.dim = %s) ORDER BY p.hash")
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.db.execute(sql, (model, dim)).fetchall()

    def embeddings_put(self, model: str, dim: int, pairs: Sequence[tuple[str, Vector]]
                       ) -> None:
        """Store (hash, float32 vector) rows; a row another process stored first wins
        (same content, same model: the same vector)."""
        self.begin()
        try:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS _emb_in "
                            "(hash text, vec vector) ON COMMIT DELETE ROWS")
            copy_vectors(self.db, "_emb_in", pairs, dim)
            self.db.execute(
                "INSERT INTO embeddings (hash, model, dim, vec) SELECT hash, %s, %s, "
                "vec FROM _emb_in ON CONFLICT DO NOTHING", (model, dim))
            self.bump_generation()
            self.commit()
        except BaseException:
            self.rollback()
            raise

    @staticmethod
    def _hnsw_name(model: str, dim: int) -> str:
        import hashlib

        tag = hashlib.sha1(f"{model}\0{dim}".encode()).hexdigest()[:12]
        return f"embeddings_hnsw_{tag}"

    def _model_cond(self, model: str, dim: int, alias: str = "e.") -> str:
        """The (model, dim) condition over embeddings (``alias``) with the model as a
        literal, so the planner can match the partial index."""
        from psycopg import sql

        m = sql.Literal(model).as_string(self.db)
        return f"{alias}model = {m} AND {alias}dim = {int(dim)}"

    def embedding_index(self, model: str, dim: int) -> bool:
        """Create this (model, dim)'s partial HNSW index (cosine) if missing (after a bulk
        load: building once is far faster than growing it row by row).  True when created
        now."""
        name = self._hnsw_name(model, dim)
        have = self.db.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
            (self.schema, name)).fetchone()
        if have:
            return False
        cond = self._model_cond(model, dim, alias="")
        self.begin()
        try:
            self.db.execute("SET LOCAL maintenance_work_mem = '512MB'")
            # pgvector >= 0.6 builds HNSW with parallel workers (capped by the server's
            # max_worker_processes)
            workers = max(1, min(7, (os.cpu_count() or 2) - 1))
            self.db.execute(f"SET LOCAL max_parallel_maintenance_workers = {workers}")
            self.db.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw "
                f"((vec::vector({int(dim)})) vector_cosine_ops) WHERE {cond}")
            self.commit()
        except BaseException:
            self.rollback()
            raise
        return True

    def embedding_search(self, model: str, dim: int, qvec: Sequence[float], want: int,
                         ef_search: int, exact: bool = False) -> list[tuple[str, float, int]]:
        """(node key, cosine, passage line) of the passages of the ``want`` nearest
        distinct vectors, nearest first (through HNSW with ``ef_search`` candidates, or
        every row when ``exact``); a node with several near passages comes several times."""
        qtxt = "[" + ",".join(map(repr, qvec)) + "]"
        cond, typ = self._model_cond(model, dim), f"vector({int(dim)})"
        db = self.db
        db.execute(f"SET hnsw.ef_search = {int(ef_search)}")
        if exact:
            db.execute("SET enable_indexscan = off")
        try:
            # the HNSW scan ranks distinct vectors; the passages (and nodes) sharing one
            # are joined after
            rows = db.execute(
                f"SELECT n.key, 1 - t.d, p.line FROM (SELECT e.hash, e.vec::{typ} <=> "
                f"%s::{typ} AS d FROM embeddings e WHERE {cond} AND EXISTS (SELECT 1 FROM "
                f"passages x WHERE x.hash = e.hash) ORDER BY d LIMIT %s) t "
                f"JOIN passages p ON p.hash = t.hash JOIN nodes n ON n.id = p.node_id "
                f"ORDER BY t.d, n.id, p.seq", (qtxt, int(want))).fetchall()
        finally:
            if exact:
                db.execute("RESET enable_indexscan")
        return [(key, float(s), int(line)) for key, s, line in rows]

    def embedding_matrix(self, model: str, dim: int) -> tuple[list[str], Vector]:
        """(node key per passage, float32 matrix) of every passage with a vector, in node
        and passage order."""
        import numpy as np

        rows = self.db.execute(
            "SELECT n.key, e.vec::text FROM passages p JOIN nodes n ON n.id = p.node_id "
            "JOIN embeddings e ON e.hash = p.hash AND e.model = %s AND e.dim = %s "
            "ORDER BY p.node_id, p.seq", (model, dim)).fetchall()
        keys = [k for k, _ in rows]
        m = (np.array([json.loads(v) for _, v in rows], dtype="<f4").reshape(len(keys), dim)
             if rows else np.zeros((0, dim), dtype="<f4"))
        return keys, m


def copy_vectors(db: psycopg.Connection[TupleRow], table: str,
                 rows: Iterable[tuple[str, Vector]], dim: int) -> int:
    """COPY (hash, vec) rows into ``table`` in PostgreSQL's binary format, vectors in
    pgvector's wire format (int16 dim, int16 0, big-endian float4s) straight from numpy:
    formatting floats as text costs ~0.3 ms per 384-d vector, this ~5 µs."""
    import struct

    import numpy as np

    head = struct.pack("!hh", dim, 0)
    vlen = struct.pack("!i", 4 + 4 * dim)
    nfields = struct.pack("!h", 2)
    n = 0
    with db.cursor() as cur, cur.copy(
            f"COPY {table} (hash, vec) FROM STDIN (FORMAT BINARY)") as cp:
        buf = [b"PGCOPY\n\xff\r\n\x00", struct.pack("!ii", 0, 0)]
        for h, v in rows:
            hb = h.encode()
            buf += [nfields, struct.pack("!i", len(hb)), hb, vlen, head,
                    np.asarray(v, dtype=">f4").tobytes()]
            n += 1
            if len(buf) > 6000:
                cp.write(b"".join(buf))
                buf = []
        buf.append(struct.pack("!h", -1))
        cp.write(b"".join(buf))
    return n


def redact_url(url: str) -> str:
    """The URL without its password (for messages and status output)."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)
