"""Two daemons on one PostgreSQL store and one memex, editing and re-indexing at once
(bench/two_serve.py; 10 s here, ``--seconds 60`` for the full run)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ..conftest import EXAMPLE, REPO

pytest.importorskip("uvicorn")
sys.path.insert(0, str(REPO / "bench"))

from two_serve import run


def test_two_serve_processes_end_with_a_fresh_index(pg_server: str, pg_schema: str,
                                                    tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "memex")
    seconds = float(os.environ.get("OPENCORTEX_TWO_SERVE_SECONDS", "10"))
    res = run(tmp_path / "memex", pg_server, pg_schema, seconds, tmp_path)
    assert res["alive"] == [True, True], res["log_tail"]
    # enough edits to interleave the two daemons many times (not a throughput figure: CI runs
    # two lanes on two cores, and a busy machine makes 10 s hold fewer)
    assert res["edits"] >= 10 and res["searches"] == res["edits"], res
    assert res["http_errors"] == 0, res
    assert res["equal"], res
    assert res["tracebacks"] == 0, res["log_tail"]
