"""Index benchmark: cold index and no-op re-index of generated memexes.

    .venv/bin/python bench/index.py [--sizes 10000,100000] [--rounds 3]
    .venv/bin/python bench/index.py --sizes 20000 --base ../wt-base/src [--head src]

For each size N it generates N nodes in N/50 files, then (each run in a fresh
subprocess, so peak memory is that run's own) measures, median of ``rounds``:
  - cold index:   a new index database, every file parsed and inserted;
  - no-op index:  the same again with nothing changed;
and two baselines in the same script: reading + hashing every file (the floor of any
indexer that verifies content) and a stat walk (the floor of change detection).

With ``--base``: a second checkout's ``src`` is measured over the same generated memex,
the two sides alternating within each round (who goes first alternates too), so machine
load hits both alike; prints both sides' medians and head/base ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, resource, sys, time, hashlib, os
from pathlib import Path
mode, root, index = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if mode == "index":
    from opencortex.memory.sqlite_store import SqliteStore
    from opencortex.memory.incremental import sync
    store = SqliteStore(index)
    s = sync(root, store)
    extra = {"nodes": s.nodes, "files": s.files, "added": s.added, "changed": s.changed}
elif mode == "hash":
    from opencortex.memory.incremental import iter_org_files
    from opencortex.memory.nodes import content_hash
    n = 0
    for rel, st in iter_org_files(Path(root)):
        content_hash(open(os.path.join(root, rel), "rb").read()); n += 1
    extra = {"files": n}
else:  # stat walk
    from opencortex.memory.incremental import iter_org_files
    extra = {"files": sum(1 for _ in iter_org_files(Path(root)))}
dt = time.perf_counter() - t0
kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
         resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": dt, "peak_mb": kb / 1024, **extra}))
"""


def run(mode: str, root: Path, index: Path, src: str | None = None) -> dict:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src  # that checkout's package, ahead of the installed one
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(root), str(index)],
                         check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def _median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def main() -> None:
    from memex_gen import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--base", default=None, help="a checkout's src: compare against it")
    ap.add_argument("--head", default=None, help="the src measured as head (default: the "
                    "installed package)")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="oc-bench-"))
    results = []
    for n in [int(x) for x in args.sizes.split(",")]:
        root = work / f"memex-{n}"
        if root.exists():
            shutil.rmtree(root)
        t = time.perf_counter()
        info = generate(root, n)
        print(f"N={n}: generated {info['files']} files, {info['bytes'] / 1e6:.1f} MB "
              f"in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        sides = {"head": args.head, **({"base": args.base} if args.base else {})}
        cold: dict[str, list[float]] = {k: [] for k in sides}
        noop: dict[str, list[float]] = {k: [] for k in sides}
        hashb, statb, peak = [], [], []
        for r in range(args.rounds):
            statb.append(run("stat", root, work / "unused")["seconds"])
            hashb.append(run("hash", root, work / "unused")["seconds"])
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            for side in order:
                idx = work / f"index-{n}-{r}-{side}.sqlite3"
                for suf in ("", "-wal", "-shm"):
                    Path(str(idx) + suf).unlink(missing_ok=True)
                c = run("index", root, idx, sides[side])
                cold[side].append(c["seconds"])
                if side == "head":
                    peak.append(c["peak_mb"])
                assert c["nodes"] == info["nodes"], (side, c)
                z = run("index", root, idx, sides[side])
                assert z["added"] == z["changed"] == 0, (side, z)
                noop[side].append(z["seconds"])
        row = {
            "nodes": n, "files": info["files"], "mb": round(info["bytes"] / 1e6, 1),
            "cold_s": _median(cold["head"]),
            "noop_s": _median(noop["head"]),
            "baseline_hash_all_s": _median(hashb),
            "baseline_stat_walk_s": _median(statb),
            "cold_vs_hash_all": round(_median(cold["head"]) / _median(hashb), 1),
            "noop_vs_stat_walk": round(_median(noop["head"]) / _median(statb), 1),
            "peak_mb_cold": round(max(peak), 1),
            "runs": {"cold": [round(x, 3) for x in cold["head"]],
                     "noop": [round(x, 3) for x in noop["head"]]},
        }
        if args.base:
            row["base"] = {"cold_s": _median(cold["base"]), "noop_s": _median(noop["base"]),
                           "runs": {"cold": [round(x, 3) for x in cold["base"]],
                                    "noop": [round(x, 3) for x in noop["base"]]}}
            row["head_over_base"] = {
                "cold": round(_median(cold["head"]) / _median(cold["base"]), 2),
                "noop": round(_median(noop["head"]) / _median(noop["base"]), 2)}
        results.append(row)
        print(json.dumps(row), flush=True)
    print("\n| nodes | files | MB | cold index (s) | no-op re-index (s) | read+hash baseline (s) "
          "| stat-walk baseline (s) | cold/hash | no-op/stat | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['nodes']:,} | {r['files']:,} | {r['mb']} | {r['cold_s']} | {r['noop_s']} | "
              f"{r['baseline_hash_all_s']} | {r['baseline_stat_walk_s']} | "
              f"{r['cold_vs_hash_all']}x | {r['noop_vs_stat_walk']}x | {r['peak_mb_cold']} |")
    if args.base:
        print(f"\nbase {args.base}; load average {os.getloadavg()[0]:.2f}")
        print("| nodes | cold head / base (s) | ratio | no-op head / base (s) | ratio |")
        print("|---|---|---|---|---|")
        for r in results:
            b, q = r["base"], r["head_over_base"]
            print(f"| {r['nodes']:,} | {r['cold_s']} / {b['cold_s']} | {q['cold']} | "
                  f"{r['noop_s']} / {b['noop_s']} | {q['noop']} |")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
