"""Parse speed: opencortex.org vs PyPI orgparse, and µs per headline on a generated memex.

Both parsers read every file of the corpus from memory (bytes already loaded), in
interleaved rounds so machine noise hits both alike; medians are reported.  Then a
memex of ``--memex`` headlines (typical notes: headline, maybe planning line and
``:ID:`` drawer, a few lines of prose, occasional links) is generated with
``memex_gen.py`` into a temporary directory and parsed the same way.

Times are wall-clock (``perf_counter``) and CPU time of this thread (``thread_time``,
less disturbed by other jobs on a shared machine).

    .venv/bin/python bench/parse_speed.py [--corpus DIR] [--rounds N] [--memex N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orgparse

from opencortex.org import parse_bytes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memex_gen import generate  # noqa: E402

DEFAULT_CORPUS = "/work/shared/corpus/org/files"

Blobs = list[tuple[str, bytes]]


def _ours(blobs: Blobs) -> int:
    n = 0
    for path, data in blobs:
        n += len(parse_bytes(data, path).headings)
    return n


def _orgparse(blobs: Blobs) -> int:
    n = 0
    for path, data in blobs:
        root = orgparse.loads(data.decode("utf-8", "replace"), filename=path)
        n += sum(1 for _ in root[1:])
    return n


def _load(root: Path) -> Blobs:
    files = sorted(p for p in root.rglob("*.org") if p.is_file())
    return [(str(p), p.read_bytes()) for p in files]


def _rounds(runners: dict[str, Callable[[Blobs], int]], blobs: Blobs, rounds: int
            ) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, int]]:
    """Interleaved rounds: wall and thread-CPU seconds per runner, headline counts."""
    wall: dict[str, list[float]] = {k: [] for k in runners}
    cpu: dict[str, list[float]] = {k: [] for k in runners}
    counts: dict[str, int] = {}
    for r in range(rounds):
        order = list(runners) if r % 2 == 0 else list(reversed(runners))
        for name in order:
            t0, c0 = time.perf_counter(), time.thread_time()
            counts[name] = runners[name](blobs)
            cpu[name].append(time.thread_time() - c0)
            wall[name].append(time.perf_counter() - t0)
    return wall, cpu, counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--memex", type=int, default=10_000,
                    help="headlines of the generated memex (0: skip)")
    args = ap.parse_args(argv)

    blobs = _load(Path(args.corpus))
    if not blobs:
        print(f"no .org files under {args.corpus}", file=sys.stderr)
        return 1
    size = sum(len(b) for _, b in blobs)
    runners = {"opencortex": _ours, "orgparse": _orgparse}
    wall, cpu, counts = _rounds(runners, blobs, args.rounds)
    med = {k: statistics.median(v) for k, v in wall.items()}
    print(f"corpus: {args.corpus}  files={len(blobs)}  bytes={size:,}  rounds={args.rounds}")
    for name in runners:
        mb_s = size / med[name] / 1e6
        us_h = med[name] / counts[name] * 1e6
        cpu_h = statistics.median(cpu[name]) / counts[name] * 1e6
        print(f"  {name:10} median {med[name]:.3f} s  ({mb_s:5.1f} MB/s, {counts[name]} headlines,"
              f" {us_h:6.1f} us/headline, cpu {cpu_h:6.1f})  min {min(wall[name]):.3f} s")
    print(f"  ratio orgparse/opencortex = {med['orgparse'] / med['opencortex']:.2f}x")

    if args.memex > 0:
        with tempfile.TemporaryDirectory(prefix="memex-") as tmp:
            info = generate(Path(tmp), args.memex)
            mblobs = _load(Path(tmp))
        msize = sum(len(b) for _, b in mblobs)
        wall, cpu, counts = _rounds({"opencortex": _ours}, mblobs, args.rounds)
        n = counts["opencortex"]
        w, c = statistics.median(wall["opencortex"]), statistics.median(cpu["opencortex"])
        print(f"generated memex: {info['files']} files  bytes={msize:,}  headlines={n}"
              f"  rounds={args.rounds}")
        print(f"  opencortex median {w:.3f} s  {w / n * 1e6:6.1f} us/headline"
              f"  (cpu {c / n * 1e6:.1f}, best {min(wall['opencortex']) / n * 1e6:.1f})"
              f"  {msize / w / 1e6:5.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
