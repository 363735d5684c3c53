"""The egress check's cost per reply and its false positives.

    .venv/bin/python bench/egress.py [--nodes 10000] [--replies 2000]

A generated memex (bench/memex_gen.py; files tagged ``health`` are private here, ~1 in 9)
is indexed, its private-text prints built (full, then incremental after one file changes);
then replies made of public notes' text (about 1 KB and 4 KB, as the daemon's JSON reply
``{"reply", "replies", "data"}``) pass ``Access("http").egress``: median and p95 µs per
reply (each reply new; ``repeated_median``: the same replies checked again).  False
positives: the share of public lines (of the generated memex and of the
example memex, half of whose files are treated as private) that the check withholds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))


def _reply(rng: random.Random, bodies: list[str], size: int) -> dict[str, object]:
    text: list[str] = []
    while sum(map(len, text)) < size:
        text.append(rng.choice(bodies))
    t = "\n".join(text)
    return {"reply": t, "replies": [t], "data": {"answer": t, "citations": [
        {"file": "area01/file00001.org", "line": 3, "title": "x"}]}}


def _fp(prints: object, public: list[str]) -> tuple[int, int]:
    from opencortex.guard.egress import Prints, check

    assert isinstance(prints, Prints)
    lines = [ln for body in public for ln in body.splitlines() if ln.strip()]
    cut = sum(1 for ln in lines if check(ln, prints).withheld)
    return cut, len(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--replies", type=int, default=2000)
    args = ap.parse_args()

    from memex_gen import generate

    from opencortex.access import Access
    from opencortex.guard.egress import Prints, check
    from opencortex.memex import Memex

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memex"
        root.mkdir()
        info = generate(root, args.nodes)
        cfg = Path(tmp) / "config.toml"
        cfg.write_text('[guard]\nprivacy_tags = ["health"]\n', encoding="utf-8")
        os.environ["OPENCORTEX_CONFIG"] = str(cfg)
        m = Memex(root, index=Path(tmp) / "i.sqlite3")
        from opencortex.memory.incremental import sync

        sync(m.root, m.store)
        t0 = time.perf_counter()
        snap = m.private_prints()
        full = time.perf_counter() - t0
        one = next(iter(sorted(snap.files)))
        p = root / one
        p.write_text(p.read_text() + "\n* Appended entry\nA new sentence for the index.\n")
        t0 = time.perf_counter()
        m.sync()
        sync_with = time.perf_counter() - t0
        t0 = time.perf_counter()
        m._refresh_prints(one)
        incr = time.perf_counter() - t0
        snap = m.private_prints()
        nodes = m.store.all_nodes(with_body=True)
        private = set(snap.files)
        public = [f"{n.title}\n{n.body or ''}" for n in nodes if n.file not in private]
        out["memex"] = {**info, "private_files": len(private),
                        "prints_lines": len(snap.prints.lines),
                        "prints_shingles": len(snap.prints.shingles)}
        out["prints_build_ms"] = {"full": round(full * 1000, 1),
                                  "one_file_incremental": round(incr * 1000, 2),
                                  "sync_one_changed_file_total": round(sync_with * 1000, 1)}
        acc = Access(m, "http")
        rng = random.Random(7)
        for size in (1000, 4000):
            # every reply new (the prints remember verdicts of texts they checked before:
            # the first figure is a reply never seen, the second the same replies again)
            replies = [_reply(rng, public, size) for _ in range(args.replies)]
            times: list[float] = []
            again: list[float] = []
            for run in (times, again):
                for r in replies:
                    t0 = time.perf_counter_ns()
                    acc.egress(r)
                    run.append((time.perf_counter_ns() - t0) / 1000)
            times.sort()
            out[f"egress_us_per_reply_{size // 1000}KB"] = {
                "median": round(statistics.median(times), 1),
                "p95": round(times[int(len(times) * 0.95)], 1),
                "repeated_median": round(statistics.median(again), 1),
                "bytes": len(json.dumps(replies[0]))}
        cut, total = _fp(snap.prints, public)
        out["false_positives_generated"] = {"public_lines_withheld": cut, "of": total}
        m.close()

    example = sorted((REPO / "examples" / "memex").rglob("*.org"))
    priv = [f.read_text(encoding="utf-8") for f in example[::2]]
    pub = [f.read_text(encoding="utf-8") for f in example[1::2]]
    cut, total = _fp(Prints.of(priv), pub)
    common = ":PROPERTIES:\n:END:\n- [ ] call\n#+begin_src python\n#+end_src\nDone.\n"
    out["false_positives_example_memex"] = {
        "public_lines_withheld": cut, "of": total,
        "common_short_lines_fingerprinted": bool(check(common, Prints.of([common])).withheld)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
