"""The fast paths give the answers of the slow ones: dense top-k in three stages (sign
bits, int8, exact) against brute force; the flat keyword query against the parser's
grouped one; keyword hits resolved through row ids, checked by a hash of the key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opencortex.memex import Memex
from opencortex.retrieval import topk
from opencortex.retrieval.hybrid import Retriever
from opencortex.retrieval.keyword import TantivyEngine
from opencortex.retrieval.topk import RowRanker

from .conftest import HashingEmbedder


def _clustered(n: int, dim: int, seed: int = 0, spread: float = 0.6) -> np.ndarray:
    """Unit rows around 40 centres (real embeddings cluster; uniform noise does not)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    noise = spread * rng.standard_normal((n, dim)).astype(np.float32)
    m = centres[rng.integers(0, 40, n)] + noise
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def _brute(m: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return np.argsort(-(m @ q), kind="stable")[:k].tolist()


@pytest.mark.parametrize("dim", [384, 100])  # 100: bits padded to whole words
def test_three_stage_topk_scores_exactly_and_finds_the_exact_top_rows(dim: int) -> None:
    m = _clustered(3000, dim)
    rng = np.random.default_rng(1)
    qs = m[rng.integers(0, len(m), 20)] + 0.3 * rng.standard_normal((20, dim)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    every = RowRanker(m, exact_rows=0, fraction=1.0, min_candidates=0)
    for q in qs:  # every row a candidate: the int8 and exact stages lose nothing
        rows, scores = every.top(q, 10)
        assert rows.tolist() == _brute(m, q, 10)
        np.testing.assert_allclose(scores, m[rows] @ q, rtol=1e-5, atol=1e-6)  # exact
    tight = _clustered(3000, dim, spread=0.3)
    some = RowRanker(tight, exact_rows=0, fraction=0.1, min_candidates=0)
    found = 0
    near = tight[:20] + 0.1 * rng.standard_normal((20, dim)).astype(np.float32)
    for q in near / np.linalg.norm(near, axis=1, keepdims=True):
        rows, scores = some.top(q, 10)
        assert len(rows) == 10 and np.all(np.diff(scores) <= 0)  # best first
        found += len(set(rows.tolist()) & set(_brute(tight, q, 10)))
    # candidates by sign bits are approximate: real vectors in bench/dense_recall.py
    assert found / 200 >= 0.95


def test_exact_path_below_the_threshold_and_edge_sizes() -> None:
    m = _clustered(500, 64)
    q = m[3]
    rows, _ = RowRanker(m).top(q, 5)  # 500 rows: exact
    assert rows.tolist() == _brute(m, q, 5) and rows[0] == 3
    assert len(RowRanker(m, exact_rows=0).top(q, 900)[0]) == 500  # more than there are
    assert len(RowRanker(m).top(q, 0)[0]) == 0
    zero = np.zeros((3, 8), dtype=np.float32)  # zero rows (dropped vectors) do not divide by 0
    assert len(RowRanker(zero, exact_rows=0, min_candidates=0).top(np.ones(8), 2)[0]) == 2


@pytest.mark.sqlite_only("the in-memory matrix path; PostgreSQL ranks in pgvector")
def test_dense_search_above_the_threshold_matches_brute_force(tmp_path: Path,
                                                              monkeypatch) -> None:
    root = tmp_path / "m"
    root.mkdir()
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    rng = np.random.default_rng(2)
    (root / "n.org").write_text("".join(
        f"* Note {i}\n{' '.join(rng.choice(words, 6))}\n" for i in range(400)))
    with Memex(root, index=tmp_path / "i.sqlite3") as m:
        m.sync()
        emb = HashingEmbedder(dim=32)
        r = Retriever(m, embedder=emb)
        r.vectors.embed_pending(emb.embed)
        exact = r.vectors.search_passages(emb.embed(["alpha beta"])[0], 10)
        monkeypatch.setattr(topk, "EXACT_ROWS", 0)
        monkeypatch.setattr(topk, "CANDIDATE_MIN", 0)
        r2 = Retriever(m, embedder=emb)
        approx = r2.vectors.search_passages(emb.embed(["alpha beta"])[0], 10)
    assert r2.vectors._ranker is not None and r2.vectors._ranker.exact_rows == 0
    # same scores (ties may order differently: compare the score lists and the best)
    assert [round(s, 5) for _, s, _ in approx] == [round(s, 5) for _, s, _ in exact]


@pytest.fixture
def kw_mx(tmp_path: Path):
    root = tmp_path / "m"
    root.mkdir()
    (root / "a.org").write_text(
        "* Caching layers :perf:\nwrite-through caches and running notes\n"
        "** Running the cache\nwarm caches first, then run\n"
        "* Sourdough\nbread hydration and caching of starter\n"
        "* Parent heading\n** Child of parent\nplain words\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    yield m
    m.close()


@pytest.mark.sqlite_only("the tantivy engine; PostgreSQL searches its own full text")
def test_flat_query_scores_equal_the_grouped_parser_query(kw_mx: Memex) -> None:
    r = Retriever(kw_mx, embedder=HashingEmbedder())
    r.keyword.sync(kw_mx.store)
    e = r.keyword
    assert isinstance(e, TantivyEngine)
    index = e._index
    searcher = index.searcher()
    for query in ("caching run", "parent cache", "hydration", '"warm caches" bread',
                  "caching caching run", "run running"):  # a repeated literal counts once
        grouped = index.parse_query_lenient(query, list(e.boosts), field_boosts=e.boosts)[0]
        want = sorted(round(s, 4) for s, _ in searcher.search(grouped, 10).hits)
        got = sorted(round(h.score, 4) for h in e.search(query, 10))
        assert got == want and got, query


@pytest.mark.sqlite_only("the tantivy engine; PostgreSQL searches its own full text")
def test_keyword_hits_resolve_row_ids_checked_by_key_hash(kw_mx: Memex,
                                                         tmp_path: Path) -> None:
    r = Retriever(kw_mx, embedder=HashingEmbedder())
    r.keyword.sync(kw_mx.store)
    keys = [h.key for h in r.keyword.search("caching", 10)]
    known = {k for (k,) in kw_mx.store.db.execute("SELECT key FROM nodes")}
    assert keys and set(keys) <= known
    # an engine without a store answers from the stored keys: the same list
    bare = TantivyEngine(r.keyword.path)
    assert [h.key for h in bare.search("caching", 10)] == keys
    # row ids renumbered under the index (or reused by other nodes): the key hashes do
    # not match, so the stored keys answer — the same list, never another node's key
    db = kw_mx.store.db
    db.execute("UPDATE nodes SET id = id + 1000")
    assert [h.key for h in r.keyword.search("caching", 10)] == keys
    db.execute("UPDATE nodes SET key = 'x' || key")  # ids point at other keys now
    db.execute("UPDATE nodes SET id = id - 1000")
    assert [h.key for h in r.keyword.search("caching", 10)] == keys

