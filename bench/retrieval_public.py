"""Retrieval quality on public data nobody here wrote: SciFact, LoCoMo, and the Org FAQ set.

    .venv/bin/python bench/retrieval_public.py [--sets scifact,locomo,faq] [--cache DIR]
                                               [--dump DIR]

Each dev set's memex is built from ``../shared/eval/`` into a cache directory outside the
repository (``$XDG_CACHE_HOME/opencortex-bench``, default ``~/.cache/...``) and indexed
there with embeddings; the index and its vectors are reused between runs, so only the
first run embeds (SciFact's 5,183 abstracts take minutes on a small machine).

- SciFact (BEIR): each abstract a level-1 headline with ``:ID: sf-<doc_id>``, 100 per file;
  the 809 train claims; relevance = the cited abstracts.  nDCG@10 / R@10 / MRR@10.
- LoCoMo (conversations 0–4, CC BY-NC: read from ``../shared``, never copied into the
  repository): one dated headline per session; relevance = the sessions holding the
  evidence.  R@5 / MRR@5.
- FAQ (Org text): the 19 Org FAQ questions of ``retrieval-dev.jsonl`` over
  ``../shared/corpus/org/files``; relevance = (file, line) of the manual sections the answers
  link to.  nDCG@10 / R@10 / MRR@10.

Every set runs ``opencortex search``'s three modes (``Retriever.search``) and a plain
SQLite FTS5 BM25 baseline built in the same run (unicode61, default ``bm25()`` weights,
title + body, OR of the query's words).  ``--dump`` writes each mode's ranked lists (with
scores) as JSON for ``bench/retrieval_tune.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EVAL = SHARED / "eval"


def cache_root(arg: str | None) -> Path:
    if arg:
        return Path(arg).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "opencortex-bench"


# -- metrics -------------------------------------------------------------------------
def metrics(ranked: list, relevant: set, k: int) -> dict[str, float]:
    ranked = ranked[:k]
    rr = next((1.0 / i for i, x in enumerate(ranked, 1) if x in relevant), 0.0)
    found = len({x for x in ranked if x in relevant})
    dcg = sum(1.0 / math.log2(i + 1) for i, x in enumerate(ranked, 1) if x in relevant)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return {f"nDCG@{k}": dcg / idcg if idcg else 0.0, f"R@{k}": found / len(relevant),
            f"MRR@{k}": rr}


# -- the dev sets as memexes ---------------------------------------------------------------
def _org_text(s: str) -> str:
    """Text as Org body lines: a line that would start a headline gets a leading space."""
    return "\n".join((" " + ln) if ln.startswith("*") else ln for ln in s.splitlines())


def build_scifact(dest: Path) -> None:
    """5,183 abstracts as level-1 headlines, 100 per file (skipped when already built)."""
    done = dest / ".built"
    if done.exists():
        return
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    docs = [json.loads(x) for x in open(EVAL / "scifact" / "corpus.jsonl", encoding="utf-8")]
    for i in range(0, len(docs), 100):
        out = ["#+TITLE: SciFact abstracts", ""]
        for d in docs[i:i + 100]:
            title = " ".join(d["title"].split()) or f"Abstract {d['doc_id']}"
            out += [f"* {title}", ":PROPERTIES:", f":ID:       sf-{d['doc_id']}", ":END:",
                    _org_text(d["abstract"]), ""]
        (dest / f"scifact-{i // 100:03d}.org").write_text("\n".join(out), encoding="utf-8")
    done.write_text("ok")


def build_locomo(dest: Path) -> None:
    """The Org files as given (copied into the cache: the shared folder is read-only)."""
    src = EVAL / "locomo" / "memex"
    dest.mkdir(parents=True, exist_ok=True)
    for f in src.glob("*.org"):
        t = dest / f.name
        if not t.exists() or t.read_bytes() != f.read_bytes():
            shutil.copyfile(f, t)


def load_set(name: str, cache: Path) -> tuple[Path, list[dict], Callable, tuple[int, ...]]:
    """(memex root, queries with 'query' and 'rel', hit → item function, metric cut-offs)."""
    if name == "scifact":
        root = cache / "scifact" / "memex"
        build_scifact(root)
        qs = [json.loads(x) for x in open(EVAL / "scifact" / "train-queries.jsonl",
                                          encoding="utf-8")]
        qs = [{"query": q["query"], "rel": {f"sf-{r}" for r in q["relevant"]}} for q in qs]
        return root, qs, lambda h: h.id, (10,)
    if name == "locomo":
        root = cache / "locomo" / "memex"
        build_locomo(root)
        qs = [json.loads(x) for x in open(EVAL / "locomo" / "queries.jsonl", encoding="utf-8")]
        qs = [{"query": q["query"], "rel": set(q["relevant"])} for q in qs if q["relevant"]]
        return root, qs, lambda h: h.id, (5,)
    if name == "faq":
        root = SHARED / "corpus" / "org" / "files"
        qs = [json.loads(x) for x in open(EVAL / "retrieval-dev.jsonl", encoding="utf-8")]
        qs = [{"query": q["query"], "rel": {(r["file"], r["line"]) for r in q["relevant"]}}
              for q in qs]
        return root, qs, lambda h: (h.file, h.line), (10,)
    raise SystemExit(f"unknown set {name!r}")


# -- the plain FTS5 baseline -------------------------------------------------------------
class PlainFts5:
    """SQLite FTS5 over title + body, default tokenizer and bm25() weights, OR query."""

    def __init__(self, store) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(title, body)")
        rows = store.db.execute("SELECT id, title, body FROM nodes").fetchall()
        self.db.executemany("INSERT INTO t (rowid, title, body) VALUES (?, ?, ?)", rows)
        self.store = store

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        words = re.findall(r"\w+", query)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        return self.db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY "
                               "bm25(t) LIMIT ?", (match, k)).fetchall()


class _Row:
    __slots__ = ("file", "id", "key", "line")

    def __init__(self, key: str, oid: str | None, file: str, line: int) -> None:
        self.key, self.id, self.file, self.line = key, oid, file, line


# -- running -----------------------------------------------------------------------------
def run_set(name: str, cache: Path, dump: Path | None) -> list[tuple]:
    sys.path.insert(0, str(REPO / "src"))
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import Retriever

    root, qs, item, cuts = load_set(name, cache)
    index = cache / name / "index.sqlite3"
    index.parent.mkdir(parents=True, exist_ok=True)
    r = Retriever(Memex(root, index))
    t = time.perf_counter()
    info = r.sync(embed=True)
    st = info.get("vectors", {})
    print(f"[{name}] {info['nodes']} nodes, {len(qs)} queries; embedded "
          f"{info.get('embedded')} new texts in {time.perf_counter() - t:.1f}s; nodes "
          f"embedded {st.get('embedded')}, vector rows {st.get('passages', '-')}",
          file=sys.stderr)
    store = r.memex.store
    plain = PlainFts5(store)
    byid = {i: _Row(key, oid, f, ln) for i, key, oid, f, ln in store.db.execute(
        "SELECT n.id, n.key, n.org_id, f.path, n.line FROM nodes n JOIN files f "
        "ON f.id = n.file_id")}
    k = max(cuts)
    rows = []
    dumped: dict[str, list] = {}
    modes: dict[str, Callable[[str], list]] = {
        "plain FTS5 BM25": lambda q: [byid[i] for i, _ in plain.search(q, k)],
        "sparse": lambda q: r.search(q, "sparse", k).hits,
        "dense": lambda q: r.search(q, "dense", k).hits,
        "hybrid": lambda q: r.search(q, "hybrid", k).hits,
    }
    r.search(qs[0]["query"], "hybrid", k)  # warm: model load, matrix, keyword reader
    for mode, fn in modes.items():
        per: list[dict[str, float]] = []
        t = time.perf_counter()
        lists = []
        for q in qs:
            hits = fn(q["query"])
            ranked = [item(h) for h in hits]
            lists.append([h.key for h in hits])
            m: dict[str, float] = {}
            for c in cuts:
                m.update(metrics(ranked, q["rel"], c))
            per.append(m)
        ms = (time.perf_counter() - t) / len(qs) * 1000
        avg = {key: sum(p[key] for p in per) / len(per) for key in per[0]}
        rows.append((name, mode, avg, ms))
        dumped[mode] = lists
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{name}.json").write_text(json.dumps(dumped))
    r.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="scifact,locomo,faq")
    ap.add_argument("--cache", default=None, help="default: $XDG_CACHE_HOME/opencortex-bench")
    ap.add_argument("--dump", default=None, help="write ranked lists here (JSON per set)")
    args = ap.parse_args()
    cache = cache_root(args.cache)
    out = []
    for name in args.sets.split(","):
        out += run_set(name.strip(), cache, Path(args.dump) if args.dump else None)
    print("\n| set | method | metrics | ms/query |\n|---|---|---|---|")
    for name, mode, avg, ms in out:
        ms_txt = " / ".join(f"{key} {v:.3f}" for key, v in avg.items())
        print(f"| {name} | {mode} | {ms_txt} | {ms:.1f} |")
    print(json.dumps([{"set": n, "method": m, **a, "ms_per_query": round(ms, 2)}
                      for n, m, a, ms in out]))


if __name__ == "__main__":
    main()
