"""Every test runs with its own XDG dirs and no OPENCORTEX_* settings from the host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLE = REPO / "examples" / "memex"
DUMP_EL = SHARED / "tools" / "orgfid" / "dump.el"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("xdg")
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    for k in list(os.environ):
        if k.startswith("OPENCORTEX_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("OPENCORTEX_NO_PROGRESS", "1")


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    """A private copy of the example memex."""
    dst = tmp_path / "memex"
    shutil.copytree(EXAMPLE, dst)
    return dst


def emacs_dump(path: Path) -> list[dict]:
    """What Emacs's org-element makes of a file (the orgfid schema)."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (scripts/setup.sh installs emacs-nox)")
    out = path.parent / (path.name + ".emacs.jsonl")
    subprocess.run([emacs, "-Q", "--batch", "-l", str(DUMP_EL), "--", "--root",
                    str(path.parent), "--out", str(out), str(path)],
                   check=True, capture_output=True, timeout=120)
    recs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    out.unlink()
    return [r for r in recs if r.get("type") == "headline"]


@pytest.fixture
def html_page():
    """Serve one HTML page on a loopback port: ``html_page(body) -> url``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    servers = []

    def serve(body: bytes) -> str:
        class Page(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a: object) -> None:
                pass

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Page)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/page"

    yield serve
    for s in servers:
        s.shutdown()
        s.server_close()
