"""Dense vectors per passage, for both stores behind one protocol (``VectorIndex``):
content-addressed storage, incremental embedding and cosine top-k.

- ``MatrixVectors`` (SQLite): the vectors are rows of the index file, ranked in process
  over an in-memory matrix (``retrieval.topk``: exact up to 20k rows, then sign bits →
  int8 → exact float32 re-scoring).
- ``PgVectors`` (PostgreSQL): pgvector rows shared by every machine that points at the
  store, one partial HNSW index (cosine) per (model, dim), top-k in the server.

``vector_index`` picks one by the store's dialect; the SQL stays in the stores
(``EmbeddingBlobs``, ``EmbeddingSearch`` in ``memory.store``).

A node is one passage when its text fits the model's window, else several overlapping
ones (``memory.nodes.passages``); a node's dense score is its best passage's, and a hit
says which passage (its line) matched.

Vectors are keyed by (hash of the embedded text, model, dimension): an unchanged node
is never embedded twice, a node moved between files keeps its vector, and a different
model or dimension simply has no vectors yet — never a mixed index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..memory.incremental import Progress
from ..memory.nodes import Embed, embed_node_rows
from ..memory.store import EmbeddingBlobs, EmbeddingRows, EmbeddingSearch, IndexStore
from .topk import RowRanker

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..memory.nodes import Vector

__all__ = ["MatrixVectors", "PgVectors", "VectorIndex", "VectorStatus", "vector_index"]

_Loaded = tuple[tuple[str, str, int], list[str], "npt.NDArray[np.int32]", "Vector"]
"""(signature, node key per row, passage line per row, matrix) of a loaded matrix."""


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


class VectorIndex(Protocol):
    """The vectors of one (model, dim) over the nodes of one index store."""

    model: str
    dim: int

    def status(self) -> VectorStatus: ...
    def passage_count(self) -> int: ...
    def embed_pending(self, embed: Embed, batch: int = 32, progress: Progress | None = None,
                      limit: int | None = None) -> int: ...
    def matrix(self) -> tuple[list[str], Vector]: ...
    def search_passages(self, qvec: npt.ArrayLike, k: int = 10
                        ) -> list[tuple[str, float, int]]: ...
    def search(self, qvec: npt.ArrayLike, k: int = 10) -> list[tuple[str, float]]: ...


def vector_index(store: IndexStore, model: str, dim: int,
                 cache_dir: str | Path | None = None) -> VectorIndex:
    """The vector engine for ``store``'s dialect: pgvector in a PostgreSQL store, a numpy
    matrix over a SQLite store's rows (``cache_dir``: where that matrix is cached)."""
    if store.dialect.name == "postgresql" and isinstance(store, EmbeddingSearch):
        return PgVectors(store, model, dim)
    if isinstance(store, EmbeddingBlobs):
        return MatrixVectors(store, model, dim, cache_dir)
    raise TypeError(f"{type(store).__name__} keeps no passage-vector rows")


class _Vectors:
    """What both engines share: counting and embedding through the store's rows."""

    store: EmbeddingRows
    model: str
    dim: int
    corrupt_dropped = 0

    def status(self) -> VectorStatus:
        # a node is embedded when every one of its passages has a vector
        nodes, embedded = self.store.embedding_counts(self.model, self.dim)
        return VectorStatus(self.model, self.dim, nodes, embedded, nodes - embedded,
                            self.corrupt_dropped)

    def passage_count(self) -> int:
        """Vectors a full search ranks (passages of nodes with one): the cost of passages."""
        return self.store.embedding_passage_count(self.model, self.dim)

    def embed_pending(self, embed: Embed, batch: int = 32, progress: Progress | None = None,
                      limit: int | None = None) -> int:
        """Embed every distinct passage text without a vector; commits batch by batch so
        an interruption keeps what was done.  Returns the number of texts embedded."""

        def put(pairs: list[tuple[str, Vector]]) -> None:
            self.store.embeddings_put(self.model, self.dim, pairs)

        rows = self.store.embedding_pending(self.model, self.dim, limit)
        done = embed_node_rows(rows, embed, self.dim, put, batch, progress)
        self._embedded()
        return done

    def _embedded(self) -> None:
        """After an embedding run (PostgreSQL builds its HNSW index then)."""

    def search(self, qvec: npt.ArrayLike, k: int = 10) -> list[tuple[str, float]]:
        """Top-k nodes by cosine similarity of their best passage."""
        return [(key, score) for key, score, _ in self.search_passages(qvec, k)]

    def search_passages(self, qvec: npt.ArrayLike, k: int = 10
                        ) -> list[tuple[str, float, int]]:
        raise NotImplementedError


class MatrixVectors(_Vectors):
    """SQLite: the vectors' rows in the index file, ranked in process (``RowRanker``)
    over a matrix cached in memory and in ``cache_dir``."""

    def __init__(self, store: EmbeddingBlobs, model: str, dim: int,
                 cache_dir: str | Path | None = None) -> None:
        self.store: EmbeddingBlobs = store
        self.model, self.dim = model, dim
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._mem: _Loaded | None = None
        self._ranker: RowRanker | None = None  # over self._mem's matrix
        self.corrupt_dropped = 0

    # -- searching ---------------------------------------------------------------
    def _signature(self) -> tuple[str, str, int]:
        return (self.store.generation(), self.model, self.dim)

    def _cache_paths(self) -> tuple[Path, Path] | None:
        if self.cache_dir is None:
            return None
        stem = f"vectors-{self.model.replace('/', '_')}-{self.dim}"
        return self.cache_dir / f"{stem}.npy", self.cache_dir / f"{stem}.json"

    def matrix(self) -> tuple[list[str], Vector]:
        """(node key of each row, float32 matrix of unit passage vectors); a node with
        several passages has several rows."""
        keys, _lines, m = self._load()
        return keys, m

    def _load(self) -> tuple[list[str], npt.NDArray[np.int32], Vector]:
        import numpy as np

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
        for key, line, h, blob in self.store.embedding_rows(self.model, self.dim):
            if not isinstance(blob, bytes) or len(blob) != want:
                bad.append(h)
                continue
            keys.append(key)
            lines_l.append(line)
            blobs.append(blob)
        if bad:  # a corrupted row: drop it so the next embedding run redoes it
            self.corrupt_dropped += len(set(bad))
            self.store.embeddings_drop(self.model, self.dim, set(bad))
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

    def search_passages(self, qvec: npt.ArrayLike, k: int = 10
                        ) -> list[tuple[str, float, int]]:
        """Top-k nodes as ``(key, score, line)``: a node's score is its best passage's
        cosine, ``line`` where that passage starts."""
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


class PgVectors(_Vectors):
    """PostgreSQL + pgvector: shared, content-addressed rows and a partial HNSW index
    (cosine) per (model, dim); top-k runs in the server."""

    ef_search = 200
    """HNSW candidate list per query (pgvector's default 40 gave recall@10 0.34 on random
    384-d vectors at 10k; 200 gave 0.80 at ~5 ms: bench/store_compare.py)."""

    def __init__(self, store: EmbeddingSearch, model: str, dim: int) -> None:
        self.store: EmbeddingSearch = store
        self.model, self.dim = model, dim

    def _embedded(self) -> None:
        self.ensure_index()

    def ensure_index(self) -> bool:
        """Create this (model, dim)'s HNSW index if missing; True when created now."""
        return self.store.embedding_index(self.model, self.dim)

    def matrix(self) -> tuple[list[str], Vector]:
        """(node key per passage, float32 matrix) of every passage with a vector."""
        return self.store.embedding_matrix(self.model, self.dim)

    def search_passages(self, qvec: npt.ArrayLike, k: int = 10, exact: bool = False
                        ) -> list[tuple[str, float, int]]:
        """Top-k nodes by their best passage's cosine similarity, with that passage's
        line (approximate through HNSW unless ``exact``)."""
        import numpy as np

        q = np.asarray(qvec, dtype=np.float32).reshape(-1).tolist()
        want = 4 * int(k)  # nodes with several passages take several rows
        rows = self.store.embedding_search(self.model, self.dim, q, want,
                                           max(self.ef_search, min(1000, 2 * want)), exact)
        out: list[tuple[str, float, int]] = []
        seen: set[str] = set()
        for key, s, line in rows:
            if key not in seen and len(out) < k:
                seen.add(key)
                out.append((key, s, line))
        return out
