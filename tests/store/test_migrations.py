"""Each owner's migration set (the index's, recall's) on both dialects: from a blank
database, and from the schema the previous release made (its steps, in its order, with
pg001's old instr() shim) — both must end with the same schema and nothing left to do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from opencortex.memory import migrations, pg_migrations
from opencortex.memory.migrations import INDEX, apply_migrations, migration_sets
from opencortex.memory.sqlite_store import SqliteStore
from opencortex.recall.index import RecordIndex
from opencortex.recall.migrations import RECALL

_OLD_SQLITE = ["m001_core", "m002_journal", "m003_retrieval", "m004_recall", "m005_passages"]
_OLD_PG = ["pg001_core", "pg002_journal", "pg003_vectors", "pg004_recall", "pg005_passages"]
_OLD_INSTR = ("CREATE FUNCTION instr(text, text) RETURNS integer LANGUAGE sql IMMUTABLE "
              "AS 'SELECT strpos($1, $2)';")


def _steps(dialect: str) -> dict[str, str]:
    return {n: s for m in (INDEX, RECALL) for n, s in m.steps(dialect)}


def test_every_owner_has_one_set_for_both_dialects() -> None:
    owners = {m.owner: m for m in migration_sets()}
    assert {"index", "recall"} <= set(owners)
    names = [n for m in owners.values() for d in ("sqlite", "postgresql") for n, _ in m.steps(d)]
    assert len(names) == len(set(names))  # one _migrations table: names unique across owners
    for m in owners.values():
        assert m.sqlite and m.postgresql, m.owner
    assert [n for n, _ in RECALL.sqlite] == ["m004_recall", "m006_recall_ids",
                                             "m008_recall_lengths", "m009_recall_views"]
    assert [n for n, _ in RECALL.postgresql] == ["pg004_recall", "pg008_recall_lengths",
                                                 "pg009_recall_views"]


def _sqlite_schema(path: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(path)
    try:
        return sorted((t, n, " ".join((s or "").split())) for t, n, s in db.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    finally:
        db.close()


def _sqlite_names(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in db.execute("SELECT name FROM _migrations"))
    finally:
        db.close()


def _previous_release(path: Path) -> sqlite3.Connection:
    """A database as the previous release left it: m001..m005, in one list."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    steps = _steps("sqlite")
    for name in _OLD_SQLITE:
        db.executescript(f"BEGIN;{steps[name]};INSERT INTO _migrations VALUES ('{name}', 0);"
                         "COMMIT;")
    return db


def test_sqlite_blank_and_previous_schema_end_the_same(tmp_path: Path) -> None:
    blank = tmp_path / "blank.sqlite3"
    st = SqliteStore(blank)
    RecordIndex(st.db)  # recall applies its own set where it opens its tables
    st.close()
    assert _sqlite_names(blank) == sorted([*_OLD_SQLITE, "m006_recall_ids", "m007_agenda",
                                           "m008_recall_lengths", "m009_recall_views"])

    old = tmp_path / "old.sqlite3"  # the previous release: one list, m001..m005
    _previous_release(old).close()
    st = SqliteStore(old)
    # every known set, on opening
    assert sorted(st.migrations_applied) == ["m006_recall_ids", "m007_agenda",
                                             "m008_recall_lengths", "m009_recall_views"]
    RecordIndex(st.db)
    assert apply_migrations(st.db, migration_sets()) == []
    assert st.status()["migrations"]["pending"] == []
    st.close()
    assert _sqlite_schema(old) == _sqlite_schema(blank)


def test_sqlite_record_ids_are_never_reused_and_m006_keeps_the_records(tmp_path: Path) -> None:
    """A pass holds record ids across its model's work; a refresh in another process could
    give a deleted record's id to a private note's record.  m006 rebuilds rec_records with
    AUTOINCREMENT, keeping every row and id."""
    path = tmp_path / "old.sqlite3"
    db = _previous_release(path)
    cols = "(file, boundary, source, kind, root, session_id, locator, handle)"
    for i in (1, 2, 3):
        db.execute(f"INSERT INTO rec_records {cols} VALUES ('f', 'b', 's', 'note', 'r', "
                   f"'k{i}', 'l{i}', 'h{i}')")
    db.execute("DELETE FROM rec_records WHERE id = 3")
    db.execute(f"INSERT INTO rec_records {cols} VALUES ('f', 'b', 's', 'note', 'r', 'k4', "
               "'l4', 'h4')")
    assert db.execute("SELECT max(id) FROM rec_records").fetchone()[0] == 3  # reused
    db.close()

    st = SqliteStore(path)
    RecordIndex(st.db)  # applies m006
    rows = st.db.execute("SELECT id, session_id FROM rec_records ORDER BY id").fetchall()
    assert rows == [(1, "k1"), (2, "k2"), (3, "k4")]
    st.db.execute("DELETE FROM rec_records WHERE id = 3")
    st.db.execute(f"INSERT INTO rec_records {cols} VALUES ('f', 'b', 's', 'note', 'r', 'k5', "
                  "'l5', 'h5')")
    assert st.db.execute("SELECT id FROM rec_records WHERE session_id = 'k5'").fetchone()[0] == 4
    st.close()


def test_sqlite_recall_tables_come_with_the_record_index(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # an index opened while no other owner is registered holds only the index's tables
    monkeypatch.setattr(migrations, "_SETS", {})
    st = SqliteStore(tmp_path / "x.sqlite3")
    tables = {r[0] for r in st.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "files" in tables and "rec_records" not in tables
    idx = RecordIndex(st.db)
    assert idx.counts() is not None
    assert "m004_recall" in {r[0] for r in st.db.execute("SELECT name FROM _migrations")}
    st.close()


def _pg_schema(conn, schema: str) -> dict[str, list]:
    cols = conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable, column_default, "
        "is_generated, generation_expression FROM information_schema.columns "
        "WHERE table_schema = %s ORDER BY 1, 2", (schema,)).fetchall()
    idx = [(n, d.replace(f"{schema}.", "S.")) for n, d in conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1",
        (schema,)).fetchall()]
    funcs = conn.execute("SELECT p.proname FROM pg_proc p JOIN pg_namespace n "
                         "ON n.oid = p.pronamespace WHERE n.nspname = %s", (schema,)).fetchall()
    return {"columns": cols, "indexes": idx, "functions": funcs}


def test_postgresql_blank_and_previous_schema_end_the_same(pg_server: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    import uuid

    from opencortex.memory.pg_store import PgStore
    from opencortex.recall.pg_index import PgRecordIndex

    blank, old = (f"t_{uuid.uuid4().hex[:12]}" for _ in range(2))
    admin = psycopg.connect(pg_server, autocommit=True)
    try:
        st = PgStore(pg_server, blank)
        PgRecordIndex(st)
        st.close()

        # the previous release: m001..m005 in one list, pg001 with instr()
        pg_migrations.apply_pg_migrations(admin, old, [migrations.MigrationSet("none")])
        steps = _steps("postgresql")
        steps["pg001_core"] += _OLD_INSTR
        with admin.transaction():
            for name in _OLD_PG:
                admin.execute(steps[name])
                admin.execute("INSERT INTO _migrations (name) VALUES (%s)", (name,))
        assert _pg_schema(admin, old)["functions"] == [("instr",)]
        st = PgStore(pg_server, old)
        assert "pg006_no_instr" in st.migrations_applied
        PgRecordIndex(st)
        assert st.status()["migrations"]["pending"] == []
        st.close()
        a, b = _pg_schema(admin, blank), _pg_schema(admin, old)
        assert a["functions"] == b["functions"] == []
        assert a == b
    finally:
        for s in (blank, old):
            admin.execute(f'DROP SCHEMA IF EXISTS "{s}" CASCADE')
        admin.close()
