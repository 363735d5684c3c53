"""Recall quality over a generated past-work corpus (bench/recall_fixtures.py): for each
vague cue, is the target record a member of the first presented candidate, and if not,
after the person adds one more cue?

    .venv/bin/python bench/recall_eval.py [--distractors 60] [--seed 0] [--corpus DIR]
                                          [--json] [--verbose]

Baseline, in the same run: plain keyword retrieval over the same record index — every
content word of the cue, no cue reading (no time window, no whole, no grouping), top-1
record (and top-1 again with the added cue's words).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENCORTEX_NO_PROGRESS", "1")
os.environ["OPENCORTEX_RECALL_DEFAULTS"] = "0"


def roots_for(corpus: Path) -> list[str]:
    specs = []
    for kind, sub in (("claude-code", "claude"), ("codex", "codex"), ("gemini", "gemini"),
                      ("aider", "aider"), ("git", "repo")):
        if (corpus / sub).exists():
            specs.append(f"{kind}:{corpus / sub}")
    return specs


def is_target(member_locators: list[str], case: dict) -> bool:
    needle = case["target"]["locator_contains"]
    return any(needle in loc for loc in member_locators)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, help="an existing corpus (else one is generated)")
    ap.add_argument("--distractors", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="recall-eval-"))
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        os.environ[var] = str(tmp / var.lower())
    corpus = args.corpus
    if corpus is None:
        from recall_fixtures import generate

        corpus = tmp / "corpus"
        t0 = time.perf_counter()
        generate(corpus, seed=args.seed, distractors=args.distractors)
        print(f"corpus generated in {time.perf_counter() - t0:.1f} s: {corpus}",
              file=sys.stderr)
    cases = [json.loads(line) for line in (corpus / "cases.jsonl").read_text().splitlines()
             if line.strip()]

    from opencortex.memex import Memex
    from opencortex.recall.cue import terms_of
    from opencortex.recall.engine import Recall, parse_source
    from opencortex.recall.index import RecordIndex

    memex = Memex(corpus / "memex", tmp / "index.sqlite3")
    engine = Recall(memex, [parse_source(s) for s in roots_for(corpus)], defaults=False)
    t0 = time.perf_counter()
    summary = engine.refresh()
    index_s = time.perf_counter() - t0
    index = RecordIndex.for_memex(memex)
    scope, _, _ = index.scope(engine.base_roots, None)

    rows = []
    for case in cases:
        now = dt.datetime.fromisoformat(case["now"])
        t1 = time.perf_counter()
        first = engine.start(case["cue"], invoked=True, now=now)
        first_s = time.perf_counter() - t1
        mem1 = [m["locator"] for m in (first.recognizable or {}).get("members", [])]
        found1 = first.state == "presented" and is_target(mem1, case)
        found2 = found1
        second = None
        if not found1 and first.state in ("presented", "asked", "offered"):
            second = engine.reply(first.session, case["added_cue"])
            mem2 = [m["locator"] for m in (second.recognizable or {}).get("members", [])]
            found2 = second.state == "presented" and is_target(mem2, case)
        b1 = index.search(terms_of(case["cue"]), scope, limit=1)
        b2 = index.search(terms_of(case["cue"] + " " + case["added_cue"]), scope, limit=1)
        base1 = bool(b1) and is_target([b1[0].record.locator], case)
        base2 = base1 or (bool(b2) and is_target([b2[0].record.locator], case))
        rows.append({"id": case["id"], "source": case["target"]["source"],
                     "whole": case["whole"], "first_state": first.state,
                     "second_state": second.state if second else None,
                     "found_first": found1, "found_after_added_cue": found2,
                     "baseline_first": base1, "baseline_added": base2,
                     "first_pass_s": round(first_s, 3),
                     "presented": (first.recognizable or {}).get("members", [{}])[0].get(
                         "locator") if first.recognizable else None})
        if args.verbose:
            print(f"{case['id']:>14} {case['target']['source']:>11} {first.state:>10} "
                  f"{'✓' if found1 else '·'} {'✓' if found2 else '·'}  "
                  f"base {'✓' if base1 else '·'}{'✓' if base2 else '·'}  {case['cue']}",
                  file=sys.stderr)
    n = len(rows)
    agg = {
        "cases": n,
        "found_in_first_presented": sum(r["found_first"] for r in rows),
        "found_after_one_added_cue": sum(r["found_after_added_cue"] for r in rows),
        "baseline_keyword_top1": sum(r["baseline_first"] for r in rows),
        "baseline_keyword_top1_with_added_cue": sum(r["baseline_added"] for r in rows),
        "first_states": dict(Counter(r["first_state"] for r in rows)),
        "by_source": {s: f"{sum(r['found_after_added_cue'] for r in rows if r['source'] == s)}"
                         f"/{sum(1 for r in rows if r['source'] == s)}"
                      for s in sorted({r["source"] for r in rows})},
        "record_index": {**index.counts(), "build_s": round(index_s, 2),
                         "files_read": summary.files_read},
        "first_pass_median_s": sorted(r["first_pass_s"] for r in rows)[n // 2] if n else None,
    }
    if args.json:
        print(json.dumps({"summary": agg, "cases": rows}, indent=1))
        return
    print(f"recall over {n} cases ({agg['record_index']})")
    print("| method | found in first presented | found after one added cue |")
    print("|---|---|---|")
    print(f"| recall dialogue | {agg['found_in_first_presented']}/{n} "
          f"({agg['found_in_first_presented'] / n:.0%}) | "
          f"{agg['found_after_one_added_cue']}/{n} ({agg['found_after_one_added_cue'] / n:.0%}) |")
    print(f"| baseline: keyword top-1 | {agg['baseline_keyword_top1']}/{n} | "
          f"{agg['baseline_keyword_top1_with_added_cue']}/{n} |")
    print(f"first states: {agg['first_states']}; by source (after added cue): "
          f"{agg['by_source']}; first pass median {agg['first_pass_median_s']} s")


if __name__ == "__main__":
    main()
