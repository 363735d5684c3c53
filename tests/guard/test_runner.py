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
