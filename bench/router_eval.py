"""Accuracy of the offline router (``opencortex.router.decompose``) on labelled utterances.

Run: .venv/bin/python bench/router_eval.py [--file PATH] [--show-errors]

Each JSONL line is ``{"text": ..., "intents": [target, ...]}`` (targets in order).  Prints, as
markdown: exact-sequence accuracy (predicted target sequence == labelled), per-target precision
and recall (over positions aligned by index; surplus/missing positions count as false
positives/negatives), a confusion table for aligned positions, then one JSON summary line.
The dev file is a check, not a tuning set: the same measurement runs on unseen utterances.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from opencortex.router import TARGETS, decompose  # noqa: E402

DEFAULT_FILE = ROOT.parent / "shared" / "eval" / "router-dev.jsonl"


def evaluate(rows: list[dict]) -> dict:
    """Score predictions against the labels; returns counts and the per-row predictions."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    confusion: Counter[tuple[str, str]] = Counter()
    exact = 0
    errors = []
    t0 = time.perf_counter()
    for row in rows:
        gold = list(row["intents"])
        pred = [i.target for i in decompose(row["text"])]
        if pred == gold:
            exact += 1
        else:
            errors.append({"text": row["text"], "gold": gold, "pred": pred})
        for g, p in zip(gold, pred, strict=False):
            confusion[(g, p)] += 1
            if g == p:
                tp[g] += 1
            else:
                fn[g] += 1
                fp[p] += 1
        for g in gold[len(pred):]:
            fn[g] += 1
        for p in pred[len(gold):]:
            fp[p] += 1
    return {"n": len(rows), "exact": exact, "tp": tp, "fp": fp, "fn": fn,
            "confusion": confusion, "errors": errors, "seconds": time.perf_counter() - t0}


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def report(res: dict, path: Path, show_errors: bool) -> str:
    """Markdown tables followed by one JSON line."""
    n, exact = res["n"], res["exact"]
    lines = [f"## Router eval: `{path.name}` ({n} utterances)", "",
             f"Exact-sequence accuracy: **{exact}/{n} = {_ratio(exact, n) or 0:.1%}**", "",
             "| target | precision | recall | support |", "|---|---|---|---|"]
    per_target = {}
    for t in TARGETS:
        tp, fp, fn = res["tp"][t], res["fp"][t], res["fn"][t]
        p, r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        per_target[t] = {"precision": p, "recall": r, "support": tp + fn}
        lines.append(f"| {t} | {_fmt(p)} | {_fmt(r)} | {tp + fn} |")
    lines += ["", "Confusion (rows = gold, columns = predicted; aligned positions only):", "",
              "| gold \\ pred | " + " | ".join(TARGETS) + " |",
              "|---" * (len(TARGETS) + 1) + "|"]
    for g in TARGETS:
        cells = [str(res["confusion"][(g, p)] or ".") for p in TARGETS]
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    if show_errors and res["errors"]:
        lines += ["", "Errors:", ""]
        lines += [f"- {e['text']!r}: gold {e['gold']} pred {e['pred']}" for e in res["errors"]]
    summary = {"file": str(path), "n": n, "exact": exact,
               "accuracy": round(_ratio(exact, n) or 0.0, 4),
               "per_target": {t: {k: (round(v, 4) if isinstance(v, float) else v)
                                  for k, v in d.items()} for t, d in per_target.items()},
               "seconds": round(res["seconds"], 2)}
    lines += ["", json.dumps(summary)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="labelled JSONL file")
    ap.add_argument("--show-errors", action="store_true", help="list the misrouted utterances")
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    print(report(evaluate(rows), args.file, args.show_errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
