"""The runner is the only way src/ starts a program over untrusted bytes: a grep of src/
for every way Python starts one finds only the modules listed here, each with its reason."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "opencortex"

ALLOWED = {
    "guard/runner.py": "the runner itself",
    "guard/sandbox.py": "probes once whether bubblewrap can start (`bwrap ... true`)",
    "memory/pg_local.py": "starts and stops the person's own local PostgreSQL server "
                          "(a long-lived daemon that must write its data directory and "
                          "listen on a socket: it cannot run in the read-only sandbox); its "
                          "argv is fixed, no untrusted bytes reach it",
}
_STARTS = re.compile(r"\bsubprocess\b|\bPopen\b|\bos\.(?:system|popen|exec\w*|spawn\w*|"
                     r"posix_spawn\w*|fork\w*)\b|\bpty\.spawn\b|asyncio\.create_subprocess")


def test_only_the_runner_starts_programs() -> None:
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        hits = [n for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                if _STARTS.search(line.split("#", 1)[0])]
        if hits:
            found[rel] = hits
    extra = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not extra, f"start programs through opencortex.guard.runner.run, not: {extra}"
    assert "guard/runner.py" in found


def test_a_program_under_tmp_runs_in_the_sandbox(tmp_path: Path) -> None:
    """The sandbox gives the child a fresh /tmp: a program that lives under /tmp (a
    virtualenv's rg in a checkout there, as CI's clean clone has) is bound back, and a box
    that cannot start its program is an error, never an exit status read as "no matches"."""
    import shutil

    import pytest

    from opencortex.errors import ShellError
    from opencortex.guard import runner
    from opencortex.guard.sandbox import status
    from opencortex.guard.shell import ShellPolicy

    if not status(ShellPolicy()).available:
        pytest.skip("bubblewrap cannot run here")
    rg = shutil.which("rg")
    if rg is None:
        pytest.skip("no ripgrep")
    assert str(tmp_path).startswith("/tmp/")
    (tmp_path / "bin").mkdir()
    local = shutil.copy(rg, tmp_path / "bin" / "rg")
    ran = runner.run([str(local), "--version"], cwd=tmp_path, timeout=30, sandbox=True,
                     exe=str(local))
    assert ran.returncode == 0 and b"ripgrep" in ran.stdout, ran
    gone = tmp_path / "bin" / "gone"
    gone.write_bytes(b"")
    gone.chmod(0o755)
    with pytest.raises(ShellError, match="sandbox could not start"):
        runner.run([str(gone)], cwd=tmp_path, timeout=30, sandbox=True, exe="/nonexistent/x")
