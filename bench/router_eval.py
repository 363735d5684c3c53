"""Accuracy of the offline router (``opencortex.router.decompose``) on labelled utterances.

Run: .venv/bin/python bench/router_eval.py [--file PATH ...] [--cv] [--show-errors]
     [--memex DIR]

Each JSONL line is ``{"text": ..., "intents": [target, ...]}`` (targets in order).  Prints, as
markdown: exact-sequence accuracy (predicted target sequence == labelled), per-target precision
and recall (over positions aligned by index; surplus/missing positions count as false
positives/negatives), a confusion table for aligned positions, then one JSON summary line.
Without ``--file`` both dev sets are scored.  ``--cv`` first prints the classifier's k-fold
cross-validated accuracy on its own hand-written training rows (``--grid``: an l2 x
template-weight grid, the only place hyperparameters are chosen; ``--cv-files``: only some
training files, for a before/after figure on the same rows — each row's fold is a hash of its
text).  The dev files are checks,
never training or tuning data.

A dev file whose labels never use "review" predates that target: a predicted "review" is
scored as "gtd" there (it falls back to gtd when no review skill is installed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from opencortex.router import TARGETS, decompose  # noqa: E402

DEFAULT_FILES = [ROOT.parent / "shared" / "eval" / "router-dev.jsonl",
                 ROOT.parent / "shared" / "eval" / "router-dev-2.jsonl"]


def memex_router(src: Path) -> Callable[[str], list[str]]:
    """Route as ``ask`` does over a memex: the router skill's reading with its GTD hint (the
    memex's tasks) and notes hint (does the memex answer this question?), on a copy of
    ``src`` indexed with vectors in a temporary folder."""
    import shutil
    import tempfile

    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import retriever_for
    from opencortex.signal import Signal
    from opencortex.skills.base import Context
    from opencortex.skills.router import _intents

    work = Path(tempfile.mkdtemp(prefix="router-eval-"))
    shutil.copytree(src, work / "memex")
    m = Memex(work / "memex", index=work / "index.sqlite3")
    m.sync()
    r = retriever_for(m)
    r.keyword.sync(m.store)
    r.vectors.embed_pending(lambda t: r.embedder.embed(t))

    def route(text: str) -> list[str]:
        sig = Signal(type="request", payload={"sensor": "user-input", "text": text},
                     meta={"source": "cli"})
        return [str(i.get("target")) for i in _intents(text, Context(sig, m))]
    return route


def _plain(text: str) -> list[str]:
    return [i.target for i in decompose(text)]


def evaluate(rows: list[dict], route: Callable[[str], list[str]] = _plain) -> dict:
    """Score predictions against the labels; returns counts and the per-row predictions."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    confusion: Counter[tuple[str, str]] = Counter()
    exact = 0
    errors = []
    t0 = time.perf_counter()
    has_review = any("review" in row["intents"] for row in rows)
    for row in rows:
        gold = list(row["intents"])
        pred = route(row["text"])
        if not has_review:
            pred = ["gtd" if p == "review" else p for p in pred]
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


def cross_validation(folds: int, grid: bool, files: list[str] | None = None) -> str:
    """k-fold accuracy of the classifier on its hand-written rows (the template rows always
    train, at their weight, and are never scored: they share their wording with each other),
    with a confusion table; and how a model trained on the templates alone does on the
    hand-written rows (how template wording carries over to other wording)."""
    import time

    import numpy as np

    from opencortex.embed import get_embedder
    from opencortex.router import classifier as C

    sources = tuple(s for s in C.SOURCES if not files or s.path.name in files)
    texts, labels, _, weights = C.load_weighted(sources)
    t0 = time.perf_counter()
    emb = np.asarray(get_embedder("minilm").embed(texts, batch_size=C.TRAIN_BATCH),
                     dtype=np.float32)
    t1 = time.perf_counter()
    x = C.features(emb, texts)
    C.fit(x, labels, weights=weights)
    t2 = time.perf_counter()
    hand = [w == sources[0].weight for w in weights]
    names = sorted(set(labels))
    n_hand = sum(hand)
    lines = [f"## Classifier {folds}-fold cross-validation ({n_hand} hand-written rows scored; "
             f"{len(texts) - n_hand} template rows always train at weight "
             f"{C.TEMPLATE_WEIGHT:g}, {C.TEMPLATE_PER_GROUP} per phrasing)", "",
             f"Training the shipped model: embedding {len(texts)} rows {t1 - t0:.1f} s, "
             f"fitting {t2 - t1:.1f} s", ""]
    if grid:
        lines += ["| l2 | template weight | accuracy |", "|---|---|---|"]
        for l2 in (1e-3, 1e-2):
            for tw in (0.0, 0.2, 0.5):
                w = [1.0 if h else tw for h in hand]
                keep = np.asarray([h or tw > 0 for h in hand])
                acc = C.cross_validate(x[keep], [lab for lab, k in zip(labels, keep,
                                                                         strict=True) if k],
                                       [t for t, k in zip(texts, keep, strict=True) if k],
                                       folds=folds, l2=l2,
                                       weights=[v for v, k in zip(w, keep, strict=True) if k],
                                       tested=[h for h, k in zip(hand, keep, strict=True)
                                               if k])["accuracy"]
                used = " (used)" if l2 == C.L2 and tw == C.TEMPLATE_WEIGHT else ""
                lines.append(f"| {l2:g} | {tw:g}{used} | {acc:.2%} |")
        lines.append("")
    res = C.cross_validate(x, labels, texts, folds=folds, weights=weights, tested=hand)
    tmpl = np.flatnonzero(~np.asarray(hand))
    only = C.fit(x[tmpl], [labels[i] for i in tmpl])
    hand_idx = np.flatnonzero(hand)
    pred = only.proba(x[hand_idx]).argmax(axis=1)
    transfer = float(np.mean([only.labels[int(p)] == labels[i]
                              for p, i in zip(pred, hand_idx, strict=True)]))
    per_source, start = {}, 0
    for src in sources:
        if src.weight != sources[0].weight:
            break
        n_src = len(C.load_weighted(sources[:len(per_source) + 1])[0]) - start
        per_source[src.path.name] = float(np.mean(res["hits"][start:start + n_src]))
        start += n_src
    lines += [f"Hand-written rows, {folds}-fold: **{res['accuracy']:.2%}**; a model trained on "
              f"the template rows alone scores {transfer:.2%} on them", "",
              "By file: " + ", ".join(f"{k} {v:.2%}" for k, v in per_source.items()), "",
              "Confusion, hand-written rows held out (rows = gold, columns = predicted):", "",
              "| gold \\ pred | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for g in names:
        lines.append(f"| {g} | " + " | ".join(str(res["confusion"].get((g, p), "."))
                                             for p in names) + " |")
    lines += ["", json.dumps({"cv_folds": folds, "n": len(texts), "n_hand": n_hand,
                              "cv_hand_accuracy": round(res["accuracy"], 4),
                              "templates_to_hand": round(transfer, 4),
                              "cv_by_file": {k: round(v, 4) for k, v in per_source.items()},
                              "embed_seconds": round(t1 - t0, 2),
                              "fit_seconds": round(t2 - t1, 2)})]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, action="append", help="labelled JSONL file (repeatable)")
    ap.add_argument("--cv", type=int, nargs="?", const=5, default=0, metavar="FOLDS",
                    help="also cross-validate the classifier on its training set")
    ap.add_argument("--grid", action="store_true", help="with --cv: also try an l2 grid")
    ap.add_argument("--cv-files", help="with --cv: only these training files (comma-separated "
                    "names, e.g. the set before a file was added, for a before/after figure)")
    ap.add_argument("--show-errors", action="store_true", help="list the misrouted utterances")
    ap.add_argument("--memex", type=Path, help="route as `ask` does over this memex (its GTD "
                    "and notes hints), e.g. examples/memex; default: the words alone")
    args = ap.parse_args(argv)
    route = memex_router(args.memex) if args.memex else _plain
    if args.cv:
        files = args.cv_files.split(",") if args.cv_files else None
        print(cross_validation(args.cv, args.grid, files), end="\n\n")
    for path in args.file or DEFAULT_FILES:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        print(report(evaluate(rows, route), path, args.show_errors), end="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
