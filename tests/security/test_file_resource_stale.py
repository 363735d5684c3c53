"""Red team (issue 23): the MCP file resource sliced the file *as saved* by the index's
line numbers.

``opencortex://file/{path}`` (``Access.file_text``) returned the disk text above the
index's first entry as the file's preamble.  After the person (or a sync peer) put a
private entry at the top of a public file, and before the next sync, the index still said
the first entry was further down: the whole private entry went out as "preamble" to a
client that may not see it -- and the egress check's prints, built from the same stale
index, did not know its text either."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.access import Access
from opencortex.memex import Memex

BEFORE = "#+TITLE: Work\n#+AUTHOR: me\n\nSome intro.\nMore intro.\nAnd more.\n\n" \
         "* Project Alpha\nalpha body\n"
AFTER = "#+TITLE: Work\n* Salary :private:\nI will ask for 120k euros, locker 4471.\n" \
        "* Project Alpha\nalpha body\n"


@pytest.mark.parametrize("before", [BEFORE, "#+TITLE: Work\nno entries yet\n"],
                         ids=["preamble", "no-entries"])
def test_a_private_entry_saved_above_a_stale_index_is_not_preamble(
        memex: Path, tmp_path: Path, before: str) -> None:
    (memex / "work.org").write_text(before, encoding="utf-8")
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        (memex / "work.org").write_text(AFTER, encoding="utf-8")  # saved, not synced yet
        for client in ("mcp", "http", "telegram"):
            text = Access(m, client).file_text("work.org")
            assert "4471" not in text and "Salary" not in text, (client, text)
            assert text.startswith("#+TITLE: Work\n")
        assert "4471" in Access(m, "cli").file_text("work.org")  # the person sees it
    finally:
        m.close()
