"""Choosing the retrieval parameters on the dev sets, by 5-fold cross-validation.

    .venv/bin/python bench/retrieval_tune.py [--cache DIR] [--folds 5]

Run ``bench/retrieval_public.py`` first: it builds and embeds the three dev sets' indexes
in the cache; this reads them (nothing is embedded here but the queries).  Tuned, each as
ONE setting for all three sets (the objective is the mean of SciFact nDCG@10, LoCoMo R@5
and FAQ nDCG@10):

- sparse: the title and tags boosts on top of the whole-text field (``keyword.py``);
- dense: how a node's passages make its score (best passage, or best + a share of the
  second best);
- hybrid: the fusion (``fusion.fuse`` weight; weighted RRF for comparison).

For every parameter the folds are over queries: the setting is chosen on four fifths of
every set's queries and scored on the held-out fifth; the held-out figures (mean over the
folds) are printed beside the in-sample best, so the choice is judged on queries it was
not chosen on.  No query wording is used for anything but scoring.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from retrieval_public import cache_root, load_set, metrics  # noqa: E402

SETS = {"scifact": ("nDCG@10", 10), "locomo": ("R@5", 5), "faq": ("nDCG@10", 10)}
DEPTH = 50


def folds_of(n: int, k: int, seed: int = 13) -> list[list[int]]:
    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    return [idx[i::k] for i in range(k)]


def cross_validate(per: dict[str, dict], k: int) -> tuple[object, dict, dict]:
    """``per[set][config]`` = list of per-query primary metric.  Returns (config chosen
    on all queries, in-sample figures of it, held-out figures averaged over folds)."""
    configs = list(next(iter(per.values())).keys())
    folds = {s: folds_of(len(next(iter(v.values()))), k) for s, v in per.items()}

    def score(cfg, pick: dict[str, set[int]]) -> float:
        return sum(sum(per[s][cfg][i] for i in pick[s]) / max(1, len(pick[s]))
                   for s in per) / len(per)

    held: dict[str, list[float]] = {s: [] for s in per}
    for f in range(k):
        train = {s: {i for j, fo in enumerate(folds[s]) if j != f for i in fo} for s in per}
        best = max(configs, key=lambda c: score(c, train))
        for s in per:
            test = folds[s][f]
            held[s].append(sum(per[s][best][i] for i in test) / len(test))
    everything = {s: set(range(len(next(iter(per[s].values()))))) for s in per}
    best = max(configs, key=lambda c: score(c, everything))
    ins = {s: sum(per[s][best]) / len(per[s][best]) for s in per}
    return best, ins, {s: sum(v) / len(v) for s, v in held.items()}


def main() -> None:
    import numpy as np

    from opencortex.memex import Memex
    from opencortex.retrieval.fusion import fuse, rrf
    from opencortex.retrieval.hybrid import Retriever
    from opencortex.retrieval.keyword import TantivyEngine

    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=None)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    cache = cache_root(args.cache)
    names = args.sets.split(",")

    boosts = [{"text": 1.0, "title": t, "outline": o, "tags": g} for t, o, g in
              itertools.product((0.0, 0.25, 0.5, 1.0), (0.0, 0.25, 0.5), (0.0, 0.5))]
    aggs = [("max", 0.0), ("max+0.1*second", 0.1), ("max+0.25*second", 0.25)]
    weights = [round(float(w), 2) for w in np.arange(0.0, 1.0001, 0.05)]
    rrfs = [(kk, ws) for kk in (10, 30, 60) for ws in (0.3, 0.5, 0.7)]
    sp_per: dict[str, dict] = {}
    de_per: dict[str, dict] = {}
    fu_per: dict[str, dict] = {}
    for name in names:
        metric, cut = SETS[name]
        root, qs, item, _cuts = load_set(name, cache)
        r = Retriever(Memex(root, cache / name / "index.sqlite3"))
        r.sync(embed=False)
        store = r.memex.store
        info = {key: (oid, f, ln) for key, oid, f, ln in store.db.execute(
            "SELECT n.key, n.org_id, f.path, n.line FROM nodes n JOIN files f "
            "ON f.id = n.file_id")}

        class _H:  # what item() reads off a hit
            def __init__(self, key: str, _info: dict = info) -> None:
                self.id, self.file, self.line = _info[key]

        def m_of(keys: list[str], q: dict) -> float:
            return metrics([item(_H(k)) for k in keys], q["rel"], cut)[metric]  # noqa: B023

        base = cache / name / "index.sqlite3"
        engines = [TantivyEngine(base.with_name(base.name + ".tantivy"), b) for b in boosts]
        sparse_lists = {i: [e.search(q["query"], DEPTH) for q in qs]
                        for i, e in enumerate(engines)}
        sp_per[name] = {i: [m_of([h.key for h in hs], q) for hs, q in zip(ls, qs, strict=True)]
                        for i, ls in sparse_lists.items()}
        # dense: passage rows, aggregated per node
        keys, _lines, mat = r.vectors._load()
        qv = np.asarray(r.embedder.embed([q["query"] for q in qs]), dtype=np.float32)
        sims = qv @ mat.T
        karr = np.asarray(keys)
        dense_lists: dict[int, list[list[tuple[str, float]]]] = {i: [] for i in range(len(aggs))}
        for row in sims:
            top = np.argsort(-row)[: DEPTH * 6]
            best: dict[str, list[float]] = {}
            for j in top:
                best.setdefault(karr[j], []).append(float(row[j]))
            for ai, (_n, lam) in enumerate(aggs):
                sc = {k2: v[0] + lam * (v[1] if len(v) > 1 else 0.0) for k2, v in best.items()}
                dense_lists[ai].append(sorted(sc.items(), key=lambda kv: -kv[1])[:DEPTH])
        de_per[name] = {ai: [m_of([k2 for k2, _ in ls], q) for ls, q in zip(dl, qs, strict=True)]
                        for ai, dl in dense_lists.items()}
        r.close()
        # fusion over the shipped sparse boosts and the max aggregate
        from opencortex.retrieval.keyword import FIELD_BOOSTS

        si = boosts.index(FIELD_BOOSTS)
        sl = [[(h.key, h.score) for h in hs] for hs in sparse_lists[si]]
        dl = dense_lists[0]
        cfgs: dict = {}
        for w, norm in itertools.product(weights, ("max", "minmax")):
            cfgs[("fuse", norm, w)] = [m_of([k2 for k2, _ in fuse(s, d, w, norm)], q)
                                       for s, d, q in zip(sl, dl, qs, strict=True)]
        for kk, ws in rrfs:
            cfgs[("rrf", kk, ws)] = [m_of([k2 for k2, _ in rrf([s, d], [ws, 1 - ws], kk)], q)
                                     for s, d, q in zip(sl, dl, qs, strict=True)]
        fu_per[name] = cfgs
        print(f"[{name}] {len(qs)} queries done", file=sys.stderr)

    def show(title: str, per: dict, label) -> None:
        best, ins, held = cross_validate(per, args.folds)
        print(f"\n## {title}: chosen {label(best)}")
        print("| set | in-sample | held-out (5-fold) |\n|---|---|---|")
        for s in per:
            print(f"| {s} {SETS[s][0]} | {ins[s]:.3f} | {held[s]:.3f} |")
        print("| config | " + " | ".join(per) + " |")
        for c in per[next(iter(per))]:
            row = " | ".join(f"{sum(per[s][c]) / len(per[s][c]):.3f}" for s in per)
            print(f"| {label(c)} | {row} |")

    show("sparse boosts", sp_per, lambda i: boosts[i])
    show("dense passage aggregate", de_per, lambda i: aggs[i][0])
    show("fusion", fu_per, lambda c: c)


if __name__ == "__main__":
    main()
