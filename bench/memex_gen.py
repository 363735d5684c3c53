"""Generate a memex of N nodes in N/50 files from real-looking text (deterministic).

Used by the benchmarks; the generated corpus is never committed.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

WORDS = """
the a of to and in that is for it as with on be by this are from at or an not we can
which have has was were will would should could about into over after before between
index search query note notes memex project projects task tasks review draft idea ideas
cache caching latency throughput sqlite postgres vector embedding embeddings token tokens
retrieval ranking bm25 hybrid fusion reciprocal rank dense sparse semantic keyword graph
link links backlink outline headline property drawer schedule deadline agenda journal
meeting meetings decision decisions follow up migrate migration server backup snapshot
zfs disk replication sync conflict merge crdt clock vector lamport offline local first
rust ownership borrow lifetime trait async await thread pool worker queue signal event
test tests flaky fixture timeout retry deterministic seed clock mock integration unit
write writes atomic rename fsync journal undo history version diff patch commit branch
read reading book chapter outline argument evidence example summary quote reference
sam priya lena alex team manager weekly monthly quarterly plan planning goal goals
performance benchmark median p95 memory profile hot path allocation parse parser emacs
org mode keyword priority tag tags inherited filetags category created closed logbook
""".split()
TODO = [None] * 6 + ["TODO", "NEXT", "DONE", "WAITING"]
TAGS = ["work", "home", "idea", "reading", "ops", "writing", "rust", "search", "health"]


def sentence(rng: random.Random) -> str:
    n = rng.randint(8, 20)
    s = " ".join(rng.choice(WORDS) for _ in range(n))
    return s[0].upper() + s[1:] + "."


def generate(root: Path, n_nodes: int, per_file: int = 50, seed: int = 42) -> dict[str, int]:
    """Write ``n_nodes`` headlines into ``n_nodes // per_file`` files under ``root``."""
    rng = random.Random(seed)
    ids: list[str] = []
    files = max(1, n_nodes // per_file)
    total_bytes = 0
    for fi in range(files):
        sub = root / f"area{fi % 20:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        lines = [f"#+TITLE: {sentence(rng)[:40].rstrip('.')}",
                 f"#+FILETAGS: :{rng.choice(TAGS)}:", ""]
        level = 1
        for _ in range(per_file):
            level = max(1, min(level + rng.choice([-1, 0, 0, 1]), 4))
            todo = rng.choice(TODO)
            title = sentence(rng)[: rng.randint(20, 60)].rstrip(". ")
            tags = f" :{rng.choice(TAGS)}:" if rng.random() < 0.3 else ""
            lines.append("*" * level + " " + (f"{todo} " if todo else "") + title + tags)
            day = rng.randint(1, 28)
            if todo == "DONE":
                lines.append(f"CLOSED: [2026-11-{day:02d} Sat 10:00]")
            elif todo and rng.random() < 0.5:
                lines.append(f"SCHEDULED: <2026-12-{day:02d} Tue>")
            if rng.random() < 0.4:
                nid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                ids.append(nid)
                lines += [":PROPERTIES:", f":ID:       {nid}", ":END:"]
            body = [sentence(rng) for _ in range(rng.randint(2, 6))]
            if ids and rng.random() < 0.3:
                body.append(f"See [[id:{rng.choice(ids)}][{rng.choice(WORDS)}]].")
            if rng.random() < 0.1:
                body.append("https://example.org/" + rng.choice(WORDS))
            lines += body
            lines.append("")
        text = "\n".join(lines)
        (sub / f"file{fi:05d}.org").write_text(text, encoding="utf-8")
        total_bytes += len(text)
    return {"files": files, "nodes": files * per_file, "bytes": total_bytes}


if __name__ == "__main__":
    import sys

    print(generate(Path(sys.argv[1]), int(sys.argv[2])))
