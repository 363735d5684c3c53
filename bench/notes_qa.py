"""Notes questions answered from the memex: the project's own set and the shared dev set.

Run: python bench/notes_qa.py [--workdir DIR] [--set own|none|dev|all] [--calibrate] [--show]
                             [--store-url postgresql://...]

- ``own``  bench/data/notes-qa-own.jsonl (44 questions): over examples/memex (``"memex":
  "example"``) and over the memex bench/notes_memex_gen.py writes (``"generated"``).
- ``none`` bench/data/notes-qa-own-none.jsonl: questions neither memex answers — right when
  the reply presents no answer (says nothing in the notes answers it) and quotes no note.
- ``dev``  ../shared/eval/notes-qa-dev.jsonl (over examples/memex), scored only.
Each question goes through the whole pipeline in process (what ``opencortex ask --json``
runs: router, skill, reply with ``citations``) and is scored like
../shared/tools/notes_eval.py: right when the answer states a fact of ``has`` (as a whole
word or phrase) and a citation names the source file (a ``file::outline`` key or an
``id:`` of a node in it).  ``--calibrate`` prints, for the notes answerer alone, the 5-fold
cross-validated threshold over own (answerable: the best unit is from the right file and
states the fact) and none (unanswerable) questions.  Copies of both memexes are indexed
(with vectors) under ``--workdir`` (default: a temporary directory); with ``--store-url``
their index is in that PostgreSQL server instead (one fresh schema per memex).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
OWN = ROOT / "bench" / "data" / "notes-qa-own.jsonl"
NONE = ROOT / "bench" / "data" / "notes-qa-own-none.jsonl"
DEV = ROOT.parent / "shared" / "eval" / "notes-qa-dev.jsonl"


def _bounded(h: str) -> str:
    return (r"(?<!\w)" if h[0].isalnum() else "") + re.escape(h) + \
        (r"(?!\w)" if h[-1].isalnum() else "")


def _ids(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*.org"):
        for i in re.findall(r"(?im)^\s*:ID:\s*(\S+)", p.read_text("utf-8", "replace")):
            out[i] = str(p.relative_to(root))
    return out


def _files(cites: list[str], ids: dict[str, str]) -> set[str]:
    return {ids.get(x[3:], "") if x.startswith("id:") else x.split("::")[0].split(":")[0]
            for x in cites}


_STORE: dict[str, str] = {}
"""``--store-url``: the PostgreSQL server and a schema name per memex (empty: SQLite)."""


def _store_env(root: Path) -> None:
    """Point the next Memex/Runtime opened at ``root``'s own schema (Settings read it)."""
    if _STORE:
        os.environ["OPENCORTEX_STORE_URL"] = _STORE["url"]
        os.environ["OPENCORTEX_STORE_SCHEMA"] = f"{_STORE['prefix']}_{root.name}"


def _prepare(work: Path) -> dict[str, Path]:
    """Fresh copies of both memexes, indexed with vectors."""
    from notes_memex_gen import generate

    from opencortex.cli.output import open_memex
    from opencortex.retrieval.hybrid import retriever_for

    roots = {"example": work / "example", "generated": work / "generated"}
    for r in roots.values():
        if r.exists():
            shutil.rmtree(r)
    shutil.copytree(ROOT / "examples" / "memex", roots["example"])
    generate(roots["generated"])
    for r in roots.values():
        _store_env(r)
        m = open_memex(str(r), None)
        retriever_for(m).sync(embed=True)
        m.close()
    return roots


class Asker:
    """One Runtime per memex, each question through ``Kernel.ask_full`` as ``ask`` does."""

    def __init__(self, root: Path) -> None:
        from opencortex.cli.output import open_runtime

        _store_env(root)
        self.rt = open_runtime(str(root), None)
        self.rt.memex.sync()

    def ask(self, q: str) -> dict[str, Any]:
        k = self.rt.kernel(approval_timeout=0)
        try:
            replies = k.ask_full(q, timeout=300)
        finally:
            k.shutdown(timeout=5)
        final = next((d for _, d in reversed(replies)
                      if isinstance(d, dict) and "intents" in d), {})
        return {"answer": final.get("answer") or "\n\n".join(t for t, _ in replies),
                "citations": final.get("citations", []), "via": self.rt.via,
                "intents": final.get("intents", [])}

    def close(self) -> None:
        self.rt.close()


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def score_answered(cases: list[dict[str, Any]], askers: dict[str, Asker],
                   roots: dict[str, Path], show: bool) -> dict[str, Any]:
    right, lat = 0, []
    ids = {k: _ids(r) for k, r in roots.items()}
    for c in cases:
        mx = c.get("memex", "example")
        t0 = time.perf_counter()
        out = askers[mx].ask(c["q"])
        lat.append(time.perf_counter() - t0)
        files = _files(out["citations"], ids[mx])
        want = set(c["file"] if isinstance(c["file"], list) else [c["file"]])
        ok_fact = (any(re.search(_bounded(h), out["answer"], re.I) for h in c.get("has", []))
                   or any(re.search(x, out["answer"], re.I) for x in c.get("re", [])))
        ok = ok_fact and bool(files & want)
        right += ok
        if show or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} fact={ok_fact} cite={bool(files & want)} "
                  f"{lat[-1]:5.1f}s [{mx}] {c['q'][:70]}"
                  + ("" if ok else f"\n      -> {out['answer'][:160]!r}"))
    return {"right": right, "n": len(cases), "ratio": round(right / max(1, len(cases)), 4),
            "median_s": round(statistics.median(lat), 2) if lat else None}


def score_none(cases: list[dict[str, Any]], askers: dict[str, Asker], show: bool
               ) -> dict[str, Any]:
    right = 0
    for c in cases:
        out = askers[c.get("memex", "example")].ask(c["q"])
        ok = not out["citations"] or "Nothing in your notes answers" in out["answer"]
        right += ok
        if show or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} [none] {c['q'][:70]}"
                  + ("" if ok else f"\n      -> {out['answer'][:160]!r}"))
    return {"right": right, "n": len(cases), "ratio": round(right / max(1, len(cases)), 4)}


def calibrate(roots: dict[str, Path]) -> dict[str, Any]:
    """The notes answerer's best score on each own question (positive when one of the three
    units a reply shows is from the right file and states the fact) and each none question
    (negative); the threshold maximising accuracy, 5-fold cross-validated (folds by
    position; ties: the middle of the gap between the classes)."""
    from opencortex.access import Access
    from opencortex.cli.output import open_memex
    from opencortex.skills.notes_answer import answer

    mems = {}
    for k, r in roots.items():
        _store_env(r)
        mems[k] = open_memex(str(r), None)
    acc = {k: Access(m, "cli") for k, m in mems.items()}
    rows: list[tuple[float, bool]] = []
    for c in _load(OWN):
        a = answer(acc[c.get("memex", "example")], c["q"])
        files = c["file"] if isinstance(c["file"], list) else [c["file"]]
        good = any(u.file in files and any(re.search(_bounded(h), u.context, re.I)
                                           for h in c["has"]) for u in a.units[:3])
        rows.append((a.best, good))
    for c in _load(NONE):
        rows.append((answer(acc[c.get("memex", "example")], c["q"]).best, False))
    for m in mems.values():
        m.close()

    def best_t(train: list[tuple[float, bool]]) -> float:
        ss = sorted({s for s, _ in train})
        cands = [round((a + b) / 2, 3) for a, b in itertools.pairwise(ss)] or [0.5]
        return max(cands, key=lambda t: (sum((s >= t) == g for s, g in train), -t))

    folds, correct = 5, 0
    ts = []
    for f in range(folds):
        test = rows[f::folds]
        train = [r for i, r in enumerate(rows) if i % folds != f]
        t = best_t(train)
        ts.append(t)
        correct += sum((s >= t) == g for s, g in test)
    return {"cv_accuracy": round(correct / len(rows), 4), "fold_thresholds": ts,
            "threshold_all": best_t(rows), "n": len(rows),
            "positives": sum(g for _, g in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--set", default="all", choices=["own", "none", "dev", "all"])
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--store-url", default=None,
                    help="index both memexes in this PostgreSQL server (fresh schemas)")
    a = ap.parse_args()
    if a.store_url:
        _STORE.update(url=a.store_url, prefix=f"notesqa_{os.getpid()}")
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="notes-qa-"))
    work.mkdir(parents=True, exist_ok=True)
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        os.environ[var] = str(work / var.lower())  # no person's config or records
    roots = _prepare(work)
    summary: dict[str, Any] = {}
    if a.calibrate:
        summary["calibrate"] = calibrate(roots)
        print(json.dumps(summary["calibrate"]))
    askers = {k: Asker(r) for k, r in roots.items()}
    try:
        if a.set in ("own", "all"):
            summary["own"] = score_answered(_load(OWN), askers, roots, a.show)
            print("own:", summary["own"])
        if a.set in ("none", "all"):
            summary["none"] = score_none(_load(NONE), askers, a.show)
            print("none:", summary["none"])
        if a.set in ("dev", "all") and DEV.is_file():
            summary["dev"] = score_answered(_load(DEV), askers, roots, a.show)
            print("dev:", summary["dev"])
    finally:
        for k in askers.values():
            k.close()
        _drop_schemas(roots)
    print(json.dumps(summary))


def _drop_schemas(roots: dict[str, Path]) -> None:
    """``--store-url``: the run's own schemas go when it ends (nothing left on the server)."""
    if not _STORE:
        return
    import psycopg

    with psycopg.connect(_STORE["url"], autocommit=True) as c:
        for r in roots.values():
            c.execute(f'DROP SCHEMA IF EXISTS "{_STORE["prefix"]}_{r.name}" CASCADE')


if __name__ == "__main__":
    main()
