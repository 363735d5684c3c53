"""The best rows of a matrix of unit vectors for a query vector, fast at 100k+ rows.

A float32 matrix of 100k × 384 is 154 MB: one brute-force pass over it is memory-bound
(~25 ms on a busy two-core machine, more when other processes share the memory bus).
Up to ``EXACT_ROWS`` rows every row is scored exactly.  Above, three stages keep the
memory a query touches small:

1. every row by the Hamming distance of its sign bits (one bit per dimension, after
   subtracting the mean vector): 48 bytes a row, ~1 ms at 100k;
2. the nearest ``CANDIDATE_FRACTION`` of rows (at least ``CANDIDATE_MIN``) by an int8 copy
   of the vectors (per-row scale; a cosine off by ~0.002 at most);
3. the best of those by their exact float32 cosine — the scores returned are exact.

Measured on real MiniLM vectors (``bench/dense_recall.py``: the public dev sets' 17,556
passages pooled, their 1,587 queries, approximate path forced): with 5% candidates
(877 rows there) recall of the exact top-10 is 0.9992 and of the exact top-50 0.9925; at
100k rows 5% is 5,000 candidates, so the tail searched is deeper still.

The exact path's product is BLAS's matrix-vector product (``np.dot``, threaded, as
before the three stages existed); the stages' products are ``np.vecdot`` (one dot product a
row, on the calling thread).  On a 20k × 384 matrix, from a worker thread of this 2-core
machine, median / p95 ms:

    machine            BLAS (2 threads)   vecdot (1 thread)
    idle               0.69 / 0.79        1.30 / 1.43
    one core busy      0.70 / 6.86        1.34 / 5.53
    both cores busy    4.80 / 8.58        1.41 / 5.37

BLAS wins whenever a core is free, and stays the exact path's; the stages' products are
small (5% of the rows) and follow a Hamming pass, where a thread waiting for a core
cost tens of ms under load.  (``einsum``'s own loop, used before, took 2.9 ms out of
cache: it does not prefetch.  A worker thread cannot limit BLAS to one thread:
``openblas_set_num_threads`` from it does not reach its products.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["CANDIDATE_FRACTION", "CANDIDATE_MIN", "EXACT_ROWS", "RowRanker"]

EXACT_ROWS = 20_000
"""Up to this many rows (30 MB at 384 dimensions) every query scores every row."""
CANDIDATE_FRACTION = 0.05
CANDIDATE_MIN = 2_000
RESCORE_MIN = 256
"""Rows re-scored exactly: the int8 stage's best ``max(2 × wanted, RESCORE_MIN)``."""


class RowRanker:
    """Top rows of one float32 matrix ``m`` (unit rows); the quantized copies are built
    on the first query that needs them and live as long as the matrix."""

    def __init__(self, m: Any, exact_rows: int | None = None,
                 fraction: float = CANDIDATE_FRACTION, min_candidates: int = CANDIDATE_MIN
                 ) -> None:
        self.m = m
        self.exact_rows = EXACT_ROWS if exact_rows is None else exact_rows
        self.fraction, self.min_candidates = fraction, min_candidates
        self._coarse: tuple[Any, Any, Any, Any] | None = None  # (mean, bits, int8, scale)
        self._buf: Any = None

    def __len__(self) -> int:
        return len(self.m)

    def top(self, q: Any, want: int) -> tuple[Any, Any]:
        """(row indices, exact scores) of the ``want`` best rows, best first."""
        import numpy as np

        n = len(self.m)
        want = min(want, n)
        if want <= 0:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        q = np.ascontiguousarray(q, dtype=np.float32).reshape(-1)
        cands = max(self.min_candidates, int(n * self.fraction), want * 8)
        if n <= self.exact_rows or cands >= n:
            return self._exact(q, want)
        mean, bits, m8, scale = self._quantized()
        qbits = _sign_bits(q[None, :] > mean)[0]
        dist = _hamming(bits, qbits)
        # every row within the distance that reaches ``cands`` rows (ties included)
        cut = int(np.searchsorted(np.cumsum(np.bincount(dist)), cands))
        rows = np.flatnonzero(dist <= cut)
        approx = np.vecdot(m8[rows].astype(np.float32), q) * scale[rows]
        keep = min(len(rows), max(2 * want, RESCORE_MIN))
        if keep < len(rows):
            rows = rows[np.argpartition(-approx, keep - 1)[:keep]]
        scores = np.vecdot(self.m[rows], q)
        order = np.argsort(-scores, kind="stable")[:want]
        return rows[order], scores[order]

    def _exact(self, q: Any, want: int) -> tuple[Any, Any]:
        import numpy as np

        n = len(self.m)
        buf = self._buf
        if buf is None or buf.shape[0] != n:  # reused: no allocation per query
            buf = self._buf = np.empty(n, dtype=np.float32)
        np.dot(self.m, q, out=buf)
        top = np.argpartition(buf, n - want)[n - want:] if want < n else np.arange(n)
        top = top[np.argsort(-buf[top], kind="stable")]
        return top, buf[top].copy()

    def _quantized(self) -> tuple[Any, Any, Any, Any]:
        import numpy as np

        if self._coarse is None:
            m = self.m
            mean = m.mean(axis=0, dtype=np.float64).astype(np.float32)
            bits = np.ascontiguousarray(_sign_bits(m > mean).T)  # (words, rows)
            peak = np.abs(m).max(axis=1)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            m8 = np.rint(m / scale[:, None]).astype(np.int8)
            self._coarse = (mean, bits, m8, scale)
        return self._coarse


def _sign_bits(positive: Any) -> Any:
    """Rows of booleans as rows of uint64 words (zero-padded to whole words)."""
    import numpy as np

    packed = np.packbits(positive, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _hamming(bits: Any, qbits: Any) -> Any:
    """Bits differing between every row (``bits``: words × rows) and the query's."""
    import numpy as np

    n = bits.shape[1]
    word = np.empty(n, dtype=np.uint64)
    count = np.empty(n, dtype=np.uint8)
    dist = np.zeros(n, dtype=np.uint16)
    for j in range(bits.shape[0]):  # word by word: the working set stays in cache
        np.bitwise_xor(bits[j], qbits[j], out=word)
        np.bitwise_count(word, out=count)
        np.add(dist, count, out=dist)
    return dist
