"""Recall's record index in the PostgreSQL store (``[recall] index = "store"``): the same
rows and queries as the SQLite record index, with PostgreSQL full text (two ``tsvector``
columns, GIN) for the cue terms and pgvector for the gists' vectors — which land in the
store's shared ``embeddings`` table, so no machine embeds a gist another already did.

By default recall keeps its index in this machine's local SQLite file even when the memex
index is on a shared server: a team store should not hold one person's transcripts. A
person whose own history outgrows a laptop points it at the store instead."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..memory.dialect import POSTGRES
from .index import RecordIndex
from .migrations import RECALL

__all__ = ["PgRecordIndex"]

FTS = "english"  # stemmed like the SQLite index's porter tokenizer



class PgRecordIndex(RecordIndex):
    """The record index in a ``PgStore``'s schema (``recall.migrations.RECALL``)."""

    dialect = POSTGRES

    def __init__(self, store: Any) -> None:
        self.store = store
        super().__init__(store.db)

    def _migrate(self) -> None:
        self.store.ensure_migrations(RECALL)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        # the store's write transaction: its advisory lock serialises writers of the schema
        self.store.begin()
        try:
            yield
        except BaseException:
            self.store.rollback()
            raise
        self.store.commit()

    def _fts_put(self, rid: int, title: str, person: str, other: str, paths: str) -> None:
        clean = [x.replace("\x00", "") for x in (title, person, paths, other)]
        self.db.execute(
            "UPDATE rec_records SET fts_strong = setweight(to_tsvector(%s::regconfig, %s), "
            "'A') || to_tsvector(%s::regconfig, %s || ' ' || %s), fts_other = "
            "to_tsvector(%s::regconfig, %s) WHERE id = %s",
            (FTS, clean[0], FTS, clean[1], clean[2], FTS, clean[3], rid))

    def _fts_drop(self, ids: Sequence[int]) -> None:
        return None  # the vectors live in the rows, which go with them

    def _fts_ids(self, strong: bool, term: str) -> set[int]:
        words = re.findall(r"\w+", term)
        if not words:
            return set()
        col = "fts_strong" if strong else "fts_other"
        return {r[0] for r in self.db.execute(
            f"SELECT id FROM rec_records WHERE {col} @@ phraseto_tsquery(%s::regconfig, %s)",
            (FTS, " ".join(words)))}

    def _put_vectors(self, model: str, dim: int, rows: list[tuple[str, Any]]) -> None:
        self.store.embeddings_put(model, dim, rows)

    def dense(self, query: Any, scope: set[int], model: str, dim: int, k: int = 50
              ) -> list[tuple[int, float]]:
        """Exact cosine over the records in scope, in the server (a scope is at most the
        records of some roots; an HNSW scan could not filter by it), each record by its
        best view as ``RecordIndex.dense``."""
        import numpy as np

        if not scope:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        qtxt = "[" + ",".join(map(repr, q.tolist())) + "]"
        typ = f"vector({int(dim)})"
        ids = sorted(scope)
        # a record scores by its best view: its gist or a chunk of its body (rec_views)
        rows = self.db.execute(
            f"SELECT x.id, max(x.s) AS s FROM (SELECT r.id, 1 - (e.vec::{typ} <=> "
            f"%s::{typ}) AS s FROM rec_records r JOIN embeddings e ON e.hash = r.embed_hash "
            "AND e.model = %s AND e.dim = %s WHERE r.id = ANY(%s) UNION ALL SELECT "
            f"v.record_id, 1 - (e.vec::{typ} <=> %s::{typ}) FROM rec_views v JOIN "
            "embeddings e ON e.hash = v.hash AND e.model = %s AND e.dim = %s WHERE "
            "v.record_id = ANY(%s)) x GROUP BY x.id ORDER BY s DESC LIMIT %s",
            (qtxt, model, int(dim), ids, qtxt, model, int(dim), ids, int(k))).fetchall()
        return [(int(i), float(s)) for i, s in rows]
