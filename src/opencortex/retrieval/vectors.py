"""Dense vectors per passage: content-addressed storage, incremental embedding, and
cosine top-k over an in-memory matrix (``retrieval.topk``: exact up to 20k rows, then
sign bits → int8 → exact float32 re-scoring).

A node is one passage when its text fits the model's window, else several overlapping
ones (``memory.nodes.passages``); a node's dense score is its best passage's, and a hit
says which passage (its line) matched.

Vectors are keyed by (hash of the embedded text, model, dimension): an unchanged node
is never embedded twice, a node moved between files keeps its vector, and a different
model or dimension simply has no vectors yet — never a mixed index.  A store with vectors
of its own (PostgreSQL: pgvector + HNSW, ``PgStore.vectors``) keeps and searches them in
the server; ``VectorIndex`` then only delegates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memory.nodes import embed_node_rows
from ..memory.store import EmbeddingRows, IndexStore
from .topk import RowRanker

__all__ = ["VectorIndex", "VectorStatus"]


@dataclass(slots=True)
class VectorStatus:
    model: str
    dim: int
    nodes: int
    embedded: int
    pending: int
    corrupt_dropped: int = 0

    @property
    def ready(self) -> bool:
        return self.nodes > 0 and self.pending == 0


class VectorIndex:
    """The vectors of one (model, dim) over the nodes of one index store."""

    def __init__(self, store: IndexStore, model: str, dim: int,
                 cache_dir: str | Path | None = None) -> None:
        self.store, self.model, self.dim = store, model, dim
        # a store with vectors of its own (PostgreSQL + pgvector) stores and searches them
        # in the server; the SQLite path below stays a numpy matrix product
        native = getattr(store, "vectors", None)
        self._native = native(model, dim) if native is not None else None
        self._local = store if isinstance(store, EmbeddingRows) else None
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._mem: tuple[Any, list[str], Any, Any] | None = None  # (sig, keys, lines, matrix)
        self._ranker: RowRanker | None = None  # over self._mem's matrix
        self.corrupt_dropped = 0

    def _rows(self) -> EmbeddingRows:
        """The store's passage-vector rows (the in-process engine's storage)."""
        if self._local is None:
            raise TypeError(f"{type(self.store).__name__} keeps no passage-vector rows and "
                            "has no vectors of its own")
        return self._local

    # -- embedding -------------------------------------------------------------
    def _pending_rows(self, limit: int | None = None) -> list[tuple]:
        return self._rows().embedding_pending(self.model, self.dim, limit)

    def status(self) -> VectorStatus:
        if self._native is not None:
            nodes, embedded = self._native.counts()
            return VectorStatus(self.model, self.dim, nodes, embedded, nodes - embedded)
        # a node is embedded when every one of its passages has a vector
        nodes, embedded = self._rows().embedding_counts(self.model, self.dim)
        return VectorStatus(self.model, self.dim, nodes, embedded, nodes - embedded,
                            self.corrupt_dropped)

    def passage_count(self) -> int:
        """Vectors a full search ranks (passages of nodes with one): the cost of passages."""
        if self._native is not None:
            return self._native.passage_count()
        return self._rows().embedding_passage_count(self.model, self.dim)

    def embed_pending(self, embed: Callable[[list[str]], Any], batch: int = 32,
                      progress: Callable[[int, int], None] | None = None,
                      limit: int | None = None) -> int:
        """Embed every distinct node text without a vector; commits batch by batch so an
        interruption keeps what was done.  Returns the number of texts embedded."""
        if self._native is not None:
            return self._native.embed_pending(embed, batch=batch, progress=progress,
                                              limit=limit)

        def put(pairs: list[tuple[str, Any]]) -> None:
            self._rows().embeddings_put(self.model, self.dim, pairs)

        return embed_node_rows(self._pending_rows(limit), embed, self.dim, put, batch,
                               progress)

    # -- searching ---------------------------------------------------------------
    def _signature(self) -> tuple:
        return (self.store.generation(), self.model, self.dim)

    def _cache_paths(self) -> tuple[Path, Path] | None:
        if self.cache_dir is None:
            return None
        stem = f"vectors-{self.model.replace('/', '_')}-{self.dim}"
        return self.cache_dir / f"{stem}.npy", self.cache_dir / f"{stem}.json"

    def matrix(self) -> tuple[list[str], Any]:
        """(node key of each row, float32 matrix of unit passage vectors); a node with
        several passages has several rows (``lines()`` says where each starts)."""
        keys, _lines, m = self._load()
        return keys, m

    def _load(self) -> tuple[list[str], Any, Any]:
        import numpy as np

        if self._native is not None:
            keys, m = self._native.matrix()
            return keys, np.zeros(len(keys), dtype=np.int32), m
        sig = self._signature()
        if self._mem is not None and self._mem[0] == sig:
            return self._mem[1], self._mem[2], self._mem[3]
        paths = self._cache_paths()
        if paths and paths[0].exists() and paths[1].exists():
            try:
                meta = json.loads(paths[1].read_text())
                if tuple(meta["signature"]) == sig and "lines" in meta:
                    m = np.load(paths[0])  # into memory: searches must not page-fault
                    lines = np.asarray(meta["lines"], dtype=np.int32)
                    self._mem = (sig, meta["keys"], lines, m)
                    return meta["keys"], lines, m
            except (OSError, ValueError, KeyError):
                pass
        keys = []
        lines_l: list[int] = []
        blobs: list[bytes] = []
        bad: list[str] = []
        want = self.dim * 4
        for key, line, h, blob in self._rows().embedding_rows(self.model, self.dim):
            if not isinstance(blob, bytes) or len(blob) != want:
                bad.append(h)
                continue
            keys.append(key)
            lines_l.append(line)
            blobs.append(blob)
        if bad:  # a corrupted row: drop it so the next embedding run redoes it
            self.corrupt_dropped += len(set(bad))
            self._rows().embeddings_drop(self.model, self.dim, set(bad))
            sig = self._signature()
        m = (np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(keys), self.dim)
             if keys else np.zeros((0, self.dim), dtype="<f4"))
        if not np.all(np.isfinite(m)):
            m = np.nan_to_num(m)
        lines = np.asarray(lines_l, dtype=np.int32)
        if paths:
            try:
                paths[0].parent.mkdir(parents=True, exist_ok=True)
                np.save(paths[0], m)
                paths[1].write_text(json.dumps({"signature": sig, "keys": keys,
                                                "lines": lines_l}))
            except OSError:
                pass
        self._mem = (sig, keys, lines, m)
        return keys, lines, m

    def search_passages(self, qvec: Any, k: int = 10) -> list[tuple[str, float, int]]:
        """Top-k nodes as ``(key, score, line)``: a node's score is its best passage's
        cosine, ``line`` where that passage starts."""
        if self._native is not None:
            return self._native.search_passages(qvec, k)
        keys, lines, m = self._load()
        n = len(keys)
        if not n:
            return []
        ranker = self._ranker
        if ranker is None or ranker.m is not m:  # a new matrix: new quantized copies
            ranker = self._ranker = RowRanker(m)
        want = min(n, k * 4)
        while True:  # rows of one node are several: take more rows until k nodes
            rows, scores = ranker.top(qvec, want)
            out: list[tuple[str, float, int]] = []
            seen: set[str] = set()
            for i, s in zip(rows.tolist(), scores.tolist(), strict=True):
                key = keys[i]
                if key not in seen:
                    seen.add(key)
                    out.append((key, s, int(lines[i])))
                    if len(out) == k:
                        return out
            if want >= n:
                return out
            want = min(n, want * 4)

    def search(self, qvec: Any, k: int = 10) -> list[tuple[str, float]]:
        return [(key, score) for key, score, _ in self.search_passages(qvec, k)]
