"""The PostgreSQL index store against a real server (pgserver's PostgreSQL 16 + pgvector):
migrations, parity with SQLite, concurrent syncs, shared embeddings, copy, doctor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.memex import Memex
from opencortex.memory.pg_store import PgStore
from opencortex.memory.query import parse_query
from opencortex.memory.sqlite_store import SqliteStore
from opencortex.retrieval.vectors import vector_index

from ..conftest import EXAMPLE

psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL driver (dev extras) is missing")


def _pg_memex(root: Path, url: str, schema: str) -> Memex:
    m = Memex(root)
    m.settings.store_url, m.settings.store_schema = url, schema
    return m


def _sqlite_memex(root: Path, index: Path) -> Memex:
    """A SQLite-indexed memex, also when the suite runs with OPENCORTEX_TEST_STORE=postgresql."""
    m = Memex(root, index=index)
    m.settings.store_url = None
    return m


def _dump(store: SqliteStore | PgStore) -> dict:
    """Everything a reader can see, backend-neutral."""
    nodes = {n.key: n.to_dict(with_body=True) for n in store.select("1", with_body=True)}
    links = sorted((ln.source_key, ln.type, ln.path, ln.search or "", ln.target_key or "")
                   for k in nodes for ln in store.links_from(k))
    return {"files": store.file_states(), "nodes": nodes, "links": links,
            "counts": store.counts(), "errors": store.file_errors()}


def test_migrations_idempotent_and_concurrent_connects(pg_server: str, pg_schema: str) -> None:
    import opencortex.recall.migrations  # noqa: F401  (recall's set, registered)

    errors: list[BaseException] = []
    stores: list[PgStore] = []

    def connect() -> None:
        try:
            stores.append(PgStore(pg_server, pg_schema))
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=connect) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    applied = [s.migrations_applied for s in stores]
    assert sorted(map(len, applied)) == [0, 0, 0, 0, 0, 9]  # exactly one connect migrated
    again = PgStore(pg_server, pg_schema)
    assert again.migrations_applied == []
    rows = again.db.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
    assert [r[0] for r in rows] == ["pg001_core", "pg002_journal", "pg003_vectors", "pg004_recall",
                                    "pg005_passages", "pg006_no_instr", "pg007_agenda",
                                    "pg008_recall_lengths", "pg009_recall_views"]
    st = again.status()
    assert st["pgvector"] and st["migrations"]["pending"] == []
    for s in [*stores, again]:
        s.close()


def test_same_answers_as_sqlite(pg_server: str, pg_schema: str, tmp_path: Path) -> None:
    """Every query form gives the same nodes in the same order on both stores."""
    import datetime as dt

    today = dt.date(2026, 11, 27)
    with _sqlite_memex(EXAMPLE, tmp_path / "i.sqlite3") as a, \
            _pg_memex(EXAMPLE, pg_server, pg_schema) as b:
        assert isinstance(a.store, SqliteStore) and isinstance(b.store, PgStore)
        a.sync()
        b.sync()
        assert _dump(a.store) == _dump(b.store)
        exprs = ["todo:NEXT", "todo", "done", "tags:work", "tags:work,home -todo:NEXT",
                 "heading:rust", "file:projects/*", "file:gtd", "priority:A", "level:1",
                 "prop:CATEGORY", "scheduled:-30..+30", "deadline:past", "closed:-30",
                 "-done level:2", "category:work"]
        for e in exprs:
            ka = [n.key for n in a.store.find(parse_query(e), today=today)]
            kb = [n.key for n in b.store.find(parse_query(e), today=today)]
            assert ka == kb, e
        for e in ["zfs", "flaky test", "rust*"]:
            ka = {n.key for n in a.query(e, today=today)}
            kb = {n.key for n in b.query(e, today=today)}
            assert ka and kb, e
        assert [n.key for n in a.active_projects()] == [n.key for n in b.active_projects()]
        assert a.agenda(today) == b.agenda(today)
        ref = a.store.dangling_links()
        assert [(x.path, x.source_key) for x in ref] == \
            [(x.path, x.source_key) for x in b.store.dangling_links()]


def test_journal_and_undo_on_postgres(pg_server: str, pg_schema: str, memex: Path) -> None:
    with _pg_memex(memex, pg_server, pg_schema) as m:
        m.sync()
        before = (memex / "inbox.org").read_bytes() if (memex / "inbox.org").exists() else None
        m.capture("Call the plumber", todo="TODO")
        assert m.query("plumber")
        j = m.store.journal()
        assert j[0].op == "capture" and j[0].undone_at is None
        m.undo()
        after = (memex / "inbox.org").read_bytes() if (memex / "inbox.org").exists() else None
        assert after == before
        assert not m.query("plumber")
        assert m.store.journal(include_undone=True)[0].undone_at is not None


def _many_files(root: Path, n: int) -> None:
    d = root / "bulk"
    d.mkdir(exist_ok=True)
    for i in range(n):
        (d / f"f{i:03}.org").write_text(
            f"#+title: Bulk {i}\n* TODO Task {i} :bulk:\n:PROPERTIES:\n:ID: bulk-{i}\n:END:\n"
            f"Body of task {i} with word{i % 7}.\n** Sub {i}\nSee [[id:bulk-{(i + 1) % n}]].\n")


def test_two_processes_syncing_at_once_end_consistent(pg_server: str, pg_schema: str,
                                                      memex: Path, tmp_path: Path) -> None:
    _many_files(memex, 120)
    env = {**os.environ, "OPENCORTEX_STORE_URL": pg_server,
           "OPENCORTEX_STORE_SCHEMA": pg_schema}
    cmd = [sys.executable, "-m", "opencortex.cli", "index", "--memex", str(memex), "--json"]
    cmd = [sys.executable, "-c", "from opencortex.cli import main; main()", *cmd[3:]]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1].decode()[-2000:] for o in outs]
    res = [json.loads(o[0]) for o in outs]
    # one process did the work; the other waited for it and found nothing left to do
    assert sorted(r["added"] for r in res) == [0, res[0]["files"]]
    with _sqlite_memex(memex, tmp_path / "fresh.sqlite3") as fresh, \
            _pg_memex(memex, pg_server, pg_schema) as pg:
        fresh.sync()
        assert _dump(pg.store)["nodes"] == _dump(fresh.store)["nodes"]
        assert _dump(pg.store)["links"] == _dump(fresh.store)["links"]


def test_embeddings_shared_between_machines(pg_server: str, pg_schema: str,
                                            tmp_path: Path) -> None:
    """A second checkout (another machine) on the same store embeds nothing again."""
    from tests.retrieval.conftest import HashingEmbedder

    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(EXAMPLE, one)
    shutil.copytree(EXAMPLE, two)
    from opencortex.retrieval.hybrid import Retriever

    with _pg_memex(one, pg_server, pg_schema) as m:
        r = Retriever(m, embedder=HashingEmbedder())
        first = r.sync(embed=True)
        assert first["embedded"] > 100 and first["vectors"]["pending"] == 0
        assert r.search("zfs send replication", mode="dense").hits
    with _pg_memex(two, pg_server, pg_schema) as m:
        e = HashingEmbedder()
        r = Retriever(m, embedder=e)
        second = r.sync(embed=True)
        assert second["embedded"] == 0 and e.texts == 0
        (two / "new.org").write_text("* A brand new thought about sourdough\n")
        third = r.sync(embed=True)
        assert third["embedded"] == 1 and e.texts == 1
        st = m.store.status()
        assert st["hnsw_indexes"], "the HNSW index exists after the first embedding run"


def test_vector_search_matches_exact(pg_server: str, pg_schema: str) -> None:
    from tests.retrieval.conftest import HashingEmbedder

    e = HashingEmbedder()
    with _pg_memex(EXAMPLE, pg_server, pg_schema) as m:
        m.sync()
        v = vector_index(m.store, e.name, e.dim)
        v.embed_pending(e.embed)
        keys, mat = v.matrix()
        assert mat.shape == (v.passage_count(), e.dim)  # a row per passage
        q = e.embed(["replicate the NAS datasets"])[0]
        got = v.search(q, 5)
        sims = mat @ (q / np.linalg.norm(q)) / np.maximum(np.linalg.norm(mat, axis=1), 1e-9)
        best = set(list(dict.fromkeys(keys[i] for i in np.argsort(-sims)))[:5])  # 5 nodes
        assert len({k for k, _ in got} & best) >= 4
        assert got[0][1] == pytest.approx(float(np.max(sims)), abs=1e-4)


def test_copy_sqlite_to_postgres_keeps_everything(pg_server: str, pg_schema: str,
                                                  memex: Path, tmp_path: Path) -> None:
    from tests.retrieval.conftest import HashingEmbedder

    idx = tmp_path / "i.sqlite3"
    e = HashingEmbedder()
    with _sqlite_memex(memex, idx) as m:
        m.sync()
        m.capture("Remember the zyxquux", todo="TODO")
        vector_index(m.store, e.name, e.dim).embed_pending(e.embed)
        want = _dump(m.store)
        want_journal = [(j.op, j.path, j.before_hash, j.after_hash)
                        for j in m.store.journal(100)]
        want_vecs = vector_index(m.store, e.name, e.dim).matrix()
    r = CliRunner().invoke(cli, ["store", "copy", "--from", f"sqlite:{idx}", "--to", pg_server,
                                 "--schema", pg_schema, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["rows"]["nodes"] == want["counts"]["nodes"] and out["rows"]["journal"] == 1
    with _pg_memex(memex, pg_server, pg_schema) as m:
        assert _dump(m.store) == want
        assert [(j.op, j.path, j.before_hash, j.after_hash)
                for j in m.store.journal(100)] == want_journal
        keys, mat = vector_index(m.store, e.name, e.dim).matrix()
        assert keys == want_vecs[0] and np.allclose(mat, want_vecs[1], atol=1e-6)
        assert m.sync().changed == 0  # the copied file states are current
        m.undo()  # the copied journal still undoes
        assert not m.query("zyxquux")
    again = CliRunner().invoke(cli, ["store", "copy", "--from", str(idx), "--to", pg_server,
                                     "--schema", pg_schema, "--json"])
    assert again.exit_code != 0 and "--replace" in again.output


def test_store_cli_and_doctor(pg_server: str, pg_schema: str, memex: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCORTEX_STORE_SCHEMA", pg_schema)
    r = CliRunner().invoke(cli, ["--store", pg_server, "store", "migrate", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["applied_now"] == ["pg001_core", "pg002_journal",
                                                   "pg003_vectors", "pg005_passages",
                                                   "pg006_no_instr", "pg007_agenda",
                                                   "pg004_recall", "pg008_recall_lengths",
                                                   "pg009_recall_views"]
    r = CliRunner().invoke(cli, ["--store", pg_server, "index", "--memex", str(memex), "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["--store", pg_server, "store", "status", "--json"])
    st = json.loads(r.output)
    assert st["backend"] == "postgresql" and st["counts"]["files"] > 30
    assert st["migrations"]["level"] == "pg009_recall_views"
    r = CliRunner().invoke(cli, ["--store", pg_server, "doctor", "--memex", str(memex), "--json"])
    checks = {c["check"]: c for c in json.loads(r.output)["checks"]}
    assert checks["store"]["ok"], checks["store"]
    d = checks["store"]["detail"]
    assert "connected" in d and "pgvector 0." in d and "pg009_recall_views" in d
    assert f"{st['counts']['nodes']} nodes" in d
    # a server that is not there: a failed check with the fix, not a traceback
    monkeypatch.setenv("OPENCORTEX_STORE_URL", "postgresql://postgres@127.0.0.1:9/none")
    r = CliRunner().invoke(cli, ["doctor", "--memex", str(memex), "--json"])
    checks = {c["check"]: c for c in json.loads(r.output)["checks"]}
    assert not checks["index"]["ok"] and "PostgreSQL store" in checks["index"]["detail"]


def test_reader_never_sees_half_synced_file(pg_server: str, pg_schema: str,
                                           memex: Path) -> None:
    """While a sync transaction is open, another connection sees the old index whole."""
    with _pg_memex(memex, pg_server, pg_schema) as m:
        m.sync()
        before = m.store.counts()
        _many_files(memex, 60)
        writer = PgStore(pg_server, pg_schema)
        from opencortex.memory.incremental import load_file

        writer.begin()
        for i in range(30):
            rel = f"bulk/f{i:03}.org"
            _, state, rows, _ = load_file(str(memex / rel), rel, None)
            writer.put_file(rows, state)
        assert m.store.counts() == before  # nothing visible mid-transaction
        writer.commit()
        assert m.store.counts()["files"] == before["files"] + 30
        writer.close()


def test_pg_url_is_redacted(pg_server: str) -> None:
    from opencortex.memory.pg_store import redact_url

    assert redact_url("postgresql://me:secret@host/db") == "postgresql://me:***@host/db"
    with pytest.raises(Exception, match="cannot connect"):
        PgStore("postgresql://me:secret@127.0.0.1:9/db")
    assert psycopg  # the driver is installed with the dev extras
