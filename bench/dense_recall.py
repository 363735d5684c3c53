"""How often the three-stage dense top-k (``retrieval.topk``) finds the exact top-k, on
real vectors: every MiniLM passage vector of the public dev sets' indexes pooled into one
matrix, queried by the sets' own queries.

    .venv/bin/python bench/dense_recall.py [--cache DIR] [--fractions 0.02,0.05,0.1]

Needs the indexes ``bench/retrieval_public.py`` builds (same ``--cache``).  The ranker is
forced onto its approximate path (it is exact below 20k rows); recall@K = the share of
the exact top-K rows found in its top-K.  The pool is smaller than 100k, so each
fraction is also shown as the candidates it gives.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))
from retrieval_public import cache_root, load_set  # noqa: E402

SETS = ("scifact", "locomo", "faq")


def main() -> None:
    import numpy as np

    from opencortex.embed import get_embedder
    from opencortex.retrieval.topk import RowRanker

    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=None)
    ap.add_argument("--fractions", default="0.02,0.05,0.1")
    ap.add_argument("--ks", default="10,50")
    args = ap.parse_args()
    cache = cache_root(args.cache)
    model = get_embedder("minilm")
    vecs, texts = [], []
    for name in SETS:
        db = sqlite3.connect(cache / name / "index.sqlite3")
        vecs += [np.frombuffer(b, "<f4") for (b,) in db.execute(
            "SELECT vec FROM embeddings WHERE model = ? AND dim = ?", (model.name, model.dim))]
        texts += [q["query"] for q in load_set(name, cache)[1]]
    m = np.ascontiguousarray(np.stack(vecs), dtype=np.float32)
    qv = np.asarray(model.embed(texts), dtype=np.float32)
    ks = [int(x) for x in args.ks.split(",")]
    exact = RowRanker(m, exact_rows=len(m))
    truth = {k: [set(exact.top(q, k)[0].tolist()) for q in qv] for k in ks}
    out = []
    for f in (float(x) for x in args.fractions.split(",")):
        ranker = RowRanker(m, exact_rows=0, fraction=f, min_candidates=0)
        t = time.perf_counter()
        got = {k: [set(ranker.top(q, k)[0].tolist()) for q in qv] for k in ks}
        ms = (time.perf_counter() - t) / (len(qv) * len(ks)) * 1000
        row = {"fraction": f, "candidates": int(len(m) * f), "ms_per_query": round(ms, 2)}
        for k in ks:
            rec = [len(a & b) / k for a, b in zip(got[k], truth[k], strict=True)]
            row[f"recall@{k}"] = round(float(np.mean(rec)), 4)
            row[f"queries_all_found@{k}"] = round(float(np.mean([r == 1 for r in rec])), 4)
        out.append(row)
        print(json.dumps(row), flush=True)
    print(f"\n{len(m):,} passage vectors, {len(qv):,} queries\n")
    cols = [c for c in out[0] if c != "fraction"]
    print("| fraction | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for r in out:
        print(f"| {r['fraction']} | " + " | ".join(str(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
