"""Agenda speed: Org's day agenda (``opencortex agenda``) over a generated memex of N nodes.

The memex is ``memex_gen``'s (N nodes in N/50 files, TODOs scheduled through December),
with appointments added to a share of the entries: active timestamps with and without
times, repeaters, date ranges and deadlines with warning periods.  It is indexed once;
then ``Memex.day_agenda`` (read the rows that can reach the span from the index + Org's
per-day rules) runs ``rounds`` times for a 7-day span; the median wall time is reported,
with the process's CPU time (the machine's load average is printed: on a shared machine
wall time is mostly waiting) and the time to render the result as JSON.

    .venv/bin/python bench/agenda_speed.py [--nodes 100000] [--days 7] [--rounds 15] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENCORTEX_NO_PROGRESS", "1")

TODAY = dt.date(2026, 12, 7)
_DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _stamp(d: dt.date, extra: str = "") -> str:
    return f"<{d.isoformat()} {_DOW[d.weekday()]}{' ' + extra if extra else ''}>"


def add_appointments(root: Path, share: float = 0.15, seed: int = 7) -> int:
    """Append an agenda form to ``share`` of the entries of every file; returns how many."""
    rnd = random.Random(seed)
    added = 0
    for f in sorted(root.rglob("*.org")):
        entries = f.read_text(encoding="utf-8").split("\n\n")
        for i in range(1, len(entries)):
            if rnd.random() >= share:
                continue
            d = TODAY + dt.timedelta(days=rnd.randint(-60, 60))
            form = rnd.choice(["ts", "time", "repeat", "range", "deadline"])
            line = {"ts": _stamp(d), "time": _stamp(d, f"{rnd.randint(7, 20)}:00"),
                    "repeat": _stamp(d, rnd.choice(["+1w", "+1m", "+2d"])),
                    "range": f"{_stamp(d)}--{_stamp(d + dt.timedelta(days=3))}",
                    "deadline": ""}[form]
            if form == "deadline":
                head, _, rest = entries[i].partition("\n")
                if rest.startswith(("SCHEDULED", "CLOSED")):
                    continue
                entries[i] = f"{head}\nDEADLINE: {_stamp(d, '-5d')}\n{rest}"
            else:
                entries[i] += f"\n{line}"
            added += 1
        f.write_text("\n\n".join(entries), encoding="utf-8")
    return added


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from memex_gen import generate

    from opencortex.memex import Memex

    tmp = Path(tempfile.mkdtemp(prefix="agenda-speed-"))
    root = tmp / "memex"
    gen = generate(root, args.nodes)
    added = add_appointments(root)
    m = Memex(root, index=tmp / "index.sqlite3")
    t0 = time.perf_counter()
    m.sync()
    index_s = time.perf_counter() - t0
    times, cpu, json_ms = [], [], []
    ag = None
    for _ in range(args.rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        ag = m.day_agenda(today=TODAY, days=args.days)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        t0 = time.perf_counter()
        json.dumps(ag.to_dict())
        json_ms.append((time.perf_counter() - t0) * 1000)
    assert ag is not None
    t = TODAY.toordinal()
    rows = len(m.store.agenda_rows(t, t + args.days - 1, t))
    m.close()
    out = {"nodes": gen["nodes"], "files": gen["files"], "appointments_added": added,
           "rows_read": rows, "days": args.days,
           "items": sum(len(d.items) for d in ag.days), "index_s": round(index_s, 1),
           "median_ms": round(statistics.median(times), 1),
           "min_ms": round(min(times), 1), "max_ms": round(max(times), 1),
           "median_cpu_ms": round(statistics.median(cpu), 1),
           "json_median_ms": round(statistics.median(json_ms), 1),
           "load_avg_1m": round(os.getloadavg()[0], 1), "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>20}: {v}")


if __name__ == "__main__":
    main()
