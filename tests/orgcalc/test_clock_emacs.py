"""`review`'s clock sums are Org's: a CLOCK line counts where org-element makes a clock
element, never where it is quoted (an example or src block, a verse block).

Judged by Emacs on generated files with clocks inside and outside blocks, spans crossing
midnight and the span's edges, running clocks, plus the example memex:

- every clock `review --json` reports (file, line, minutes inside the span) is a clock
  element of `org-element-map`, with the same minutes, and none is missing;
- per headline, the subtree total equals `org-clock-sum` (what clocktables use) wherever
  no quoted CLOCK line lies in the subtree; where one does, `org-clock-sum` (a regexp
  count) counts the quoted text too, and the review does not.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from .agenda_files import stamp
from .conftest import EXAMPLE_MEMEX, read_jsonl, run_elisp

pytestmark = pytest.mark.emacs

START, END = dt.date(2026, 11, 23), dt.date(2026, 12, 7)  # the span: [START, END)


def _clock(a: dt.datetime, b: dt.datetime | None) -> str:
    def st(t: dt.datetime) -> str:
        return stamp(t.date(), t.strftime("%H:%M"), active=False)

    if b is None:
        return f"CLOCK: {st(a)}"
    mins = int((b - a).total_seconds() // 60)
    return f"CLOCK: {st(a)}--{st(b)} => {mins // 60:2d}:{mins % 60:02d}"


def clock_file(seed: int, n: int = 40) -> str:
    """Headings with clocks in LOGBOOK drawers, bare in sections, in list items and quote
    blocks (clock elements), and in example/src/verse blocks (quoted text)."""
    rnd = random.Random(seed)
    out = ["#+TITLE: clocks", ""]

    def some_clock(running: bool = False) -> str:
        a = dt.datetime.combine(START, dt.time()) + dt.timedelta(
            days=rnd.randint(-3, 16), hours=rnd.randint(0, 23), minutes=rnd.choice([0, 15, 40]))
        b = None if running else a + dt.timedelta(minutes=rnd.randint(5, 600))
        return _clock(a, b)

    for i in range(n):
        out.append(f"{'*' * rnd.randint(1, 3)} Task {i}")
        form = rnd.random()
        if form < 0.35:
            out += [":LOGBOOK:", *(some_clock() for _ in range(rnd.randint(1, 4))), ":END:"]
        elif form < 0.5:
            out.append(some_clock())
        elif form < 0.6:
            out += ["- a list item", "  " + some_clock()]
        elif form < 0.7:
            out += ["#+begin_quote", some_clock(), "#+end_quote"]
        elif form < 0.8:
            out += ["A page quoting a logbook:", "#+begin_example", some_clock(), some_clock(),
                    "#+end_example"]
        elif form < 0.87:
            out += ["#+begin_src org", some_clock(), "#+end_src"]
        elif form < 0.92:
            out += ["#+begin_verse", some_clock(), "#+end_verse"]
        elif form < 0.96:
            out += [":LOGBOOK:", some_clock(running=True), ":END:"]
        out.append("")
    return "\n".join(out) + "\n"


def _heading_lines(path: Path) -> list[tuple[int, int]]:
    """(line, level) of each headline of a file."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        stars = len(line) - len(line.lstrip("*"))
        if stars and line[stars:stars + 1] == " ":
            out.append((i, stars))
    return out


def test_review_clock_sums_equal_org(tmp_path: Path, opencortex_json) -> None:
    memex = tmp_path / "memex"
    shutil.copytree(EXAMPLE_MEMEX, memex)
    for seed in range(4):
        (memex / f"clocks{seed}.org").write_text(clock_file(seed), encoding="utf-8")
    files = sorted(str(p) for p in memex.rglob("*.org"))
    out = tmp_path / "emacs.jsonl"
    run_elisp("clock_dump.el", str(memex), START.isoformat(), END.isoformat(), str(out),
              *files)
    facts = read_jsonl(out)
    hi = dt.datetime.combine(END, dt.time())

    data = opencortex_json("review", "--memex", str(memex), "--from", START.isoformat(),
                           "--to", (END - dt.timedelta(days=1)).isoformat(), "--no-chart")
    clocks = data["clocked"]["clocks"]
    ours = Counter((c["file"], c["line"], c["minutes"]) for c in clocks
                   if not c["running"] and c["minutes"] > 0)
    theirs = Counter((f["file"], f["line"], f["minutes"]) for f in facts
                     if f["kind"] == "element" and f["minutes"])
    assert len(theirs) > 30
    assert ours == theirs, (sorted(theirs - ours)[:10], sorted(ours - theirs)[:10])
    # running clocks: flagged (never counted) where Org has a running clock element
    assert {(c["file"], c["line"]) for c in clocks if c["running"]} == {
        (f["file"], f["line"]) for f in facts if f["kind"] == "element"
        and f["minutes"] is None and dt.datetime.fromisoformat(f["start"]) < hi}
    assert data["clocked"]["total_minutes"] == sum(m * k for (_, _, m), k in theirs.items())

    # per headline: the subtree's total against org-clock-sum (clocktables)
    quoted = {(f["file"], f["line"]) for f in facts if f["kind"] == "quoted"}
    assert any(f.startswith("clocks") for f, _ in quoted)  # the files do quote clocks
    sums = {(f["file"], f["line"]): f["minutes"] for f in facts if f["kind"] == "sum"}
    agree = differ = 0
    for path in map(Path, files):
        rel = path.relative_to(memex).as_posix()
        heads = _heading_lines(path)
        for k, (line, level) in enumerate(heads):
            end = next((ln for ln, lv in heads[k + 1:] if lv <= level), 10**9)
            mine = sum(m * c for (f, ln, m), c in ours.items() if f == rel and line < ln < end)
            has_quoted = any(f == rel and line < ln < end for f, ln in quoted)
            if has_quoted:
                differ += sums[(rel, line)] >= mine
            else:
                assert sums[(rel, line)] == mine, (rel, line)
                agree += 1
    assert agree > 50 and differ > 0
