"""`opencortex ask` start-to-answer time as a fresh process on a copy of examples/memex, base
vs head: the median of N runs per request, runs of the two interleaved so machine load hits
both alike.

Run: .venv/bin/python bench/ask_latency.py [--base SRC] [--head SRC] [-n 7] [--request TEXT]…
     [--workdir DIR] [--json] [--fresh]

SRC is a checkout's ``src`` folder (default: base = ../main/src, head = this checkout's).
Each side gets its own memex copy, XDG dirs and bytecode cache (PYTHONPYCACHEPREFIX: nothing is
written into either checkout); the model caches (embedder graph, router classifier) are shared
and warm, and one untimed run per request first builds the index and the bytecode — what a
person's every request after the first sees.  Writing requests accumulate on their side's copy
alike.  Prints one row per request (median wall seconds), the median CPU seconds of a run
(less sensitive to other work on the machine than wall time; the start-up thread lowers wall
time, not CPU time) and one JSON line with the load average before and after.

``--fresh`` times the first request of a fresh install instead: every timed run gets a new
memex copy and empty XDG dirs (no index, no model caches: whatever the package does not ship
is built in that run), only the bytecode cache stays warm (an installed package has its .pyc).
Each side then runs in its own virtualenv over this interpreter's packages, into which the
side's set-up step (scripts/setup.sh: ``opencortex.embed.minilm.prebuild``, where the side has
it) has put what an install puts there — untimed, as an installation is.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = (
    "what's on my agenda today?",
    "remind me to call the plumber tomorrow at 10am",
    "the kitchen tap washer got sorted",
    "what do my notes say about caching?",
)


def _side(work: Path, name: str, src: Path, models: Path | None,
          pyc: Path | None = None) -> dict[str, object]:
    """A memex copy and an environment for one side (``models`` None: empty model caches)."""
    d = work / name
    mx = d / "memex"
    if not mx.exists():
        shutil.copytree(ROOT / "examples" / "memex", mx)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH") and not k.startswith("OPENCORTEX_")}
    env.update({f"XDG_{k}_HOME": str(d / k.lower()) for k in ("CACHE", "STATE", "CONFIG", "DATA")})
    env.update(HOME=str(d / "home"), PYTHONPATH=str(src),
               PYTHONPYCACHEPREFIX=str(pyc or d / "pyc"))
    cache = d / "cache" / "opencortex"
    cache.mkdir(parents=True, exist_ok=True)
    for sub in ("embed", "router") if models is not None else ():
        (models / sub).mkdir(parents=True, exist_ok=True)
        if not (cache / sub).exists():
            (cache / sub).symlink_to(models / sub)
    return {"memex": str(mx), "env": env}


def _install(work: Path, name: str, src: Path) -> str:
    """A virtualenv for one side over this interpreter's packages (PYTHONPATH), with the
    side's install-time derived files (``prebuild``, if the side has it); its python."""
    import sysconfig

    venv = work / f"{name}-venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src),
                                                         sysconfig.get_paths()["purelib"]])}
    subprocess.run([py, "-c", "try:\n from opencortex.embed.minilm import prebuild\n"
                    "except ImportError:\n pass\nelse:\n prebuild()"], env=env, check=True,
                   timeout=900)
    return py


TIMEOUT = 300.0
"""Seconds one `ask` may take (``--timeout``)."""


def _run(side: dict[str, object], text: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one fresh `ask` process."""
    cmd = [str(side.get("python") or sys.executable), "-c", "from opencortex.cli import main; main()", "ask", text,
           "--memex", str(side["memex"]), "--json"]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=side["env"], capture_output=True, text=True,  # type: ignore[arg-type]
                       timeout=TIMEOUT)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"ask {text!r} failed ({p.returncode}): {p.stderr[-400:]}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> int:
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default=str(ROOT.parent / "main" / "src"))
    ap.add_argument("--head", default=str(ROOT / "src"))
    ap.add_argument("-n", type=int, default=7)
    ap.add_argument("--request", action="append", default=None)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--json", action="store_true", help="only the JSON line")
    ap.add_argument("--timeout", type=float, default=TIMEOUT,
                    help="seconds one ask may take (a first ask that trains can be minutes)")
    ap.add_argument("--fresh", action="store_true",
                    help="time a fresh install's first request (empty XDG dirs every run)")
    a = ap.parse_args()
    TIMEOUT = a.timeout
    work = Path(a.workdir or tempfile.mkdtemp(prefix="ask-latency-"))
    models = work / "models"
    sides = {"base": Path(a.base), "head": Path(a.head)}
    sides = {k: v for k, v in sides.items() if (v / "opencortex").is_dir()}
    if not sides:
        print("no checkout to time (give --base/--head SRC)", file=sys.stderr)
        return 2
    reqs = a.request or list(REQUESTS)
    runs = iter(range(10**9))

    import sysconfig

    pythons = {k: _install(work, k, v) for k, v in sides.items()} if a.fresh else {}

    def fresh(k: str) -> dict[str, object]:
        """A never-used memex copy and empty XDG dirs; the side's bytecode cache kept."""
        side = _side(work, f"{k}-fresh-{next(runs)}", sides[k], None, work / f"{k}-pyc")
        env = dict(side["env"])  # type: ignore[call-overload]
        env["PYTHONPATH"] = os.pathsep.join([str(sides[k]), sysconfig.get_paths()["purelib"]])
        return {**side, "env": env, "python": pythons[k]}

    env = {k: _side(work, k, v, models) for k, v in sides.items()}
    if a.fresh:
        for k in env:  # warm only the bytecode (what an installed package ships)
            fresh(k)
            _run(fresh(k), reqs[0])
    else:
        for k in env:  # warm: index, bytecode, and the model caches on the first side
            for r in reqs:
                _run(env[k], r)
    times: dict[str, dict[str, list[float]]] = {k: {r: [] for r in reqs} for k in env}
    cpu: dict[str, list[float]] = {k: [] for k in env}
    load0 = os.getloadavg()[0]
    for _ in range(a.n):
        for r in reqs:
            for k in env:
                wall, c = _run(fresh(k) if a.fresh else env[k], r)
                times[k][r].append(wall)
                cpu[k].append(c)
    med = {k: {r: round(statistics.median(v), 3) for r, v in t.items()} for k, t in times.items()}
    overall = {k: round(statistics.median([x for v in t.values() for x in v]), 3)
               for k, t in times.items()}
    cpu_med = {k: round(statistics.median(v), 3) for k, v in cpu.items()}
    if not a.json:
        print(f"{'request (median wall s)':<50} " + " ".join(f"{k:>8}" for k in env))
        for r in reqs:
            print(f"{r[:50]:<50} " + " ".join(f"{med[k][r]:>8.3f}" for k in env))
        print(f"{'median of all runs':<50} " + " ".join(f"{overall[k]:>8.3f}" for k in env))
        print(f"{'median CPU s (user+sys) of a run':<50} "
              + " ".join(f"{cpu_med[k]:>8.3f}" for k in env))
    # the load average says how far the machine's other work inflates these numbers
    print(json.dumps({"bench": "ask_latency", "fresh": a.fresh, "n": a.n, "median_s": overall,
                      "median_cpu_s": cpu_med, "per_request": med,
                      "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
