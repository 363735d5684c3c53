"""Query latency of BM25, dense, hybrid search and scan on generated memexes.

    .venv/bin/python bench/retrieval_speed.py [--sizes 10000,100000] [--big 1000000]
                                              [--base ../other-checkout] [--queries 60]

For each size N: generate N nodes (bench/memex_gen.py), index them, and give every
passage a unit vector.  Vectors are random (a search's cost does not depend on their
values; embedding 100k notes would take half an hour here); queries are encoded by the
real MiniLM model.  Reported: p50/p95 over the query set of
  bm25      keyword engine top-10 (tantivy)
  dense     vector top-10, query vector given
  encode    MiniLM encoding of the query alone
  hybrid    the whole Retriever.search (encode + sparse + dense + fusion + fetch)
  scan      opencortex scan (two ripgrep passes + mapping) vs `rg -F` run directly

``--base DIR[,DIR…]`` measures other checkouts (``git worktree add ../base <commit>``) in
the same run: each checkout's code runs in its own worker process over the same memex,
and every query is timed on each in turn (alternating who goes first) — on a shared machine
only ratios and CPU times are worth reading.  The load average is printed with the table.
``--big`` adds one more size for bm25 and dense only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPS = ("bm25", "dense", "encode", "hybrid")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def fmt(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(xs) * 1000, 2),
            "p95_ms": round(pct(xs, 95) * 1000, 2)}


def queries(n: int) -> tuple[list[str], list[str]]:
    sys.path.insert(0, str(HERE))
    from memex_gen import WORDS

    rng = random.Random(7)
    content = [w for w in WORDS if len(w) > 3]
    qs = [" ".join(rng.sample(content, rng.randint(2, 4))) for _ in range(n)]
    return qs, [rng.choice(content) for _ in range(min(20, n))]


# -- the worker: one checkout's code, driven over stdin/stdout -----------------------------
def worker(memex_dir: str, index: str, nq: int) -> None:
    """Index ``memex_dir`` with the code on ``sys.path``, then time what stdin asks."""
    import numpy as np

    from opencortex.embed import get_embedder
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import Retriever
    from opencortex.retrieval.scan import scan

    class RealEncoder:  # the real MiniLM under the random vectors' model name
        def __init__(self, model: object) -> None:
            self.model, self.name, self.dim = model, "bench-random", 384

        def embed(self, texts: list[str], batch_size: int = 32):
            return self.model.embed(texts, batch_size)

    model = get_embedder("minilm")
    model.embed(["warm up"])
    t = time.perf_counter()
    m = Memex(memex_dir, index)
    s = m.sync()
    t_index = time.perf_counter() - t
    r = Retriever(m, embedder=RealEncoder(model))
    t = time.perf_counter()
    r.keyword.sync(m.store)
    t_kw = time.perf_counter() - t
    vrng = np.random.default_rng(0)

    def rand_vecs(texts: list[str]):
        v = vrng.standard_normal((len(texts), 384)).astype("float32")
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    t = time.perf_counter()
    r.vectors.embed_pending(rand_vecs, batch=4096)
    r.vectors.matrix()
    t_vec = time.perf_counter() - t
    rows_of = getattr(r.vectors, "passage_count", None)
    qs, _ = queries(nq)
    qv = [model.embed([q])[0] for q in qs]
    r.keyword.search(qs[0], 10)  # first-query costs (searcher, quantized copies) off the clock
    r.vectors.search(qv[0], 10)
    r.search(qs[0], "hybrid", 10)
    ops = {"bm25": lambda i: r.keyword.search(qs[i], 10),
           "dense": lambda i: r.vectors.search(qv[i], 10),
           "encode": lambda i: model.embed([qs[i]]),
           "hybrid": lambda i: r.search(qs[i], "hybrid", 10),
           "scan": lambda w: scan(memex_dir, w)}
    print(json.dumps({"nodes": s.nodes, "vector_rows": rows_of() if rows_of else s.nodes,
                      "index_s": round(t_index, 1), "keyword_build_s": round(t_kw, 1),
                      "vectors_load_s": round(t_vec, 1)}), flush=True)
    for line in sys.stdin:
        op, arg = json.loads(line)
        t, c = time.perf_counter(), time.process_time()
        ops[op](arg)
        print(json.dumps([time.perf_counter() - t, time.process_time() - c]), flush=True)
    m.close()


class Worker:
    def __init__(self, name: str, src: Path, memex_dir: Path, index: Path, nq: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(src)}
        self.name = name
        self.p = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(memex_dir), str(index), str(nq)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self.p.stdout is not None
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit(f"{name} worker failed to start")
        self.info = json.loads(line)

    def time(self, op: str, arg: object) -> tuple[float, float]:
        """(wall seconds, CPU seconds of the worker's every thread) of one call."""
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(json.dumps([op, arg]) + "\n")
        self.p.stdin.flush()
        wall, cpu = json.loads(self.p.stdout.readline())
        return float(wall), float(cpu)

    def close(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()
        self.p.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2, help="passes over the query set")
    ap.add_argument("--base", default=None,
                    help="other checkouts to measure alongside (comma-separated paths)")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], args.worker[1], int(args.worker[2]))
    sys.path.insert(0, str(REPO / "src"))
    sys.path.insert(0, str(HERE))
    from memex_gen import generate

    from opencortex.retrieval.scan import find_rg

    checkouts = [("head", REPO / "src")]
    for b in (args.base or "").split(","):
        if b:
            checkouts.append((Path(b).resolve().name, Path(b).resolve() / "src"))
    qs, scan_words = queries(args.queries)
    small = [int(x) for x in args.sizes.split(",") if x]
    sizes = small + ([args.big] if args.big and args.big not in small else [])
    rows = []
    for n in sizes:
        work = Path(tempfile.mkdtemp(prefix=f"oc-rs-{n}-"))
        try:
            generate(work / "m", n)
            workers = [Worker(name, src, work / "m", work / f"{name}.sqlite3", args.queries)
                       for name, src in checkouts]
            ops = OPS if n in small else ("bm25", "dense", "encode")
            times: dict[tuple[str, str], list[float]] = {}
            cpu: dict[tuple[str, str], list[float]] = {}
            for rnd in range(args.rounds):
                for i in range(len(qs)):
                    for op in ops:  # alternate which checkout goes first
                        order = workers if (i + rnd) % 2 == 0 else workers[::-1]
                        for w in order:
                            wall, c = w.time(op, i)
                            times.setdefault((w.name, op), []).append(wall)
                            cpu.setdefault((w.name, op), []).append(c)
            scan_t: dict[str, list[float]] = {}
            if n in small:
                rg = find_rg()
                for w in scan_words:
                    t0 = time.perf_counter()
                    subprocess.run([rg, "-F", "--no-config", "-e", w, str(work / "m")],
                                   capture_output=True)
                    scan_t.setdefault("rg_direct", []).append(time.perf_counter() - t0)
                    scan_t.setdefault("scan", []).append(workers[0].time("scan", w)[0])
            for w in workers:
                w.close()
            for w in workers:
                row = {"checkout": w.name, **w.info,
                       **{op: fmt(times[(w.name, op)]) for op in ops},
                       "cpu_p50_ms": {op: round(statistics.median(cpu[(w.name, op)]) * 1000, 2)
                                      for op in ops}}
                if w is workers[0] and scan_t:
                    row["scan"], row["rg_direct"] = fmt(scan_t["scan"]), fmt(scan_t["rg_direct"])
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print_table(rows, os.getloadavg())


def print_table(rows: list[dict], load: tuple[float, float, float]) -> None:
    def cell(r: dict, op: str) -> str:
        return f"{r[op]['p50_ms']} / {r[op]['p95_ms']}" if op in r else "-"

    print(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          f" ({os.cpu_count()} CPUs)")
    print("\nWall time, p50 / p95 ms (CPU p50 ms: the process's CPU time, every thread — on "
          "a busy machine the steadier figure)\n")
    print("| nodes | checkout | vector rows | BM25 | dense | encode | hybrid "
          "| CPU BM25 / dense / encode / hybrid | scan p50 | rg direct p50 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["cpu_p50_ms"]
        print(f"| {r['nodes']:,} | {r['checkout']} | {r['vector_rows']:,} | {cell(r, 'bm25')} | "
              f"{cell(r, 'dense')} | {cell(r, 'encode')} | {cell(r, 'hybrid')} | "
              + " / ".join(str(c.get(op, "-")) for op in OPS) + " | "
              f"{r.get('scan', {}).get('p50_ms', '-')} | "
              f"{r.get('rg_direct', {}).get('p50_ms', '-')} |")
    others = sorted({r["checkout"] for r in rows} - {"head"})
    if others:
        print("\n| nodes | head ÷ | BM25 wall / CPU | dense wall / CPU | hybrid wall / CPU |")
        print("|---|---|---|---|---|")
        by = {(r["nodes"], r["checkout"]): r for r in rows}
        for r in rows:
            if r["checkout"] != "head":
                continue
            for name in others:
                b = by.get((r["nodes"], name))
                if b is None:
                    continue
                cells = []
                for op in ("bm25", "dense", "hybrid"):
                    if op in r and op in b:
                        cells.append(f"{r[op]['p50_ms'] / b[op]['p50_ms']:.2f} / "
                                     f"{r['cpu_p50_ms'][op] / max(b['cpu_p50_ms'][op], 1e-3):.2f}")
                    else:
                        cells.append("-")
                print(f"| {r['nodes']:,} | {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
