"""Emacs's org-element view of many files in one Emacs run (start-up is the slow part)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import DUMP_EL

HEADLINE_FIELDS = ("level", "title", "todo", "priority", "tags", "comment", "id", "properties",
                   "scheduled", "deadline", "closed", "body_hash", "links")
FILE_FIELDS = ("keywords", "todo_keywords", "done_keywords", "headline_count")


def emacs_dump_many(paths: list[Path], root: Path) -> dict[str, dict]:
    """``{relative path: {"file": file record, "headlines": [records]}}`` for ``paths``."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (scripts/setup.sh installs emacs-nox)")
    lst = root / ".emacs-list.txt"
    out = root / ".emacs-dump.jsonl"
    lst.write_text("\n".join(str(p) for p in paths) + "\n", encoding="utf-8")
    subprocess.run([emacs, "-Q", "--batch", "-l", str(DUMP_EL), "--", "--root", str(root),
                    "--out", str(out), "--list", str(lst)],
                   check=True, capture_output=True, timeout=600)
    res: dict[str, dict] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("type") == "file":
            assert r.get("error") is None, r
            res.setdefault(r["file"], {"headlines": []})["file"] = r
        elif r.get("type") == "headline":
            res.setdefault(r["file"], {"headlines": []})["headlines"].append(r)
    lst.unlink()
    out.unlink()
    return res


def entry_facts(h: dict) -> tuple:
    return tuple(json.dumps(h.get(k), sort_keys=True) for k in HEADLINE_FIELDS)


def file_facts(f: dict) -> dict:
    return {k: f.get(k) for k in FILE_FIELDS if k != "headline_count"}
