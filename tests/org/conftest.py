"""Shared helpers for the Org parser tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ORGFID = Path("/work/shared/tools/orgfid")
CORPUS = Path("/work/shared/corpus/org/files")
REFERENCE = Path("/work/shared/corpus/org/emacs-org-9.5.5.jsonl")


def links_of(doc, i: int | None = None) -> list[tuple[str, str]]:
    """(type, path) of the links of heading ``i`` (preamble when None)."""
    links = doc.preamble_links if i is None else doc.headings[i].links
    return [(lk.type, lk.path) for lk in links]


@pytest.fixture
def emacs_dump(tmp_path):
    """Run Emacs's org-element on an Org string; returns its orgfid records."""
    emacs = shutil.which("emacs")
    if emacs is None or not (ORGFID / "dump.el").exists():
        pytest.skip("emacs not available")

    def run(text: str) -> list[dict]:
        import json

        f = tmp_path / "e.org"
        f.write_text(text, encoding="utf-8")
        out = tmp_path / "e.jsonl"
        subprocess.run([emacs, "-Q", "--batch", "-l", str(ORGFID / "dump.el"), "--",
                        "--root", str(tmp_path), "--out", str(out), str(f)],
                       check=True, capture_output=True, timeout=120)
        return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]

    return run
