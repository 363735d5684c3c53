"""Incremental sync: only changed files re-parsed; the index mirrors the files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from opencortex.errors import IndexStoreError
from opencortex.memex import Memex
from opencortex.memory import incremental as sync_mod
from opencortex.memory.sqlite_store import SqliteStore


def test_example_memex_indexes_completely(memex: Path, tmp_path: Path) -> None:
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        s = m.sync()
        assert s.errors == 0 and s.skipped == 0
        heads = sum(1 for p in memex.rglob("*.org") for line in p.read_text().splitlines()
                    if line.startswith("*") and line.lstrip("*")[:1] in (" ", "\t"))
        # every headline outside blocks is a node (the example has none inside blocks)
        assert s.nodes == heads >= 60
        assert s.files == len(list(memex.rglob("*.org")))
        c = m.store.counts()
        assert c["ids"] >= 30 and c["links"] > 50
        # id links resolve, except the one deliberately dangling
        dangling = m.store.dangling_links()
        assert [d.path for d in dangling] == ["09e3b089-e415-4b35-b585-634739ba7fb4"]


def test_noop_resync_parses_nothing(memex: Path, tmp_path: Path, monkeypatch) -> None:
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        m.sync()
        calls = []
        real = sync_mod.load_file
        monkeypatch.setattr(sync_mod, "load_file", lambda *a: calls.append(a) or real(*a))
        s = m.sync(workers=1)
        assert (s.added, s.changed, s.removed) == (0, 0, 0)
        assert calls == []


def test_touch_without_change_is_hashed_not_reparsed(memex: Path, tmp_path: Path) -> None:
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        m.sync()
        f = memex / "gtd.org"
        os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
        s = m.sync(workers=1)
        assert (s.changed, s.unchanged) == (0, s.files)


def test_add_change_remove(memex: Path, tmp_path: Path) -> None:
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        base = m.sync()
        (memex / "new.org").write_text("* TODO Fresh entry :x:\nbody words zebra\n")
        g = memex / "gtd.org"
        g.write_text(g.read_text() + "\n* NEXT Added at the end\n")
        (memex / "meetings.org").unlink()
        s = m.sync(workers=1)
        assert (s.added, s.changed, s.removed) == (1, 1, 1)
        assert m.query("zebra")[0].title == "Fresh entry"
        assert m.query("heading:Added")[0].todo == "NEXT"
        assert not m.query("file:meetings.org")
        assert s.files == base.files


def test_parallel_and_serial_sync_agree(memex: Path, tmp_path: Path) -> None:
    # enough files to use the worker pool
    for i in range(60):
        (memex / f"bulk{i}.org").write_text(f"* Bulk {i}\n:PROPERTIES:\n:ID: bulk-{i}\n:END:\n"
                                             f"[[id:bulk-{(i + 1) % 60}][next]]\n")
    with Memex(memex, index=tmp_path / "a.sqlite3") as a, \
            Memex(memex, index=tmp_path / "b.sqlite3") as b:
        sa, sb = a.sync(workers=2), b.sync(workers=1)
        assert sa.nodes == sb.nodes
        na = [n.to_dict() for n in a.query("file:bulk*")]
        nb = [n.to_dict() for n in b.query("file:bulk*")]
        assert na == nb and len(na) == 60
        assert [x.source_key for x in a.store.backlinks("id:bulk-0")] == ["id:bulk-59"]


def test_bad_files_are_counted_not_fatal(memex: Path, tmp_path: Path) -> None:
    (memex / "binary.org").write_bytes(b"* Head \xff\xfe\x00 nul\n\x00\x00 body\n")
    (memex / "unterminated.org").write_text("* A\n:PROPERTIES:\n:ID: x\n#+begin_src\n* B\n")
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        s = m.sync()
        assert s.errors >= 1 and any("binary.org" in p for p in s.problems)
        assert m.query("file:binary.org")[0].title.startswith("Head")
        assert [n.title for n in m.query("file:unterminated.org")] == ["A", "B"]


def test_corrupt_index_gives_the_fix(tmp_path: Path) -> None:
    p = tmp_path / "bad.sqlite3"
    p.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexStoreError, match="disposable"):
        SqliteStore(p)


def test_migrations_from_blank(tmp_path: Path) -> None:
    import opencortex.recall.migrations  # noqa: F401  (recall's set, registered)

    SqliteStore(tmp_path / "x.sqlite3").close()
    db = sqlite3.connect(tmp_path / "x.sqlite3")
    names = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == ["m001_core", "m002_journal", "m003_retrieval", "m004_recall",
                     "m005_passages", "m006_recall_ids", "m007_agenda",
                     "m008_recall_lengths", "m009_recall_views"]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"files", "nodes", "links", "journal", "nodes_fts"} <= tables
    SqliteStore(tmp_path / "x.sqlite3").close()  # re-opening applies nothing twice


def test_a_dying_worker_falls_back_to_in_process_parsing(memex: Path, tmp_path: Path,
                                                          monkeypatch) -> None:
    for i in range(60):
        (memex / f"bulk{i}.org").write_text(f"* Bulk {i}\n")
    monkeypatch.setattr(sync_mod, "_load_star", _die)
    with Memex(memex, index=tmp_path / "i.sqlite3") as m:
        s = m.sync(workers=2)
        assert s.errors == 0 and len(m.query("file:bulk*")) == 60


def _die(args: object) -> None:
    """A worker killed mid-parse (module level: the pool pickles it by name)."""
    os._exit(1)
