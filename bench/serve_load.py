"""Load test of the daemon on loopback: N concurrent keep-alive clients per endpoint.

    .venv/bin/python bench/serve_load.py [--clients 50] [--duration 5] [--url URL --token T]
    .venv/bin/python bench/serve_load.py --base ../wt-old/src [--head src] [--rounds 3]

Without --url it starts `python -m opencortex.server serve` (rate limit off, heartbeat
off) over a private copy of examples/memex with its own XDG dirs.  Phases run one after
another: GET /healthz, GET /v1/search?q=…, POST /v1/chat (non-streaming).  Each client
is a thread with one HTTP/1.1 keep-alive connection.  Reports requests/s and p50/p99
latency per endpoint and the error count (any non-2xx or failed request), as a markdown
table and one JSON line.  With ``--base``: each side (a checkout's ``src``) serves in
turn, alternating round by round so machine load hits both alike; prints each side's
median req/s and p50/p99 per endpoint, head/base ratios and the load average.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["caching strategies", "invoice export", "weekly review", "postgres", "emacs"]


def _pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def phase(host: str, port: int, token: str, name: str, clients: int, duration: float,
          max_requests: int) -> dict:
    """``clients`` threads hammer one endpoint until ``duration`` or ``max_requests``."""
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    count = [0]
    stop = time.monotonic() + duration
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        c = http.client.HTTPConnection(host, port, timeout=120)
        hdr = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        mine: list[float] = []
        errs: list[str] = []
        start.wait()
        n = 0
        while time.monotonic() < stop:
            with lock:
                if count[0] >= max_requests:
                    break
                count[0] += 1
            n += 1
            if name == "healthz":
                method, path, body = "GET", "/healthz", None
            elif name == "search":
                q = QUERIES[(i + n) % len(QUERIES)].replace(" ", "+")
                method, path, body = "GET", f"/v1/search?q={q}&k=10", None
            else:
                method, path = "POST", "/v1/chat"
                body = json.dumps({"message": QUERIES[(i + n) % len(QUERIES)],
                                   "session": f"bench-{i}"})
            t0 = time.perf_counter()
            try:
                c.request(method, path, body=body, headers=hdr)
                r = c.getresponse()
                r.read()
                if not 200 <= r.status < 300:
                    errs.append(f"{name}: HTTP {r.status}")
            except (OSError, http.client.HTTPException) as e:
                errs.append(f"{name}: {type(e).__name__}: {e}")
                c.close()
                c = http.client.HTTPConnection(host, port, timeout=120)
            mine.append(time.perf_counter() - t0)
        c.close()
        with lock:
            lat.extend(mine)
            errors.extend(errs)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"endpoint": name, "clients": clients, "requests": len(lat),
            "rps": round(len(lat) / wall, 1), "p50_ms": round(_pct(lat, 50) * 1000, 1),
            "p99_ms": round(_pct(lat, 99) * 1000, 1), "errors": len(errors),
            "first_errors": sorted(set(errors))[:3], "seconds": round(wall, 2)}


def start_daemon(work: Path) -> tuple[subprocess.Popen, int, str]:
    shutil.copytree(REPO / "examples" / "memex", work / "memex")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "bench-token-0123456789abcdef"
    env = {**os.environ, "OPENCORTEX_TOKEN": token, "OPENCORTEX_NO_PROGRESS": "1"}
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        env[var] = str(work / var.lower())
    proc = subprocess.Popen(
        [sys.executable, "-m", "opencortex.server", "serve", "--memex", str(work / "memex"),
         "--index", str(work / "i.sqlite3"), "--port", str(port), "--rate", "0",
         "--heartbeat", "0", "--log-level", "warning"], env=env)
    for _ in range(1200):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return proc, port, token
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the daemon did not come up")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=5.0, help="Seconds per endpoint.")
    ap.add_argument("--max-requests", type=int, default=100_000,
                    help="Cap per endpoint (bounded load).")
    ap.add_argument("--url", default=None, help="A running daemon (default: start one).")
    ap.add_argument("--token", default=os.environ.get("OPENCORTEX_TOKEN"))
    ap.add_argument("--endpoints", default="healthz,search,chat")
    ap.add_argument("--base", default=None, help="a checkout's src: compare against it")
    ap.add_argument("--head", default=str(REPO / "src"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.base:
        compare(args)
        return
    proc = None
    work = Path(tempfile.mkdtemp(prefix="oc-serve-load-"))
    try:
        if args.url:
            u = urlparse(args.url)
            host, port, token = u.hostname or "127.0.0.1", u.port or 8765, args.token or ""
        else:
            proc, port, token = start_daemon(work)
            host = "127.0.0.1"
        rows = [phase(host, port, token, name, args.clients, args.duration, args.max_requests)
                for name in args.endpoints.split(",")]
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.clients} concurrent keep-alive clients, {args.duration:g} s per endpoint, "
          f"{os.cpu_count()} CPUs\n")
    print("| endpoint | requests | req/s | p50 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['endpoint']} | {r['requests']} | {r['rps']} | {r['p50_ms']} | "
              f"{r['p99_ms']} | {r['errors']} |")
    print(json.dumps({"bench": "serve_load", "clients": args.clients,
                      "duration": args.duration, "results": rows}))
    if any(r["errors"] for r in rows):
        sys.exit(1)


def compare(args: argparse.Namespace) -> None:
    """Base and head daemons in turn, ``--rounds`` runs each: medians and head/base."""
    import statistics

    sides = {"base": args.base, "head": args.head}
    runs: dict[str, list[dict]] = {k: [] for k in sides}
    load0 = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, src in sides.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCORTEX_")}
            env["PYTHONPATH"] = src
            p = subprocess.run([sys.executable, __file__, "--clients", str(args.clients),
                                "--duration", str(args.duration), "--max-requests",
                                str(args.max_requests), "--endpoints", args.endpoints],
                               env=env, capture_output=True, text=True, timeout=1800)
            last = p.stdout.strip().splitlines()[-1:] or ["{}"]
            got = json.loads(last[0]) if last[0].startswith("{") else {}
            runs[name].append({r["endpoint"]: r for r in got.get("results", [])})
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name in sides:
        table[name] = {}
        for ep in args.endpoints.split(","):
            rows = [r[ep] for r in runs[name] if ep in r]
            table[name][ep] = {f: round(statistics.median(r[f] for r in rows), 1)
                               if rows else float("nan")
                               for f in ("rps", "p50_ms", "p99_ms", "errors")}
    ratios = {ep: {f: round(table["head"][ep][f] / table["base"][ep][f], 2)
                   if table["base"][ep][f] else None for f in ("rps", "p50_ms", "p99_ms")}
              for ep in args.endpoints.split(",")}
    print(json.dumps({"bench": "serve_load", "clients": args.clients,
                      "duration": args.duration, "rounds": args.rounds, "median": table,
                      "head_over_base": ratios,
                      "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}, indent=1))


if __name__ == "__main__":
    main()
