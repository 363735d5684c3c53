"""Index benchmark: cold index and no-op re-index of generated memexes.

    .venv/bin/python bench/index.py [--sizes 10000,100000] [--rounds 3]

For each size N it generates N nodes in N/50 files, then (each run in a fresh
subprocess, so peak memory is that run's own) measures, median of ``rounds``:
  - cold index:   a new index database, every file parsed and inserted;
  - no-op index:  the same again with nothing changed;
and two baselines in the same script: reading + hashing every file (the floor of any
indexer that verifies content) and a stat walk (the floor of change detection).
"""

from __future__ import annotations

import argparse
import json
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


def run(mode: str, root: Path, index: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(root), str(index)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    from memex_gen import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None)
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
        cold, noop, hashb, statb, peak = [], [], [], [], []
        for r in range(args.rounds):
            idx = work / f"index-{n}-{r}.sqlite3"
            for suf in ("", "-wal", "-shm"):
                Path(str(idx) + suf).unlink(missing_ok=True)
            statb.append(run("stat", root, idx)["seconds"])
            hashb.append(run("hash", root, idx)["seconds"])
            c = run("index", root, idx)
            cold.append(c["seconds"])
            peak.append(c["peak_mb"])
            assert c["nodes"] == info["nodes"], c
            z = run("index", root, idx)
            assert z["added"] == z["changed"] == 0, z
            noop.append(z["seconds"])
        row = {
            "nodes": n, "files": info["files"], "mb": round(info["bytes"] / 1e6, 1),
            "cold_s": round(statistics.median(cold), 3),
            "noop_s": round(statistics.median(noop), 3),
            "baseline_hash_all_s": round(statistics.median(hashb), 3),
            "baseline_stat_walk_s": round(statistics.median(statb), 3),
            "cold_vs_hash_all": round(statistics.median(cold) / statistics.median(hashb), 1),
            "noop_vs_stat_walk": round(statistics.median(noop) / statistics.median(statb), 1),
            "peak_mb_cold": round(max(peak), 1),
            "runs": {"cold": [round(x, 3) for x in cold], "noop": [round(x, 3) for x in noop]},
        }
        results.append(row)
        print(json.dumps(row), flush=True)
    print("\n| nodes | files | MB | cold index (s) | no-op re-index (s) | read+hash baseline (s) "
          "| stat-walk baseline (s) | cold/hash | no-op/stat | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['nodes']:,} | {r['files']:,} | {r['mb']} | {r['cold_s']} | {r['noop_s']} | "
              f"{r['baseline_hash_all_s']} | {r['baseline_stat_walk_s']} | "
              f"{r['cold_vs_hash_all']}x | {r['noop_vs_stat_walk']}x | {r['peak_mb_cold']} |")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
