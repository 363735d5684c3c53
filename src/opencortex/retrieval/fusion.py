"""Fusing a sparse (BM25) and a dense (cosine) ranking into one.

Plain reciprocal rank fusion gives both lists the same say, so the weaker one drags the
stronger down (LoCoMo: hybrid 0.23 below sparse).  Here each list's scores are divided
by that list's best score, a node a list did not return counts as that list's lowest
score (it was at best just below the cut), and the two are mixed with a weight:

    fused = w · s/s_max + (1 − w) · d/d_max

A list whose scores are flat (no opinion) then adds nearly the same to every node and
leaves the other's order alone; a list with a clear winner moves it up.  The weight was
chosen by 5-fold cross-validation over the queries of three public dev sets at once
(SciFact, LoCoMo, Org FAQ: ``bench/retrieval_tune.py``) — one fusion for every kind of
data, not a per-set switch.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SPARSE_WEIGHT", "fuse", "rrf"]

SPARSE_WEIGHT = 0.4
"""w above: the 5-fold cross-validation's choice with the shipped BM25 boosts (held-out
SciFact nDCG@10 0.742, LoCoMo R@5 0.855, FAQ nDCG@10 0.462)."""


def _scaled(ranked: Sequence[tuple[str, float]], norm: str = "max"
            ) -> tuple[dict[str, float], float]:
    """Scores divided by the best (``(map, value of an absent node)``); a list with a
    negative lowest score (cosines can be) is shifted so its lowest is 0 first.
    ``norm="minmax"`` shifts every list so its lowest is 0 (compared in the tuning)."""
    if not ranked:
        return {}, 0.0
    vals = [s for _, s in ranked]
    top, low = max(vals), min(vals)
    shift = -low if (low < 0 or norm == "minmax") else 0.0
    top += shift
    if top <= 0:
        return {k: 0.0 for k, _ in ranked}, 0.0
    out: dict[str, float] = {}
    for k, s in ranked:
        if k not in out:
            out[k] = (s + shift) / top
    return out, (low + shift) / top


def fuse(sparse: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]],
         weight: float = SPARSE_WEIGHT, norm: str = "max") -> list[tuple[str, float]]:
    """Both rankings as one, best first (ties: sparse order, then dense order)."""
    if not dense or not sparse:
        return list(sparse or dense)
    s, s_absent = _scaled(sparse, norm)
    d, d_absent = _scaled(dense, norm)
    order = {k: i for i, k in enumerate([*s, *(k for k in d if k not in s)])}
    fused = {k: weight * s.get(k, s_absent) + (1 - weight) * d.get(k, d_absent)
             for k in order}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def rrf(lists: Sequence[Sequence[tuple[str, float]]], weights: Sequence[float],
        k: float = 60.0) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion (kept for comparison in the tuning bench)."""
    out: dict[str, float] = {}
    for ranked, w in zip(lists, weights, strict=True):
        for rank, (key, _) in enumerate(ranked, 1):
            out[key] = out.get(key, 0.0) + w / (k + rank)
    return sorted(out.items(), key=lambda kv: -kv[1])
