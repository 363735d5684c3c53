"""Query latency of scan, BM25, dense and hybrid search on generated memexes.

    .venv/bin/python bench/retrieval_speed.py [--sizes 10000,100000] [--big 1000000]

For each size N: generate N nodes (bench/memex_gen.py), index them, and give every
node a unit vector.  Vectors are random (the cost of a brute-force search does not depend
on their values; embedding 100k notes would take half an hour here); queries are encoded
by the real MiniLM model, timed separately.  Reported: p50/p95 over the query set of
  scan      opencortex scan (two ripgrep passes + mapping) vs `rg -F` run directly
  bm25      tantivy top-10
  dense     matrix top-10 (query vector given) and encode+search
  hybrid    the whole Retriever.search (sparse + dense + fusion + link expansion + fetch)
``--big`` adds one more size for sparse and dense only (no scan/hybrid).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def fmt(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(xs) * 1000, 3),
            "p95_ms": round(pct(xs, 95) * 1000, 3)}


class RealEncoder:
    """The real MiniLM encoder, presented under the name of the random vectors."""

    def __init__(self, model: object) -> None:
        self.model, self.name, self.dim = model, "bench-random", 384

    def embed(self, texts: list[str], batch_size: int = 32):
        return self.model.embed(texts, batch_size)


def main() -> None:
    import numpy as np
    from memex_gen import WORDS, generate

    from opencortex.embed import get_embedder
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import Retriever
    from opencortex.retrieval.scan import find_rg, scan

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    rng = random.Random(7)
    content = [w for w in WORDS if len(w) > 3]
    queries = [" ".join(rng.sample(content, rng.randint(2, 4))) for _ in range(args.queries)]
    scan_words = [rng.choice(content) for _ in range(min(20, args.queries))]
    model = get_embedder("minilm")
    model.embed(["warm up"])
    rows = []
    sizes = [int(x) for x in args.sizes.split(",")] + ([args.big] if args.big else [])
    for n in sizes:
        big = n == args.big and n not in [int(x) for x in args.sizes.split(",")]
        work = Path(tempfile.mkdtemp(prefix=f"oc-rs-{n}-"))
        t = time.perf_counter()
        generate(work / "m", n)
        m = Memex(work / "m", work / "i.sqlite3")
        s = m.sync()
        t_index = time.perf_counter() - t
        enc = RealEncoder(model)
        r = Retriever(m, embedder=enc)
        t = time.perf_counter()
        r.keyword.sync(m.store)
        t_kw = time.perf_counter() - t
        vrng = np.random.default_rng(0)

        def rand_vecs(texts: list[str], _r=vrng):
            v = _r.standard_normal((len(texts), 384)).astype("float32")
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        t = time.perf_counter()
        r.vectors.embed_pending(rand_vecs, batch=4096)
        r.vectors.matrix()
        t_vec = time.perf_counter() - t
        rows_of = getattr(r.vectors, "passage_count", None)  # passages: rows a search ranks
        row: dict = {"nodes": s.nodes, "vector_rows": rows_of() if rows_of else s.nodes,
                     "index_s": round(t_index, 1),
                     "keyword_build_s": round(t_kw, 1), "vectors_load_s": round(t_vec, 1)}
        bm, dn, enc_t, hy = [], [], [], []
        qvecs = [model.embed([q])[0] for q in queries]
        for q, qv in zip(queries, qvecs, strict=True):
            t0 = time.perf_counter()
            r.keyword.search(q, 10)
            t1 = time.perf_counter()
            r.vectors.search(qv, 10)
            t2 = time.perf_counter()
            model.embed([q])
            t3 = time.perf_counter()
            bm.append(t1 - t0)
            dn.append(t2 - t1)
            enc_t.append(t3 - t2)
            if not big:
                t4 = time.perf_counter()
                r.search(q, "hybrid", 10)
                hy.append(time.perf_counter() - t4)
        row["bm25"] = fmt(bm)
        row["dense_search"] = fmt(dn)
        row["dense_encode_plus_search"] = fmt([a + b for a, b in zip(dn, enc_t, strict=True)])
        if not big:
            row["hybrid"] = fmt(hy)
            rg = find_rg()
            sc, direct = [], []
            for w in scan_words:
                t0 = time.perf_counter()
                subprocess.run([rg, "-F", "--no-config", "-e", w, str(work / "m")],
                               capture_output=True)
                t1 = time.perf_counter()
                scan(work / "m", w)
                t2 = time.perf_counter()
                direct.append(t1 - t0)
                sc.append(t2 - t1)
            row["scan"] = fmt(sc)
            row["rg_direct"] = fmt(direct)
            row["scan_vs_rg"] = round(statistics.median(sc) / statistics.median(direct), 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
        m.close()
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    print("\n| nodes | vector rows | BM25 p50/p95 ms | dense search p50/p95 ms | dense encode+search p50 ms "
          "| hybrid p50/p95 ms | scan p50 ms | rg direct p50 ms | scan/rg |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r_ in rows:
        h = r_.get("hybrid", {})
        print(f"| {r_['nodes']:,} | {r_['vector_rows']:,} | {r_['bm25']['p50_ms']} / {r_['bm25']['p95_ms']} | "
              f"{r_['dense_search']['p50_ms']} / {r_['dense_search']['p95_ms']} | "
              f"{r_['dense_encode_plus_search']['p50_ms']} | "
              f"{h.get('p50_ms', '-')} / {h.get('p95_ms', '-')} | "
              f"{r_.get('scan', {}).get('p50_ms', '-')} | "
              f"{r_.get('rg_direct', {}).get('p50_ms', '-')} | {r_.get('scan_vs_rg', '-')} |")


if __name__ == "__main__":
    main()
