"""Run Emacs's own Org on files and read back what it computed (the judge for the agenda,
clock sums and match queries): ``emacs -Q --batch``, Org's default settings."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).parent
EXAMPLE_MEMEX = HERE.parents[1] / "examples" / "memex"


def emacs_or_skip() -> str:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed")
    return emacs


def run_elisp(script: str, *args: str, timeout: int = 300) -> None:
    """``emacs -Q --batch -l tests/orgcalc/SCRIPT -- ARGS`` (fails the test on error)."""
    emacs = emacs_or_skip()
    p = subprocess.run([emacs, "-Q", "--batch", "-l", str(HERE / script), "--", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture
def opencortex_json(tmp_path: Path) -> Callable[..., dict]:
    """``opencortex ARGS --json`` through the real CLI entry point, parsed."""
    from click.testing import CliRunner

    from opencortex.cli import cli

    def run(*args: str) -> dict:
        res = CliRunner().invoke(cli, [*args, "--index", str(tmp_path / "index.sqlite3"),
                                       "--json"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return json.loads(res.output)

    return run
