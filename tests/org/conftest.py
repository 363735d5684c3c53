"""Shared helpers for the Org parser tests."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ..conftest import DUMP_EL


def links_of(doc, i: int | None = None) -> list[tuple[str, str]]:
    """(type, path) of the links of heading ``i`` (preamble when None)."""
    links = doc.preamble_links if i is None else doc.headings[i].links
    return [(lk.type, lk.path) for lk in links]


@pytest.fixture
def emacs_dump(tmp_path):
    """Run Emacs's org-element on an Org string; returns its records (org_element_dump.el)."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (scripts/setup.sh installs emacs-nox)")

    def run(text: str) -> list[dict]:
        import json

        f = tmp_path / "e.org"
        f.write_text(text, encoding="utf-8")
        out = tmp_path / "e.jsonl"
        subprocess.run([emacs, "-Q", "--batch", "-l", str(DUMP_EL), "--",
                        "--root", str(tmp_path), "--out", str(out), str(f)],
                       check=True, capture_output=True, timeout=120)
        return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]

    return run
