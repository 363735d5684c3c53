"""Recall speed at scale: first pass p50/p95 over 10,000 indexed sessions plus a
5,000-commit repository (bench/recall_fixtures.py scale mode), with the record index's cold
build and no-op refresh, against a named baseline in the same run: reading every record
without an index (what one pass would cost with no record index at all).

    .venv/bin/python bench/recall_speed.py [--sessions 10000] [--commits 5000] [--rounds 3]
                                           [--corpus DIR] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENCORTEX_NO_PROGRESS", "1")
os.environ["OPENCORTEX_RECALL_DEFAULTS"] = "0"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=5_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="recall-speed-"))
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        os.environ[var] = str(tmp / var.lower())
    out: dict = {}
    corpus = args.corpus
    if corpus is None:
        from recall_fixtures import generate

        corpus = tmp / "corpus"
        t0 = time.perf_counter()
        generate(corpus, distractors=60, sessions=args.sessions, commits=args.commits)
        out["generate_s"] = round(time.perf_counter() - t0, 1)
    cases = [json.loads(x) for x in (corpus / "cases.jsonl").read_text().splitlines() if x]

    from recall_eval import is_target, roots_for

    from opencortex.memex import Memex
    from opencortex.recall.engine import Recall, parse_source
    from opencortex.recall.index import RecordIndex
    from opencortex.recall.sources import SOURCES

    memex = Memex(corpus / "memex", tmp / "index.sqlite3")
    engine = Recall(memex, [parse_source(s) for s in roots_for(corpus)], defaults=False)
    t0 = time.perf_counter()
    s = engine.refresh()
    out["index_cold_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    engine.refresh()
    out["index_noop_s"] = round(time.perf_counter() - t0, 3)
    out["records"] = RecordIndex.for_memex(memex).counts()
    out["files_read"] = s.files_read

    times: list[float] = []
    states: dict[str, int] = {}
    found = 0
    for _ in range(args.rounds):
        for case in cases:
            now = dt.datetime.fromisoformat(case["now"])
            t0 = time.perf_counter()
            rnd = engine.start(case["cue"], invoked=True, now=now)
            times.append(time.perf_counter() - t0)
            states[rnd.state] = states.get(rnd.state, 0) + 1
            members = [m["locator"] for m in (rnd.recognizable or {}).get("members", [])]
            found += rnd.state == "presented" and is_target(members, case)
    out["first_pass"] = {"n": len(times), "p50_s": round(statistics.median(times), 3),
                         "p95_s": round(pct(times, 0.95), 3), "max_s": round(max(times), 3),
                         "states": states, "found_in_first_presented": found}

    # baseline: no record index — read every record once (one pass would need at least this)
    t0 = time.perf_counter()
    n = 0
    for spec in roots_for(corpus):
        root = parse_source(spec)
        if root.kind in SOURCES:
            for p in SOURCES[root.kind].discover([Path(root.path)]):
                n += len(SOURCES[root.kind].read(p))
    out["baseline_read_all_records_s"] = round(time.perf_counter() - t0, 2)
    out["baseline_records_read"] = n
    out["speedup_vs_baseline_p50"] = round(out["baseline_read_all_records_s"] /
                                           out["first_pass"]["p50_s"], 1)
    if args.json:
        print(json.dumps(out, indent=1))
        return
    fp = out["first_pass"]
    print(f"records indexed: {out['records']} (cold {out['index_cold_s']} s, "
          f"no-op refresh {out['index_noop_s']} s)")
    print(f"first pass over {fp['n']} cue runs: p50 {fp['p50_s']} s, p95 {fp['p95_s']} s, "
          f"max {fp['max_s']} s; states {fp['states']}; target in the first presented "
          f"candidate {fp['found_in_first_presented']}/{fp['n']}")
    print(f"baseline (no index, read every record once): {out['baseline_read_all_records_s']} s"
          f" for {n} records → {out['speedup_vs_baseline_p50']}× the p50 pass")


if __name__ == "__main__":
    main()
