"""Parse speed: opencortex.org vs PyPI orgparse on the same Org files.

Both parsers read every file of the corpus from memory (bytes already loaded), in
interleaved rounds so machine noise hits both alike; medians are reported.

    .venv/bin/python bench/parse_speed.py [--corpus DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import orgparse

from opencortex.org import parse_bytes

DEFAULT_CORPUS = "/work/shared/corpus/org/files"


def _ours(blobs: list[tuple[str, bytes]]) -> int:
    n = 0
    for path, data in blobs:
        n += len(parse_bytes(data, path).headings)
    return n


def _orgparse(blobs: list[tuple[str, bytes]]) -> int:
    n = 0
    for path, data in blobs:
        root = orgparse.loads(data.decode("utf-8", "replace"), filename=path)
        n += sum(1 for _ in root[1:])
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)

    files = sorted(p for p in Path(args.corpus).rglob("*.org") if p.is_file())
    if not files:
        print(f"no .org files under {args.corpus}", file=sys.stderr)
        return 1
    blobs = [(str(p), p.read_bytes()) for p in files]
    size = sum(len(b) for _, b in blobs)
    times: dict[str, list[float]] = {"opencortex": [], "orgparse": []}
    counts: dict[str, int] = {}
    runners = {"opencortex": _ours, "orgparse": _orgparse}
    for r in range(args.rounds):
        order = list(runners) if r % 2 == 0 else list(reversed(runners))
        for name in order:
            t0 = time.perf_counter()
            counts[name] = runners[name](blobs)
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"corpus: {args.corpus}  files={len(files)}  bytes={size:,}  rounds={args.rounds}")
    for name in runners:
        mb_s = size / med[name] / 1e6
        print(f"  {name:10} median {med[name]:.3f} s  ({mb_s:5.1f} MB/s, {counts[name]} headlines)"
              f"  min {min(times[name]):.3f} s")
    print(f"  ratio orgparse/opencortex = {med['orgparse'] / med['opencortex']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
