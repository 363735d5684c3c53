"""Store health and moving an index between stores (``opencortex store …``).

``copy`` moves everything an index holds that is not cheaply re-derived from the files:
the nodes and links (so search works at once), the write journal (undo history) and the
embeddings (hours of model time on a large memex).  Row ids are kept so links and
journal references stay valid.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import OpenCortexError
from .pg_store import _NODE_COPY_COLS, PgStore, copy_vectors
from .sqlite_store import SqliteStore

__all__ = ["copy_store", "store_status"]

_TABLES = {
    "files": "id, path, mtime_ns, size, hash, title, filetags, todo_keywords, done_keywords, "
             "errors, node_count, indexed_at",
    "nodes": _NODE_COPY_COLS,
    "links": "source_id, file_id, type, path, description, search, target_key",
    "passages": "node_id, file_id, seq, line, hash, body_line",
    "journal": "id, at, op, description, path, before_hash, after_hash, before_data, "
               "before_mode, undone_at, batch",
}


def store_status(store: Any) -> dict[str, Any]:
    """Backend, location, migration level and row counts of an open store."""
    return store.status()


def copy_store(src: SqliteStore | PgStore, dst: PgStore, replace: bool = False
               ) -> dict[str, Any]:
    """Copy every row of ``src`` into the PostgreSQL store ``dst`` in one transaction.

    ``dst`` must be empty unless ``replace`` (then its files, nodes, links, journal and
    embeddings are emptied first, inside the same transaction)."""
    import numpy as np

    if not isinstance(dst, PgStore):
        raise OpenCortexError("store copy writes into a PostgreSQL store (--to postgresql://…)")
    t0 = time.perf_counter()
    have = dst.counts()
    jn = dst.db.execute("SELECT count(*) FROM journal").fetchone()[0]
    if (have["files"] or jn) and not replace:
        raise OpenCortexError(
            f"{dst.path} already holds {have['files']} files and {jn} journal entries: "
            "pass --replace to overwrite it")
    out: dict[str, int] = {}
    db = dst.db
    dst.begin()
    try:
        if replace:
            db.execute("TRUNCATE files, nodes, links, passages, journal, embeddings")
        for table, cols in _TABLES.items():
            n = 0
            with db.cursor() as cur, cur.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
                for row in src.db.execute(f"SELECT {cols} FROM {table}"):
                    cp.write_row(tuple(_pgval(v) for v in row))
                    n += 1
            out[table] = n
        # vectors: staged per (model, dim) through pgvector's binary format
        is_sqlite = isinstance(src, SqliteStore)
        db.execute("CREATE TEMP TABLE IF NOT EXISTS _emb_copy (hash text, vec vector) "
                   "ON COMMIT DROP")
        n = 0
        for model, dim in src.db.execute(
                "SELECT DISTINCT model, dim FROM embeddings ORDER BY model, dim").fetchall():
            if is_sqlite:
                rows = ((h, np.frombuffer(v, "<f4")) for h, v in src.db.execute(
                    "SELECT hash, vec FROM embeddings WHERE model = ? AND dim = ?",
                    (model, dim)) if isinstance(v, bytes) and len(v) == 4 * dim)
            else:
                rows = ((h, np.array(json.loads(v), dtype="<f4")) for h, v in src.db.execute(
                    "SELECT hash, vec::text FROM embeddings WHERE model = %s AND dim = %s",
                    (model, dim)))
            # (a corrupted SQLite row is skipped: it will simply be embedded again)
            db.execute("TRUNCATE _emb_copy")
            n += copy_vectors(db, "_emb_copy", list(rows), dim)
            db.execute("INSERT INTO embeddings (hash, model, dim, vec) SELECT hash, %s, %s, "
                       "vec FROM _emb_copy", (model, dim))
        out["embeddings"] = n
        for table in ("files", "journal"):
            db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                       f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)")
        dst.bump_generation()
        dst.commit()
    except BaseException:
        dst.rollback()
        raise
    models = db.execute("SELECT DISTINCT model, dim FROM embeddings").fetchall()
    for model, dim in models:
        dst.embedding_index(model, dim)
    return {"from": src.path, "to": dst.path, "rows": out,
            "seconds": round(time.perf_counter() - t0, 3)}


def _pgval(v: Any) -> Any:
    if isinstance(v, str) and "\x00" in v:
        return v.replace("\x00", "")
    return v
