"""Retrieval quality on real questions: ripgrep-only vs BM25 vs dense vs hybrid.

    .venv/bin/python bench/retrieval_eval.py [--memex DIR] [--queries FILE] [--index PATH]

Memex: ../shared/corpus/org/files (178 real Org files).  Queries: ../shared/eval/
retrieval-dev.jsonl (Org FAQ questions; the relevant nodes are the manual sections the
answers link to).  Metrics at 10: MRR, Recall, nDCG (binary relevance).  The naive
baseline ranks headlines by how many of their lines match any query word (ripgrep).
The index (with its vectors) is kept under bench/out/ so reruns don't re-embed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
K = 10


def metrics(ranked: list[tuple[str, int]], relevant: set[tuple[str, int]]) -> dict[str, float]:
    ranked = ranked[:K]
    rr = next((1.0 / i for i, x in enumerate(ranked, 1) if x in relevant), 0.0)
    found = sum(1 for x in ranked if x in relevant)
    dcg = sum(1.0 / math.log2(i + 1) for i, x in enumerate(ranked, 1) if x in relevant)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), K) + 1))
    return {"mrr": rr, "recall": found / len(relevant), "ndcg": dcg / idcg if idcg else 0.0}


def ripgrep_baseline(root: Path, query: str) -> list[tuple[str, int]]:
    """Headlines ranked by the number of their lines matching any query word."""
    from opencortex.retrieval.keyword import query_terms
    from opencortex.retrieval.scan import scan

    words, phrases, prefixes = query_terms(query)
    terms = [re.escape(w) for w in [*words, *phrases, *prefixes]]
    if not terms:
        return []
    hits = scan(root, "(?i)" + "|".join(terms), regex=True)
    hits = [h for h in hits if h.line is not None]
    hits.sort(key=lambda h: -len(h.matches))
    return [(h.file, h.line) for h in hits]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memex", default=str(SHARED / "corpus" / "org" / "files"))
    ap.add_argument("--queries", default=str(SHARED / "eval" / "retrieval-dev.jsonl"))
    ap.add_argument("--index", default=str(REPO / "bench" / "out" / "retrieval-eval.sqlite3"))
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import Retriever

    qs = [json.loads(x) for x in open(args.queries, encoding="utf-8") if x.strip()]
    Path(args.index).parent.mkdir(parents=True, exist_ok=True)
    r = Retriever(Memex(args.memex, args.index))
    t = time.perf_counter()
    info = r.sync(embed=True)
    print(f"indexed {info['nodes']} nodes; embedded {info.get('embedded')} new texts "
          f"in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    methods = {
        "ripgrep (lines matched)": lambda q: ripgrep_baseline(Path(args.memex), q),
        "BM25": lambda q: [(h.file, h.line) for h in r.search(q, "sparse", K).hits],
        "dense": lambda q: [(h.file, h.line) for h in r.search(q, "dense", K).hits],
        "hybrid": lambda q: [(h.file, h.line) for h in r.search(q, "hybrid", K).hits],
    }
    table = {}
    for name, fn in methods.items():
        per = [metrics(fn(q["query"]), {(x["file"], x["line"]) for x in q["relevant"]})
               for q in qs]
        table[name] = {m: sum(p[m] for p in per) / len(per) for m in ("mrr", "recall", "ndcg")}
    print(f"\n{len(qs)} queries, memex {args.memex}\n")
    print("| method | MRR@10 | Recall@10 | nDCG@10 |\n|---|---|---|---|")
    for name, row in table.items():
        print(f"| {name} | {row['mrr']:.3f} | {row['recall']:.3f} | {row['ndcg']:.3f} |")
    print(json.dumps(table))


if __name__ == "__main__":
    main()
