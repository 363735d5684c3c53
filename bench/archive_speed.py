"""Transcript archive speed: the first pass over 10,000 generated sessions (Claude Code,
Codex, Gemini, Aider transcripts from bench/recall_fixtures.py scale mode) — time, bytes
read and stored — then the no-op pass (nothing changed: a stat per file), then a pass after
1% of the files grew.

    .venv/bin/python bench/archive_speed.py [--sessions 10000] [--corpus DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENCORTEX_NO_PROGRESS", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="archive-speed-"))
    out: dict = {}
    corpus = args.corpus
    if corpus is None:
        from recall_fixtures import generate

        corpus = tmp / "corpus"
        t0 = time.perf_counter()
        generate(corpus, distractors=60, sessions=args.sessions, commits=50)
        out["generate_s"] = round(time.perf_counter() - t0, 1)

    from opencortex.recall.archive import Archive
    from opencortex.recall.engine import parse_source

    roots = [parse_source(f"{k}:{corpus / d}") for k, d in
             (("claude-code", "claude"), ("codex", "codex"), ("gemini", "gemini"),
              ("aider", "aider")) if (corpus / d).exists()]
    arc = Archive(tmp / "archive")
    first = arc.run(roots)
    out["files"] = first.files_seen
    out["first_pass_s"] = round(first.seconds, 2)
    out["bytes_read"] = first.bytes_read
    out["bytes_stored"] = first.bytes_written
    out["ratio"] = round(first.bytes_read / max(1, first.bytes_written), 1)
    out["objects"] = first.archived
    out["deduped"] = first.deduped
    noop = [arc.run(roots) for _ in range(3)]
    assert all(s.archived == s.deduped == s.bytes_read == 0 for s in noop)
    out["noop_pass_s"] = round(sorted(s.seconds for s in noop)[1], 3)
    files = sorted(p for p in corpus.rglob("*.jsonl"))
    grown = files[:: max(1, len(files) // max(1, len(files) // 100))]
    for p in grown:
        with open(p, "a", encoding="utf-8") as f:
            f.write("\n")
    changed = arc.run(roots)
    out["changed_files"] = changed.archived + changed.deduped
    out["changed_pass_s"] = round(changed.seconds, 2)
    st = arc.status()
    out["on_disk_bytes"] = st["bytes"]["on_disk"]
    if args.json:
        print(json.dumps(out))
    else:
        print(f"archive of {out['files']} transcript files: first pass "
              f"{out['first_pass_s']} s, {out['bytes_read'] / 1e6:.1f} MB read -> "
              f"{out['bytes_stored'] / 1e6:.1f} MB stored (x{out['ratio']}); no-op pass "
              f"{out['noop_pass_s']} s; {out['changed_files']} grown files re-archived in "
              f"{out['changed_pass_s']} s")


if __name__ == "__main__":
    main()
