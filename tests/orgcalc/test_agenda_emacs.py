"""`opencortex agenda --json` lists exactly what Emacs's own `org-agenda-list` lists.

Emacs runs with Org's default settings (no diary, no time grid, `org-agenda-files` = every
Org file of the memex, "today" = the first day) over generated files holding every
timestamp form (``agenda_files``) plus the example memex, for a 7- and a 14-day span.
Compared: (date, file, headline line, type, time) of every item, as multisets.  Items Emacs
makes by evaluating a diary sexp are left out: OpenCortex never evaluates one (it counts
them instead)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections import Counter
from pathlib import Path

import pytest

from .agenda_files import forms_file, random_file
from .conftest import EXAMPLE_MEMEX, read_jsonl, run_elisp

pytestmark = pytest.mark.emacs

TODAY = dt.date(2026, 12, 7)


def _emacs_items(memex: Path, start: dt.date, days: int, out: Path) -> Counter:
    files = sorted(str(p) for p in memex.rglob("*.org"))
    run_elisp("agenda_dump.el", str(memex), start.isoformat(), str(days), str(out), *files)
    return Counter((r["date"], r["file"], r["line"], r["type"], r["time"])
                   for r in read_jsonl(out) if not r.get("sexp"))


def _ours(data: dict) -> Counter:
    return Counter((it["date"], it["file"], it["line"], it["type"], it["time"])
                   for day in data["days"] for it in day["items"])


def _memex(tmp_path: Path, today: dt.date) -> Path:
    memex = tmp_path / "memex"
    shutil.copytree(EXAMPLE_MEMEX, memex)
    (memex / "forms.org").write_text(forms_file(today), encoding="utf-8")
    for seed in range(3):
        (memex / f"random{seed}.org").write_text(random_file(seed, today), encoding="utf-8")
    return memex


@pytest.mark.parametrize(("today", "days"), [(TODAY, 7), (TODAY, 14),
                                             (dt.date(2026, 11, 30), 14)])
def test_agenda_equals_org_agenda_list(tmp_path: Path, opencortex_json, today: dt.date,
                                       days: int) -> None:
    memex = _memex(tmp_path, TODAY)
    theirs = _emacs_items(memex, today, days, tmp_path / "emacs.jsonl")
    data = opencortex_json("agenda", "--memex", str(memex), "--today", today.isoformat(),
                           "--days", str(days))
    ours = _ours(data)
    assert len(theirs) > 50  # the files do exercise the agenda
    assert {t for _, _, _, t, _ in theirs} >= {"timestamp", "block", "scheduled",
                                               "past-scheduled", "deadline",
                                               "upcoming-deadline"}
    missing, extra = theirs - ours, ours - theirs
    assert not missing and not extra, (sorted(missing)[:20], sorted(extra)[:20])
    assert data["skipped_sexps"] >= 1
    assert [d["date"] for d in data["days"]] == [
        (today + dt.timedelta(days=k)).isoformat() for k in range(days)]
