"""Named, ordered schema migrations, one set per owner (the index here; recall's in
``recall.migrations``), each for both dialects (the PostgreSQL scripts are in
``pg_migrations``), applied where the owner opens its tables.

The name is the key (as in sqlite-utils' ``Migrations``): each runs once, in a
transaction, and is recorded in ``_migrations``.  The index is disposable, so a
migration may also simply drop and rebuild derived tables.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .pg_migrations import PG_MIGRATIONS

__all__ = ["INDEX", "MIGRATIONS", "MigrationSet", "apply_migrations", "migration_sets",
           "migration_status", "register"]

Migration = tuple[str, str]


_M001_CORE = """
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,          -- relative to the memex root, '/'-separated
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        hash TEXT NOT NULL,
        title TEXT,
        filetags TEXT NOT NULL DEFAULT '',
        todo_keywords TEXT NOT NULL DEFAULT '[]',
        done_keywords TEXT NOT NULL DEFAULT '[]',
        errors TEXT NOT NULL DEFAULT '[]',
        node_count INTEGER NOT NULL DEFAULT 0,
        indexed_at REAL NOT NULL
    );
    CREATE TABLE nodes (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id),
        idx INTEGER NOT NULL,               -- position in the file
        key TEXT NOT NULL,                  -- 'id:<ID>' or 'path::outline/title'
        org_id TEXT,
        level INTEGER NOT NULL,
        line INTEGER NOT NULL,
        title TEXT NOT NULL,
        todo TEXT,
        todo_type TEXT,                     -- 'todo' | 'done' | NULL
        priority TEXT,
        local_tags TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '',      -- inherited + FILETAGS + local, space-separated
        outline TEXT NOT NULL DEFAULT '[]',
        properties TEXT NOT NULL DEFAULT '{}',
        category TEXT,
        scheduled TEXT, scheduled_raw TEXT,
        deadline TEXT, deadline_raw TEXT,
        closed TEXT, closed_raw TEXT,
        body TEXT NOT NULL DEFAULT '',
        byte_start INTEGER NOT NULL,
        byte_end INTEGER NOT NULL,
        parent_idx INTEGER,
        archived INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX nodes_file ON nodes(file_id, idx);
    CREATE INDEX nodes_key ON nodes(key);
    CREATE INDEX nodes_org_id ON nodes(org_id) WHERE org_id IS NOT NULL;
    CREATE INDEX nodes_todo ON nodes(todo) WHERE todo IS NOT NULL;
    CREATE INDEX nodes_closed ON nodes(closed) WHERE closed IS NOT NULL;
    CREATE TABLE links (
        source_id INTEGER NOT NULL,         -- nodes.id
        file_id INTEGER NOT NULL,
        type TEXT NOT NULL,
        path TEXT NOT NULL,
        description TEXT,
        search TEXT,
        target_key TEXT                     -- resolved node key, NULL if unresolved
    );
    CREATE INDEX links_source ON links(source_id);
    CREATE INDEX links_file ON links(file_id);
    CREATE INDEX links_target ON links(type, path);
    CREATE INDEX links_target_key ON links(target_key) WHERE target_key IS NOT NULL;
    CREATE VIRTUAL TABLE nodes_fts USING fts5(
        title, tags, body,
        content='nodes', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    );
"""


_M002_JOURNAL = """
    CREATE TABLE journal (
        id INTEGER PRIMARY KEY,
        at REAL NOT NULL,
        op TEXT NOT NULL,                   -- capture, todo, set-property, ...
        description TEXT NOT NULL,
        path TEXT NOT NULL,                 -- absolute path of the file written
        before_hash TEXT,                   -- NULL: the file did not exist
        after_hash TEXT NOT NULL,
        before_data BLOB,                   -- zlib-compressed bytes before the write
        before_mode INTEGER,
        undone_at REAL,
        batch TEXT                          -- groups the writes of one signal/command
    );
"""


_M003_RETRIEVAL = """
    ALTER TABLE nodes ADD COLUMN embed_hash TEXT;   -- hash of the text a model embeds
    CREATE INDEX nodes_embed_hash ON nodes(embed_hash);
    CREATE TABLE keyword_sync (                     -- what the keyword engine holds
        path TEXT PRIMARY KEY,
        hash TEXT NOT NULL
    );
    CREATE TABLE embeddings (                       -- content-addressed: shared by nodes
        hash TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vec BLOB NOT NULL,                          -- little-endian float32 * dim
        PRIMARY KEY (hash, model, dim)
    ) WITHOUT ROWID;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
"""

_M005_PASSAGES = """
    CREATE TABLE passages (                         -- what a model embeds, per node
        node_id INTEGER NOT NULL,                   -- nodes.id
        file_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,                       -- 0, 1, ... within the node
        line INTEGER NOT NULL,                      -- file line the passage starts on
        hash TEXT NOT NULL,                         -- key into embeddings
        body_line INTEGER NOT NULL,                 -- file line of the node's body
        PRIMARY KEY (node_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX passages_file ON passages(file_id);
    CREATE INDEX passages_hash ON passages(hash);
    -- every file is read again on the next sync so its passages are written (vectors
    -- are content-addressed: a node that is one passage keeps the vector it had)
    UPDATE files SET mtime_ns = -1, hash = '';
"""

_M007_AGENDA = """
    -- what Org's agenda may list for each heading (memory.agenda_stamps), JSON; NULL
    -- for none: the agenda reads these rows only, never the files
    ALTER TABLE nodes ADD COLUMN agenda TEXT;
    -- the days it can be listed on (agenda.agenda_window): [lo, hi], or today when an
    -- undone SCHEDULED/DEADLINE (pend) is not after it; diary sexps met (never run)
    ALTER TABLE nodes ADD COLUMN agenda_lo INTEGER;
    ALTER TABLE nodes ADD COLUMN agenda_hi INTEGER;
    ALTER TABLE nodes ADD COLUMN agenda_pend INTEGER;
    ALTER TABLE nodes ADD COLUMN agenda_sexps INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX nodes_agenda_hi ON nodes(agenda_hi) WHERE agenda_hi IS NOT NULL;
    CREATE INDEX nodes_agenda_pend ON nodes(agenda_pend) WHERE agenda_pend IS NOT NULL;
    CREATE INDEX nodes_agenda_sexps ON nodes(agenda_sexps) WHERE agenda_sexps > 0;
    -- every file is read again on the next sync so its agenda records are written
    UPDATE files SET mtime_ns = -1, hash = '';
"""

MIGRATIONS: list[Migration] = [
    ("m001_core", _M001_CORE),
    ("m002_journal", _M002_JOURNAL),
    ("m003_retrieval", _M003_RETRIEVAL),
    # m004_recall: recall's own set (recall.migrations)
    ("m005_passages", _M005_PASSAGES),
    # m006_recall_ids: recall's own set
    ("m007_agenda", _M007_AGENDA),
]
"""The index's SQLite steps (``INDEX.sqlite``)."""


@dataclass(frozen=True)
class MigrationSet:
    """One owner's named, ordered schema steps, for each dialect. Names are keys in the
    one ``_migrations`` table, so they are unique across owners (``m…`` SQLite, ``pg…``
    PostgreSQL); a step is never renamed once released (a database records it by name)."""

    owner: str
    sqlite: tuple[Migration, ...] = ()
    postgresql: tuple[Migration, ...] = ()

    def steps(self, dialect: str) -> tuple[Migration, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgresql


INDEX = MigrationSet("index", tuple(MIGRATIONS), tuple(PG_MIGRATIONS))
"""The memex index: files, nodes, links, full text, journal, vectors, passages."""

_SETS: dict[str, MigrationSet] = {}
"""Other owners' sets, by owner (``register``)."""


def register(mset: MigrationSet) -> MigrationSet:
    """Make another owner's set known: a store applies every known set when it opens, and
    ``store status`` reports them. The owner still applies its own set where it opens
    its tables (recall's record index does), so none depends on import order."""
    _SETS[mset.owner] = mset
    return mset


def migration_sets() -> list[MigrationSet]:
    """The index's set first, then every registered owner's."""
    return [INDEX, *(m for o, m in _SETS.items() if o != INDEX.owner)]


def migration_status(done: list[str], dialect: str) -> dict[str, Any]:
    """Applied and pending step names, over every registered set."""
    known = [n for m in migration_sets() for n, _ in m.steps(dialect)]
    return {"applied": done, "pending": [n for n in known if n not in done],
            "level": done[-1] if done else None}


def apply_migrations(db: sqlite3.Connection, sets: Sequence[MigrationSet] | None = None
                     ) -> list[str]:
    """Apply every step of ``sets`` (default: the index's) not yet recorded; return the
    names applied.

    ``db`` must be in autocommit mode (``isolation_level=None``) so that each
    migration's script and its record commit together or not at all.
    """
    steps = [st for m in (sets or (INDEX,)) for st in m.sqlite]
    # read first: an up-to-date database is not written to (no write lock to wait for
    # while another process syncs)
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
                  ).fetchone() is None:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
                   "applied_at REAL)")
    done = {r[0] for r in db.execute("SELECT name FROM _migrations")}
    applied = []
    for name, sql in steps:
        if name in done:
            continue
        try:
            db.executescript(
                f"BEGIN IMMEDIATE;\n{sql}\n"
                f"INSERT INTO _migrations VALUES ('{name}', {time.time()!r});\nCOMMIT;"
            )
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            # another process applied it between our read and our write lock (a daemon
            # and `recall --index-only` opening one database after an upgrade)
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            raise
        applied.append(name)
    return applied
