"""SQLite vs PostgreSQL index store, side by side on the same generated memex.

    .venv/bin/python bench/store_compare.py [--sizes 100000] [--queries 100] [--pg URL]

For each size N: generate N nodes (bench/memex_gen.py), then for each store:
  cold index      sync of the whole memex into an empty store (parse + insert + links)
  no-op re-index  a second sync with nothing changed (stat every file, compare)
  bm25            keyword top-10 (SQLite: tantivy; PostgreSQL: tsvector + ts_rank_cd)
  vector top-10   query vector given (SQLite: exact numpy matrix product; PostgreSQL:
                  pgvector HNSW, cosine, ef_search 200 — and pgvector's default 40) and
                  recall@10 against exact search
  vectors load    storing one vector per node (PostgreSQL: + building the HNSW index)

Vectors are random unit vectors (one per node text, seeded by its hash, so both stores
hold identical vectors); queries are random unit vectors too, the hardest case for an
approximate index.  Without ``--pg`` a local PostgreSQL 16 + pgvector (pgserver wheel)
is started with default durability (fsync on) and stopped at the end.

Measured here (one run each; 4-core container shared with other work, so ±30% noise):

    100k nodes, random vectors         sqlite          postgresql
    cold index (s)                     8.6             22.2
    keyword build (s)                  4.8 (tantivy)   0 (tsvector written with nodes)
    no-op re-index (s)                 0.03            0.08
    bm25 top-10 p50 / p95 (ms)         2.3 / 10.4      60.7 / 166.4
    vectors load (s)                   13.0            182.3 (incl. HNSW build; 144 after
                                                       binary COPY + parallel build, a
                                                       busier run: sqlite 20.3 there)
    vector top-10 p50 / p95 (ms)       18.2 / 31.8     15.2 / 20.6  (ef_search 200)
    recall@10 vs exact                 1.0 (exact)     0.22 (ef 200), 0.07 (ef 40)

    5k nodes, real MiniLM vectors, keyword queries encoded (``--vectors real``)
    vector top-10 p50 / p95 (ms)       7.6 / 7.7       4.7 / 9.0
    recall@10 vs exact                 1.0             0.985 (ef 200), 0.886 (ef 40)

    20k nodes, random vectors, --pg (one server), 3 runs interleaved with 801060f
    (medians, after the engines moved to retrieval/; 801060f in brackets; a shared
    2-core machine: single runs of the same tree differed up to 15x on the SQLite vectors)
    cold index (s)                     2.25 [2.19]     4.57 [4.86]
    bm25 top-10 p50 (ms)               0.44 [0.59]     93.6 [114.3]
    vector top-10 p50 (ms)             1.56 [11.4]     11.5 [13.1]  (ef_search 200)
    recall@10 vs exact                 1.0             0.593 [0.603]

Random 384-d vectors are the worst case for HNSW (every point is nearly equidistant);
on real embeddings recall is 0.985.  PostgreSQL's ranked full text costs a tsvector read
per matching row (no block-max WAND as in tantivy): it is the slow part at 100k.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.2f} / {pct(xs, 95) * 1000:.2f}"


def text_vecs(texts: list[str]):
    """A unit vector per text, a pure function of the text (same in both stores)."""
    import numpy as np

    out = np.empty((len(texts), 384), dtype="float32")
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
        out[i] = np.random.default_rng(seed).standard_normal(384)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def clustered_vecs(texts: list[str], clusters: int = 1024, spread: float = 0.6):
    """Unit vectors around topic centroids, as real sentence embeddings are (a pure
    function of the text): uniform random vectors are the worst case for any graph index,
    clustered ones are closer to what a memex's notes look like."""
    import numpy as np

    cents = np.random.default_rng(12345).standard_normal((clusters, 384)).astype("float32")
    cents /= np.linalg.norm(cents, axis=1, keepdims=True)
    out = np.empty((len(texts), 384), dtype="float32")
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
        r = np.random.default_rng(seed)
        noise = r.standard_normal(384).astype("float32")
        out[i] = cents[seed % clusters] + spread * noise / np.linalg.norm(noise)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


class ClusteredEmbedder:
    name, dim = "bench-clustered", 384

    def embed(self, texts: list[str], batch_size: int = 32):
        return clustered_vecs(texts)


class RandomEmbedder:
    name, dim = "bench-random", 384

    def embed(self, texts: list[str], batch_size: int = 32):
        return text_vecs(texts)


class CachedMiniLM:
    """The real MiniLM model; each text embedded once for both stores (``--vectors real``)."""

    name, dim = "all-MiniLM-L6-v2", 384

    def __init__(self) -> None:
        import numpy as np

        from opencortex.embed import get_embedder

        self.model, self.cache, self.np = get_embedder("minilm"), {}, np

    def embed(self, texts: list[str], batch_size: int = 32):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for i in range(0, len(todo), 256):
            for t, v in zip(todo[i:i + 256], self.model.embed(todo[i:i + 256]), strict=True):
                self.cache[t] = v
        return self.np.stack([self.cache[t] for t in texts]).astype("float32")


EMBEDDER: object = RandomEmbedder()


def run_store(label: str, m, queries: list[str], qvecs, exact: dict | None) -> dict:
    from opencortex.retrieval.hybrid import Retriever
    from opencortex.retrieval.vectors import PgVectors

    row: dict = {"store": label}
    t = time.perf_counter()
    s = m.sync()
    row["cold_index_s"] = round(time.perf_counter() - t, 2)
    row["nodes"] = s.nodes
    r = Retriever(m, embedder=EMBEDDER)
    t = time.perf_counter()
    r.keyword.sync(m.store)
    row["keyword_build_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    again = m.sync()
    row["noop_reindex_s"] = round(time.perf_counter() - t, 3)
    assert again.changed == again.added == again.removed == 0
    t = time.perf_counter()
    r.vectors.embed_pending(EMBEDDER.embed, batch=4096)
    r.vectors.search(qvecs[0], 10)  # SQLite: builds the matrix; PostgreSQL: warms the index
    row["vectors_load_s"] = round(time.perf_counter() - t, 1)
    bm, vt = [], []
    found: dict[int, list[str]] = {}
    for i, (q, qv) in enumerate(zip(queries, qvecs, strict=True)):
        t0 = time.perf_counter()
        r.keyword.search(q, 10)
        t1 = time.perf_counter()
        hits = r.vectors.search(qv, 10)
        t2 = time.perf_counter()
        bm.append(t1 - t0)
        vt.append(t2 - t1)
        found[i] = [k for k, _ in hits]
    row["bm25_p50_p95_ms"] = ms(bm)
    row["vector_top10_p50_p95_ms"] = ms(vt)
    if exact is None:  # this store's search is exact: it is the reference
        row["recall_at_10"] = 1.0
    else:
        rec = [len(set(found[i]) & set(exact[i])) / max(1, len(exact[i])) for i in found]
        row["recall_at_10"] = round(statistics.mean(rec), 4)
    native = r.vectors
    if isinstance(native, PgVectors) and exact is not None:  # pgvector's default list
        native.ef_search = 40
        vt40, rec40 = [], []
        for i, qv in enumerate(qvecs):
            t0 = time.perf_counter()
            got = [k for k, _ in native.search(qv, 10)]
            vt40.append(time.perf_counter() - t0)
            rec40.append(len(set(got) & set(exact[i])) / max(1, len(exact[i])))
        row["ef40_vector_p50_p95_ms"] = ms(vt40)
        row["ef40_recall_at_10"] = round(statistics.mean(rec40), 4)
    row["_found"] = found
    return row


def main() -> None:
    import numpy as np
    from memex_gen import WORDS, generate

    from opencortex.memex import Memex
    from opencortex.memory import pg_local

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--pg", default=None, help="postgresql:// URL (default: start a local one)")
    ap.add_argument("--out", default=str(HERE / "out" / "store_compare.json"))
    ap.add_argument("--vectors", choices=["random", "clustered", "real"], default="random",
                    help="random unit vectors and queries; clustered (around 1024 topic "
                         "centroids, queries near them); or MiniLM on the node texts with "
                         "the keyword queries encoded as query vectors (slow: keep N small)")
    args = ap.parse_args()
    global EMBEDDER
    pgdata = None
    url = args.pg
    if url is None:
        pgdata = Path(tempfile.mkdtemp(prefix="oc-pg-bench-"))
        url = pg_local.start(pgdata)
    rng = random.Random(7)
    content = [w for w in WORDS if len(w) > 3]
    queries = [" ".join(rng.sample(content, rng.randint(2, 4))) for _ in range(args.queries)]
    vr = np.random.default_rng(1)
    qvecs = vr.standard_normal((args.queries, 384)).astype("float32")
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    if args.vectors == "real":
        EMBEDDER = CachedMiniLM()
        qvecs = EMBEDDER.embed(queries)
    elif args.vectors == "clustered":
        EMBEDDER = ClusteredEmbedder()
        qvecs = clustered_vecs([f"query {q}" for q in queries])
    results = []
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            work = Path(tempfile.mkdtemp(prefix=f"oc-sc-{n}-"))
            generate(work / "m", n)
            with Memex(work / "m", work / "i.sqlite3") as m:
                lite = run_store("sqlite", m, queries, qvecs, None)
            schema = f"bench_{uuid.uuid4().hex[:8]}"
            m = Memex(work / "m")
            m.settings.store_url, m.settings.store_schema = url, schema
            with m:
                pg = run_store("postgresql", m, queries, qvecs, lite["_found"])
                import psycopg

                with psycopg.connect(url, autocommit=True) as c:
                    c.execute(f'DROP SCHEMA "{schema}" CASCADE')
            for row in (lite, pg):
                row.pop("_found")
                row["size"] = n
                row["vectors"] = args.vectors
                results.append(row)
                print(json.dumps(row), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if pgdata is not None:
            pg_local.stop(pgdata)
            shutil.rmtree(pgdata, ignore_errors=True)
    keys = ["nodes", "cold_index_s", "keyword_build_s", "noop_reindex_s",
            "bm25_p50_p95_ms", "vectors_load_s", "vector_top10_p50_p95_ms", "recall_at_10",
            "ef40_vector_p50_p95_ms", "ef40_recall_at_10"]
    print()
    for n in sorted({r["size"] for r in results}):
        a, b = [r for r in results if r["size"] == n]
        print(f"| {n} nodes | sqlite | postgresql |\n|---|---|---|")
        for k in keys:
            print(f"| {k} | {a.get(k, '-')} | {b.get(k, '-')} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
