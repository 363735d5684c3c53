"""Two ``opencortex serve`` daemons on one PostgreSQL store and one memex: concurrent
edits and re-indexing, then the index must equal a fresh index of the files.

    .venv/bin/python bench/two_serve.py [--seconds 60] [--pg URL]

While the clock runs: files are edited directly (append an entry, rewrite an entry's
state, create and delete files) and over HTTP both daemons are told to re-index
(heartbeat events; they also beat on their own every 0.5 s, and embed in the background),
while searches read from both.  The clock starts once the first background embedding of
the memex is done (loading the model stalls both daemons for seconds).  Afterwards both daemons keep running; the check waits
(at most 30 s) for the store to equal a fresh SQLite index of the same files — nodes,
links and file states — without any sync from this script.  tests/store runs it for 10 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

TOKEN = "two-serve-token-0123456789abcdef"
REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _req(port: int, method: str, path: str, body: object = None) -> tuple[int, object]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=None if body is None else json.dumps(body),
              headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data


def _dump(store) -> dict:
    nodes = {n.key: n.to_dict(with_body=True) for n in store.select("1", with_body=True)}
    links = sorted((ln.source_key, ln.type, ln.path, ln.search or "", ln.target_key or "")
                   for k in nodes for ln in store.links_from(k))
    states = {p: (s, h) for p, (_m, s, h) in store.file_states().items()}
    return {"nodes": nodes, "links": links, "files": states}


def run(memex: Path, url: str, schema: str, seconds: float, workdir: Path,
        seed: int = 1) -> dict:
    """Run the scenario; returns a summary with ``equal`` (bool) and counts."""
    from opencortex.memex import Memex

    rng = random.Random(seed)
    env = {**os.environ, "OPENCORTEX_STORE_URL": url, "OPENCORTEX_STORE_SCHEMA": schema,
           "OPENCORTEX_TOKEN": TOKEN}
    ports = [_free_port(), _free_port()]
    procs, logs = [], []
    for i, port in enumerate(ports):
        log = open(workdir / f"serve{i}.log", "wb")
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "from opencortex.cli import main; main()", "serve",
             "--memex", str(memex), "--port", str(port), "--heartbeat", "0.5",
             "--rate", "10000", "--burst", "10000", "--log-level", "warning"],
            # each daemon its own state dir (pid file): as on two machines
            env={**env, "XDG_STATE_HOME": str(workdir / f"state{i}")},
            stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO)))
    out: dict = {"seconds": seconds, "edits": 0, "reindex_requests": 0, "searches": 0,
                 "http_errors": 0}
    try:
        for port in ports:
            for _ in range(600):
                try:
                    if _req(port, "GET", "/healthz")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError(f"serve on {port} did not come up")
        # warm up: the first heartbeats load the embedding model and embed the memex in
        # the background (seconds of CPU that stall both daemons); start the clock when
        # every node has its vector and both answer a search promptly
        import psycopg

        warm = time.monotonic() + 90
        with psycopg.connect(url, autocommit=True) as c:
            c.execute(f'SET search_path TO "{schema}", public')
            while time.monotonic() < warm:
                pending = c.execute(
                    "SELECT count(DISTINCT n.embed_hash) FROM nodes n WHERE NOT EXISTS "
                    "(SELECT 1 FROM embeddings e WHERE e.hash = n.embed_hash)").fetchone()[0]
                nodes = c.execute("SELECT count(*) FROM nodes").fetchone()[0]
                t0 = time.perf_counter()
                for port in ports:
                    _req(port, "GET", "/v1/search?q=warm&k=1&mode=sparse")
                if nodes and not pending and time.perf_counter() - t0 < 0.5:
                    break
                time.sleep(0.5)
        out["warmup_s"] = round(90 - (warm - time.monotonic()), 1)
        created: list[Path] = []
        files = sorted(memex.rglob("*.org"))
        end = time.monotonic() + seconds
        n = 0
        while time.monotonic() < end:
            n += 1
            op = rng.random()
            if op < 0.4:  # append an entry to an existing file
                f = rng.choice(files)
                with f.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n* TODO Two-serve edit {n} :twoserve:\nword{n} body text.\n")
            elif op < 0.55:  # a new file with a link to an ID in another
                f = memex / "twoserve" / f"new-{n}.org"
                f.parent.mkdir(exist_ok=True)
                f.write_text(f"* Note {n}\n:PROPERTIES:\n:ID: two-{n}\n:END:\n"
                             f"See [[id:two-{n - 1}]].\n", encoding="utf-8")
                created.append(f)
            elif op < 0.65 and created:  # delete a file made earlier
                created.pop(rng.randrange(len(created))).unlink(missing_ok=True)
            elif op < 0.8:  # rewrite a TODO keyword in place
                f = rng.choice(files)
                t = f.read_text(encoding="utf-8")
                if "* TODO " in t:
                    f.write_text(t.replace("* TODO ", "* DONE ", 1), encoding="utf-8")
                elif "* DONE " in t:
                    f.write_text(t.replace("* DONE ", "* TODO ", 1), encoding="utf-8")
            out["edits"] += 1
            port = ports[n % 2]
            try:
                st, _ = _req(port, "POST", "/v1/events",
                             {"payload": {"sensor": "heartbeat", "embed": 0}})
                out["reindex_requests"] += 1
                q = urllib.parse.quote(f"word{rng.randint(1, n)} edit")
                st2, _ = _req(ports[(n + 1) % 2], "GET", f"/v1/search?q={q}&k=5&mode=sparse")
                out["searches"] += 1
                out["http_errors"] += (st != 202) + (st2 != 200)
            except OSError:
                out["http_errors"] += 1
            time.sleep(rng.uniform(0.0, 0.05))
        # both daemons still beat every 0.5 s: wait for their index to match the files
        with Memex(memex, index=workdir / f"fresh-{uuid.uuid4().hex[:6]}.sqlite3") as fresh:
            fresh.settings.store_url = None  # the reference is a fresh SQLite index
            fresh.sync()
            want = _dump(fresh.store)
        m = Memex(memex)
        m.settings.store_url, m.settings.store_schema = url, schema
        with m:
            deadline = time.monotonic() + 30
            while True:
                got = _dump(m.store)
                if got == want or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            out["equal"] = got == want
            out["files"], out["nodes"] = len(want["files"]), len(want["nodes"])
            if not out["equal"]:
                out["diff_nodes"] = sorted(set(got["nodes"]) ^ set(want["nodes"]))[:10]
                out["diff_files"] = sorted(p for p in set(got["files"]) | set(want["files"])
                                           if got["files"].get(p) != want["files"].get(p))[:10]
            out["generation"] = m.store.generation()
        out["alive"] = [p.poll() is None for p in procs]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()
    text = "".join((workdir / f"serve{i}.log").read_text(errors="replace") for i in range(2))
    out["tracebacks"] = text.count("Traceback")
    out["log_tail"] = text[-3000:] if out["tracebacks"] else ""
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--pg", default=None, help="postgresql:// URL (default: start a local one)")
    args = ap.parse_args()
    from opencortex.memory import pg_local

    work = Path(tempfile.mkdtemp(prefix="oc-two-serve-"))
    pgdata = None
    url = args.pg
    if url is None:
        pgdata = work / "pg"
        url = pg_local.start(pgdata, fast=True)
    shutil.copytree(REPO / "examples" / "memex", work / "memex")
    try:
        res = run(work / "memex", url, f"two_{uuid.uuid4().hex[:8]}", args.seconds, work)
    finally:
        if pgdata is not None:
            pg_local.stop(pgdata)
    print(json.dumps(res, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if res["equal"] and all(res["alive"]) else 1)


if __name__ == "__main__":
    main()
