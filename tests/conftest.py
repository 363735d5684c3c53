"""Every test runs with its own XDG dirs and no OPENCORTEX_* settings from the host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "memex"
DUMP_EL = REPO / "tests" / "org" / "org_element_dump.el"
"""The project's own Emacs org-element dump (the reference the parser tests compare with)."""


TEST_STORE = os.environ.get("OPENCORTEX_TEST_STORE", "sqlite").strip().lower() or "sqlite"
"""Which index store every test's memex uses: ``sqlite`` (default) or ``postgresql``
(each test then gets a fresh schema on one session-wide PostgreSQL server).  Read at
import: the autouse fixture below strips OPENCORTEX_* from the environment."""
SHARED_DERIVED = Path(tempfile.gettempdir()) / f"opencortex-tests-derived-{os.getuid()}"
"""Where the content-keyed derived caches (MiniLM graph, router classifier) of the tests live."""
_PG_URL = os.environ.get("OPENCORTEX_TEST_PG_URL")
"""A running server to use (``.ci/run`` starts one); else the tests start their own."""


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory):
    """The URL of a PostgreSQL (with pgvector) for this test session; skips, saying why,
    only when none can be started."""
    if _PG_URL:
        yield _PG_URL
        return
    from opencortex.memory import pg_local

    why = pg_local.available()
    if why:
        pytest.skip(f"PostgreSQL cannot start here: {why}")
    data = tmp_path_factory.mktemp("pgdata")
    try:
        url = pg_local.start(data, fast=True)
    except Exception as e:
        pytest.skip(f"PostgreSQL cannot start here: {type(e).__name__}: {e}")
    yield url
    pg_local.stop(data)


@pytest.fixture
def pg_schema(pg_server: str):
    """A fresh, empty schema name on the session server (dropped afterwards)."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_server, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


STORE_FREE = ("tests/org/", "tests/guard/", "tests/embed/", "tests/router/", "tests/llm/",
              "tests/security/test_shell_redteam.py", "tests/security/test_sandbox.py",
              "tests/security/test_shell_guard.py", "tests/security/test_fifo.py",
              "tests/security/test_linear_parsers.py", "tests/security/test_ssrf_host.py",
              "tests/security/test_model_answer_caps.py", "tests/security/test_inline_babel.py",
              "tests/security/test_trust_redteam.py", "tests/security/test_code_trust.py",
              "tests/write/test_markdown_org.py", "tests/skills/test_gtd_questions.py",
              "tests/skills/test_gtd_slots.py", "tests/tui/test_pty.py", "tests/emacs/",
              "tests/test_errors.py", "tests/test_public_api.py", "tests/test_settings.py")
"""Tests whose subject is not the index store (the parser, the guard and its sandbox, the
embedder, the router, the model client and its caps, reading FIFOs, the linear-time parsers,
address checks, Babel neutralising, skill trust, Markdown rendering, question form and
GTD slots, TUI keys, the Emacs package, the error tree, settings, the public names): most never
open one, the rest would exercise the same code either way. The PostgreSQL pass skips them;
the SQLite pass runs them (CI time)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if TEST_STORE != "postgresql":
        return
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
        if rel.startswith(STORE_FREE):
            item.add_marker(pytest.mark.skip(reason="store-independent: the SQLite pass ran it"))
            continue
        m = item.get_closest_marker("sqlite_only")
        if m is not None:
            why = m.args[0] if m.args else "about the SQLite index file"
            item.add_marker(pytest.mark.skip(reason=f"sqlite_only: {why}"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"opencortex index store under test: {TEST_STORE}"


@pytest.fixture(autouse=True)
def _isolated_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("xdg")
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    # Derived, content-keyed caches shared by every test and test run: the MiniLM graph
    # built from the weights and the router's trained classifier (seconds to a minute each,
    # which every subprocess of every test would otherwise pay again). Nothing else is shared.
    mine = home / "xdg_cache_home" / "opencortex"
    mine.mkdir(parents=True)
    for sub in ("embed", "router"):
        (SHARED_DERIVED / sub).mkdir(parents=True, exist_ok=True)
        (mine / sub).symlink_to(SHARED_DERIVED / sub, target_is_directory=True)
    for k in list(os.environ):
        if k.startswith("OPENCORTEX_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("OPENCORTEX_NO_PROGRESS", "1")
    monkeypatch.setenv("OPENCORTEX_RECALL_DEFAULTS", "0")  # never the host's transcripts
    if TEST_STORE == "postgresql" and request.node.get_closest_marker("sqlite_only") is None:
        # every Memex (in-process or a CLI/serve subprocess) of this test: its own schema
        monkeypatch.setenv("OPENCORTEX_STORE_URL", request.getfixturevalue("pg_server"))
        monkeypatch.setenv("OPENCORTEX_STORE_SCHEMA", request.getfixturevalue("pg_schema"))
        # recall's record index in the store too (its local-SQLite default is the code
        # the SQLite pass already runs)
        monkeypatch.setenv("OPENCORTEX_RECALL_INDEX", "store")


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    """A private copy of the example memex."""
    dst = tmp_path / "memex"
    shutil.copytree(EXAMPLE, dst)
    return dst


def emacs_dump(path: Path) -> list[dict]:
    """What Emacs's org-element makes of a file (headline records, orgfid schema)."""
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


@pytest.fixture(scope="session", autouse=True)
def _trained_router(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Load the router's classifier (shipped in the package; trained and cached in
    SHARED_DERIVED only if the bundled data changed without a rebuild) and the embedder
    before any test, whose deadlines measure the pipeline, not that one-time cost."""
    cache = tmp_path_factory.mktemp("warm-cache")
    (cache / "opencortex").mkdir()
    for sub in ("embed", "router"):
        (SHARED_DERIVED / sub).mkdir(parents=True, exist_ok=True)
        (cache / "opencortex" / sub).symlink_to(SHARED_DERIVED / sub, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        try:
            from opencortex.router.decompose import verdict

            verdict("warm up")
        except Exception:  # no embedder installed: the tests that need it say so
            pass
