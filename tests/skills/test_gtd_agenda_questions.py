"""A question about a day ("what's on wednesday?") is answered from the same agenda
computation as `opencortex agenda`: an appointment that is only an active timestamp is
there, an upcoming deadline carries Org's "In N d." on today, archived and COMMENT
subtrees are not; a withheld (private) entry is not named to a client that may not see it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from opencortex.access import Access
from opencortex.memex import Memex
from opencortex.skills.gtd_questions import answer

NOW = dt.datetime(2026, 12, 7, 9, 0)  # a Monday

FILE = """#+TODO: TODO NEXT | DONE
* Book club <2026-12-09 Wed 19:00>
* Planning week
  <2026-12-08 Tue>--<2026-12-10 Thu>
* TODO Tax return
  DEADLINE: <2026-12-11 Fri>
* Old project :ARCHIVE:
** TODO Archived call
   SCHEDULED: <2026-12-09 Wed>
* COMMENT Draft
  <2026-12-09 Wed 08:00>
* Therapy :private:
  <2026-12-09 Wed 16:00>
"""


def _memex(tmp_path: Path) -> Memex:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "plan.org").write_text(FILE, encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    return m


def test_whats_on_a_day_reads_the_agenda(tmp_path: Path) -> None:
    m = _memex(tmp_path)
    try:
        text = answer(m, "what's on wednesday?", NOW)
        assert "Book club" in text and "19:00" in text and "plan.org:2" in text
        assert "Planning week" in text  # a date range covering the day
        assert "Archived call" not in text and "Draft" not in text
        ag = m.day_agenda(today=NOW.date(), start=dt.date(2026, 12, 9), days=1)
        for it in ag.days[0].items:  # every line of the agenda is in the answer
            assert f"{it.file}:{it.line}" in text
        today = answer(m, "what's on today?", NOW)
        assert "In   4 d.: TODO Tax return" in today  # Org's upcoming-deadline prefix
        # the sender's view: a client not trusted with private notes is not told
        seen = Access(m, "http").view()
        assert "Therapy" in text and "Therapy" not in answer(seen, "what's on wednesday?", NOW)
    finally:
        m.close()
