"""What the bubblewrap sandbox adds to one shell command, and what the argument check costs.

    .venv/bin/python bench/sandbox_latency.py [--runs 20] [--json]

Runs ``true`` through the guard's runner with and without the sandbox (median, p95 over
``--runs``), and times ``check_argv`` on a typical read-only git command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def _ms(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs) * 1000, 2),
            "p95_ms": round(xs[min(len(xs) - 1, int(len(xs) * 0.95))] * 1000, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from opencortex.guard import GuardPolicy, check_argv, run_shell
    from opencortex.guard.sandbox import status

    policy = GuardPolicy.from_config({"guard": {"shell": {"allow": ["true"]}}})
    box = status(policy.shell)
    root = Path(tempfile.mkdtemp(prefix="oc-sbx-"))
    out: dict = {"sandbox": box.detail, "runs": args.runs}
    for label, sandbox in (("direct", False), ("sandboxed", True)):
        if sandbox and not box.available:
            continue
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            run_shell(["true"], policy, root, memex_root=root, sandbox=sandbox)
            times.append(time.perf_counter() - t)
        out[label] = _ms(times)
    if "sandboxed" in out:
        out["extra_ms"] = round(out["sandboxed"]["median_ms"] - out["direct"]["median_ms"], 2)
    argv = ["git", "log", "-5", "--oneline", "--stat", "--", "gtd.org"]
    t = time.perf_counter()
    for _ in range(2000):
        check_argv(argv, policy)
    out["check_argv_us"] = round((time.perf_counter() - t) / 2000 * 1e6, 1)
    print(json.dumps(out, indent=None if args.json else 1))


if __name__ == "__main__":
    main()
