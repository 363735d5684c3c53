"""What embedding a memex costs: texts embedded, vector rows, seconds (MiniLM, fresh index).

    .venv/bin/python bench/embed_example.py [--memex examples/memex] [--rounds 3]

Each round indexes the memex into a new temporary index and embeds everything; the median
seconds are reported (the machine is shared: one round is noise).  Run it with another
checkout's ``src`` first on ``PYTHONPATH`` to compare before/after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    from opencortex.embed import get_embedder
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import Retriever

    ap = argparse.ArgumentParser()
    ap.add_argument("--memex", default=str(REPO / "examples" / "memex"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    model = get_embedder("minilm")
    model.embed(["warm up"])
    secs, out = [], {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            m = Memex(args.memex, Path(tmp) / "i.sqlite3")
            r = Retriever(m, embedder=model)
            m.sync()
            t = time.perf_counter()
            n = r.vectors.embed_pending(model.embed)
            secs.append(time.perf_counter() - t)
            rows = getattr(r.vectors, "passage_count", None)
            out = {"nodes": r.vectors.status().nodes, "texts_embedded": n,
                   "vector_rows": rows() if rows else n}
            m.close()
    out["embed_s_median"] = round(statistics.median(secs), 2)
    out["embed_s_all"] = [round(s, 2) for s in secs]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
