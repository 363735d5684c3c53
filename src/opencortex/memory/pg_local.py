"""A throwaway local PostgreSQL (with pgvector) on loopback, for tests, benchmarks and
trying the PostgreSQL store without a server of one's own.

The binaries come from the ``pgserver`` wheel (PostgreSQL 16 + ``vector.so``, no system
packages); a system ``initdb``/``pg_ctl`` is not used because Debian's PostgreSQL has no
pgvector here.  PostgreSQL refuses to run as root, so as root the cluster runs as the
unprivileged user ``pgserver`` (created by pgserver's helper, as pgserver itself does).

    python -m opencortex.memory.pg_local start DIR [--fast]   # prints the URL
    python -m opencortex.memory.pg_local stop DIR
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["available", "start", "stop", "url_of"]

_USER = "pgserver"


def _bin() -> Path:
    from pgserver._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def available() -> str | None:
    """None when a local server can be started here, else why not."""
    try:
        b = _bin()
    except ImportError:
        return "the pgserver wheel is not installed (pip install -e '.[postgres]')"
    if not (b / "postgres").exists():
        return f"pgserver has no postgres binary at {b}"
    return None


def _as_user() -> dict:
    """subprocess kwargs to run as the unprivileged user when we are root."""
    if os.name != "posix" or os.geteuid() != 0:
        return {}
    import stat

    from pgserver.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    ensure_user_exists(_USER)
    b = _bin()
    ensure_prefix_permissions(b)
    ensure_folder_permissions(b, stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH)
    ensure_folder_permissions(b.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
    return {"user": _USER}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def url_of(pgdata: str | Path, database: str = "postgres") -> str:
    port = (Path(pgdata) / "OPENCORTEX_PORT").read_text().strip()
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"


def start(pgdata: str | Path, fast: bool = False, timeout: float = 60) -> str:
    """Initialise (once) and start a cluster in ``pgdata`` listening on 127.0.0.1 only;
    return its URL.  ``fast``: no fsync (test data is disposable)."""
    pgdata = Path(pgdata).resolve()
    kw = _as_user()
    b = _bin()
    if not (pgdata / "PG_VERSION").exists():
        pgdata.mkdir(parents=True, exist_ok=True)
        if kw:
            import pwd

            from pgserver.utils import ensure_prefix_permissions

            ensure_prefix_permissions(pgdata)
            pw = pwd.getpwnam(_USER)
            os.chown(pgdata, pw.pw_uid, pw.pw_gid)
        subprocess.run([str(b / "initdb"), "-D", str(pgdata), "--auth=trust", "-U", "postgres",
                        "--encoding=UTF8", "--locale=C"], check=True, capture_output=True,
                       timeout=timeout, **kw)
    port = _free_port()
    opts = f"-h 127.0.0.1 -p {port} -k ''"
    if fast:
        opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    opts += " -c max_connections=200 -c shared_buffers=256MB"
    log = pgdata / "server.log"
    subprocess.run([str(b / "pg_ctl"), "-D", str(pgdata), "-w", "-t", str(int(timeout)),
                    "-l", str(log), "-o", opts, "start"], check=True, capture_output=True,
                   timeout=timeout + 5, **kw)
    (pgdata / "OPENCORTEX_PORT").write_text(str(port))
    url = url_of(pgdata)
    deadline = time.monotonic() + timeout
    import psycopg

    while True:
        try:
            with psycopg.connect(url, connect_timeout=3) as c:
                c.execute("CREATE EXTENSION IF NOT EXISTS vector")
            return url
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def stop(pgdata: str | Path) -> None:
    """Stop the cluster (fast shutdown); a stopped or missing one is fine."""
    pgdata = Path(pgdata).resolve()
    if not (pgdata / "postmaster.pid").exists():
        return
    subprocess.run([str(_bin() / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"],
                   capture_output=True, timeout=60, **_as_user())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opencortex.memory.pg_local")
    ap.add_argument("action", choices=["start", "stop", "url"])
    ap.add_argument("pgdata")
    ap.add_argument("--fast", action="store_true", help="no fsync (tests, benchmarks)")
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds initdb and the start may take (a loaded machine: more)")
    a = ap.parse_args(argv)
    if a.action == "start":
        why = available()
        if why:
            print(why, file=sys.stderr)
            return 2
        print(start(a.pgdata, fast=a.fast, timeout=a.timeout))
    elif a.action == "stop":
        stop(a.pgdata)
    else:
        print(url_of(a.pgdata))
    return 0


if __name__ == "__main__":
    sys.exit(main())
