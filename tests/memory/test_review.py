"""Reviews over time on the example memex, checked against Emacs: for a fixed week, the
CLOSED items, the clocked minutes of every headline (``org-clock-sum`` with the week's
bounds, so a clock crossing the boundary is clipped as Org clips it) and the journal
entries (the datetree days' children in Emacs's headline dump) are exactly Emacs's; a
running clock is flagged, never counted; the chart renders in a fixed-width terminal;
natural dates resolve; a model's summary keeps only sentences citing items."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.insight.review import resolve_range, review
from opencortex.insight.review_summary import grounded_sentences
from opencortex.memex import Memex

from ..conftest import emacs_dump

WEEK = (dt.date(2026, 11, 23), dt.date(2026, 11, 30))

CLOCK_EL = r"""
(require 'org) (require 'org-clock) (require 'json)
(let ((tstart (nth 0 command-line-args-left)) (tend (nth 1 command-line-args-left))
      (files (nthcdr 2 command-line-args-left)) (out nil))
  (dolist (f files)
    (with-temp-buffer
      (insert-file-contents f)
      (let ((org-inhibit-startup t)) (org-mode))
      (org-clock-sum tstart tend)
      (goto-char (point-min))
      (while (re-search-forward org-outline-regexp-bol nil t)
        (let ((m (get-text-property (line-beginning-position) :org-clock-minutes)))
          (when (and m (> m 0))
            (push (list (cons 'file f) (cons 'line (line-number-at-pos)) (cons 'minutes m))
                  out))))
      (org-map-entries
       (lambda ()
         (let ((c (org-entry-get nil "CLOSED")))
           (when c
             (let ((tm (float-time (org-time-string-to-time c))))
               (when (and (>= tm (float-time (org-time-string-to-time tstart)))
                          (< tm (float-time (org-time-string-to-time tend))))
                 (push (list (cons 'file f) (cons 'line (line-number-at-pos))
                             (cons 'closed c)) out))))))
       nil nil)))
  (princ (json-encode out)))
"""


@pytest.fixture
def week_memex(memex: Path) -> Path:
    """The example memex plus a clock crossing the week's start and a running clock."""
    p = memex / "projects" / "home-server-migration.org"
    text = p.read_text(encoding="utf-8")
    m = re.search(r"^(CLOCK: \[2026-11-15 Sun 19:30\].*)$", text, re.M)
    assert m
    text = text.replace(m.group(1), "CLOCK: [2026-11-22 Sun 23:10]--[2026-11-23 Mon 01:40] =>"
                        "  2:30\nCLOCK: [2026-11-29 Sun 20:00]\n" + m.group(1))
    p.write_text(text, encoding="utf-8")
    from opencortex.sessions.recorder import SessionRecorder

    # records of the old layout, still in the memex: never counted, listed as sessions
    rec = SessionRecorder(memex / "sessions", clock=lambda: dt.datetime(2026, 11, 25, 10, 0))
    rec.record("tui-1", "person", "what is on my plate this week?")
    rec.record("tui-1", "assistant", "* not a headline: three tasks")
    later = SessionRecorder(memex / "sessions", clock=lambda: dt.datetime(2026, 12, 2, 9, 0))
    later.record("tui-2", "person", "outside the week")
    return memex


def _emacs(root: Path) -> tuple[dict[tuple[str, int], int], set[tuple[str, int]]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.org"))
    el = root.parent / "clock.el"
    el.write_text(CLOCK_EL, encoding="utf-8")
    out = subprocess.run([emacs, "-Q", "--batch", "-l", str(el), "2026-11-23 Mon 00:00",
                          "2026-11-30 Mon 00:00", *files], cwd=root, capture_output=True,
                         text=True, timeout=120, check=True, env={"TZ": "UTC", "HOME": str(root)})
    rows = json.loads(out.stdout or "[]")
    minutes = {(r["file"], r["line"]): r["minutes"] for r in rows if "minutes" in r}
    closed = {(r["file"], r["line"]) for r in rows if "closed" in r}
    return minutes, closed


def _subtree_minutes(m: Memex, rv) -> dict[tuple[str, int], int]:
    """Per headline, the minutes of the clock lines inside its subtree (as Org sums)."""
    out: dict[tuple[str, int], int] = {}
    nodes = sorted(m.store.select("1=1"), key=lambda n: (n.file, n.line))
    for i, n in enumerate(nodes):
        end = next((x.line for x in nodes[i + 1:] if x.file == n.file and x.level <= n.level),
                   10**9)
        s = sum(c.minutes for c in rv.clocks if c.file == n.file and n.line < c.line < end)
        if s:
            out[(n.file, n.line)] = s
    return out


def test_week_review_matches_emacs(week_memex: Path, tmp_path: Path):
    with Memex(week_memex, tmp_path / "i.sqlite3") as m:
        m.sync()
        rv = review(m, *WEEK, "week")
        mine = _subtree_minutes(m, rv)
    minutes, closed = _emacs(week_memex)
    assert mine == minutes and rv.total > 0
    assert {(i.file, i.line) for i in rv.done} == closed and len(closed) >= 3
    # the boundary clock counts only its part inside the week (Mon 00:00-01:40)
    cross = next(c for c in rv.clocks if c.start.day == 22)
    assert cross.minutes == 100 and cross.days == {"2026-11-23": 100}
    running = [c for c in rv.clocks if c.running]
    assert len(running) == 1 and running[0].minutes == 0
    assert rv.by_day()["2026-11-23"] == 47 + 100
    assert sum(rv.by_project().values()) == rv.total == sum(rv.by_day().values())

    # journal entries: the children of the week's datetree days in Emacs's headline dump
    dump = emacs_dump(week_memex / "journal" / "2026.org")
    want, parent = set(), {}
    for h in dump:
        parent[h["level"]] = h["title"]
        day = re.match(r"(\d{4}-\d{2}-\d{2})", parent.get(h["level"] - 1, "")) \
            if h["level"] > 1 else None
        if day and WEEK[0] <= dt.date.fromisoformat(day.group(1)) < WEEK[1]:
            want.add(("journal/2026.org", h["line"], h["title"]))
    assert {(i.file, i.line, i.title) for i in rv.journal} == want and want
    assert any("Priya" in i.title for i in rv.meetings)
    assert [(i.file, i.line) for i in rv.sessions] == [("sessions/2026/11/25-tui-1.org", 5)]
    assert all(i.file and i.line > 0 for i in rv.items)


def test_review_cli_text_json_org_and_chart(week_memex: Path, tmp_path: Path):
    r = CliRunner()
    base = ["--memex", str(week_memex), "--index", str(tmp_path / "i.sqlite3")]
    out = r.invoke(cli, ["review", *base, "--week", "--now", "2026-11-26", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["from"] == "2026-11-23" and d["to"] == "2026-11-29"
    assert d["clocked"]["running"] and d["clocked"]["total_minutes"] > 0
    assert all(i["file"] and i["line"] for i in d["done"] + d["journal"])
    org = r.invoke(cli, ["review", *base, "--from", "2026-11-23", "--to", "2026-11-29",
                         "--org"]).output
    assert org.startswith("* Review 2026-11-23--2026-11-29\n")
    assert "[[file:gtd.org::" in org and "| Project | Time |" in org
    org_file = tmp_path / "review.org"
    org_file.write_text(org, encoding="utf-8")
    heads = emacs_dump(org_file)
    assert [h["title"] for h in heads][:3] == ["Review 2026-11-23--2026-11-29", "Done",
                                              "Journal"]
    text = r.invoke(cli, ["review", *base, "last tuesday", "--now", "2026-12-01"]).output
    assert "Tue 24 Nov 2026" in text and "gtd.org:140" in text
    bad = r.invoke(cli, ["review", *base, "--day", "someday maybe"])
    assert bad.exit_code == 2 and "not a date" in bad.output


def test_chart_renders_in_a_fixed_width_terminal(week_memex: Path, tmp_path: Path):
    from rich.console import Console

    with Memex(week_memex, tmp_path / "i.sqlite3") as m:
        m.sync()
        rv = review(m, *WEEK)
    con = Console(width=72, record=True, color_system=None, force_terminal=True)
    con.print(rv.chart(width=30))
    lines = con.export_text().splitlines()
    assert all(len(x) <= 72 for x in lines)
    wed = next(x for x in lines if x.startswith("Wed 25 Nov"))
    assert wed.rstrip().endswith("3:30") and "█" * 10 in wed
    sun = next(x for x in lines if x.startswith("Sun 29 Nov"))
    assert "█" not in sun  # only a running clock that day: nothing counted
    assert any(x.startswith("Fix the flaky invoice") for x in lines)


@pytest.mark.parametrize(("text", "want"), [
    ("what did I do last Tuesday?", ("2026-12-01", "2026-12-02")),  # the latest before today
    ("what did I do last Wednesday?", ("2026-11-25", "2026-11-26")),
    ("how was my week", ("2026-11-30", "2026-12-07")),
    ("everything since the 1st", ("2026-12-01", "2026-12-03")),
    ("what did I do on 24 November?", ("2026-11-24", "2026-11-25")),
    ("review last week", ("2026-11-23", "2026-11-30")),
    ("what happened yesterday", ("2026-12-01", "2026-12-02")),
])
def test_natural_dates(text: str, want: tuple[str, str]):
    a, b, _ = resolve_range(text, dt.datetime(2026, 12, 2, 9, 0))
    assert (a.isoformat(), b.isoformat()) == want


def test_summary_keeps_only_sentences_that_cite_items():
    got = grounded_sentences("You closed the expense report [3]. It was a good week. "
                             "Priya's 1:1 mattered [20, 5]. Invented [99].", 21)
    assert [s["cites"] for s in got] == [[3], [5, 20]]
