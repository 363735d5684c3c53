"""Two processes open the same record index when m006 is pending (a daemon and
`opencortex recall --index-only` after an upgrade): both read `_migrations` before either
applies, the first rebuilds rec_records, the second then runs the same script on the
migrated table and fails on the `_migrations` row — its recall (an HTTP request) errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from opencortex.memory.migrations import MigrationSet, apply_migrations
from opencortex.recall.migrations import RECALL


class _Racing:
    """A connection that lets another process migrate right before its own first script."""

    def __init__(self, db: sqlite3.Connection, other: sqlite3.Connection) -> None:
        self.db, self.other, self.raced = db, other, False

    def executescript(self, sql: str) -> Any:
        if not self.raced:
            self.raced = True
            apply_migrations(self.other, [RECALL])
        return self.db.executescript(sql)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def _open(p: Path) -> sqlite3.Connection:
    return sqlite3.connect(p, isolation_level=None, timeout=10)


def test_m006_applied_by_two_processes_at_once(tmp_path: Path) -> None:
    p = tmp_path / "i.sqlite3"
    a = _open(p)
    apply_migrations(a, [MigrationSet("recall", sqlite=RECALL.sqlite[:1])])  # m004 only
    a.execute("INSERT INTO rec_records (file, boundary, source, kind, root, session_id, "
              "locator, handle) VALUES ('f','b','notes','note','r','k','l','h')")
    b = _open(p)
    apply_migrations(_Racing(a, b), [RECALL])  # raised IntegrityError before
    names = [r[0] for r in a.execute("SELECT name FROM _migrations")]
    assert names.count("m006_recall_ids") == 1
    assert a.execute("SELECT count(*) FROM rec_records").fetchone()[0] == 1
    sql = a.execute("SELECT sql FROM sqlite_master WHERE name = 'rec_records'").fetchone()[0]
    assert "AUTOINCREMENT" in sql
