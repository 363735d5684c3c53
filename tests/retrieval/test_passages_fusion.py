"""Passages for long nodes, score fusion, and the sparse query's stemming / OR semantics."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.memory.migrations import MIGRATIONS, apply_migrations
from opencortex.memory.nodes import PASSAGE_OVERLAP, PASSAGE_WORDS, embed_hash, embed_text, passages
from opencortex.retrieval.fusion import fuse
from opencortex.retrieval.hybrid import Retriever
from opencortex.retrieval.keyword import FIELD_BOOSTS
from opencortex.retrieval.vectors import vector_index

from .conftest import HashingEmbedder


def _lines(n: int, words: int, tag: str = "w") -> str:
    return "\n".join(" ".join(f"{tag}{i}x{j}" for j in range(words)) for i in range(n))


# -- splitting -------------------------------------------------------------------------
def test_short_node_is_one_passage_equal_to_the_node_text() -> None:
    ps = passages(["Top"], "Title", "a short body", 4, 5)
    assert ps == [(4, embed_text(["Top"], "Title", "a short body"))]


def test_long_node_splits_at_line_starts_with_overlap_and_outline_prefix() -> None:
    body = _lines(12, 40)  # 480 words, lines of 40
    ps = passages(["Parent", "Child"], "Leaf", body, 10, 12)
    # the first passage is the whole text (what the model always read: its first window)
    assert ps[0] == (10, embed_text(["Parent", "Child"], "Leaf", body))
    rest = ps[1:]
    assert len(rest) >= 3
    lines = body.split("\n")
    for ln, text in rest:
        head, _, words = text.partition("\n")
        assert head == "Parent / Child / Leaf"
        assert len(text.split()) <= PASSAGE_WORDS
        # a passage starts at the start of the line it names
        assert words.startswith(lines[ln - 12].split()[0] + " ")
    starts = [ln for ln, _ in rest]
    assert starts == sorted(starts) and starts[0] > 12
    # the first window (PASSAGE_WORDS words) and the later passages overlap
    first_window = set(" ".join([*["Parent / Child / Leaf"], body]).split()[:PASSAGE_WORDS])
    assert first_window & set(rest[0][1].split("\n", 1)[1].split())
    for (_, a), (_, b) in itertools.pairwise(rest):
        assert set(a.split("\n", 1)[1].split()) & set(b.split("\n", 1)[1].split())
    # every word past the first window is in a later passage
    covered = {w for _, t in rest for w in t.split("\n", 1)[1].split()}
    assert set(body.split()) - first_window <= covered


def test_one_over_long_line_is_cut_at_words_with_overlap() -> None:
    body = " ".join(f"t{i}" for i in range(500))
    ps = passages([], "T", body, 1, 2)
    assert ps[0] == (1, embed_text([], "T", body))
    assert all(ln == 2 for ln, _ in ps[1:]) and len(ps) >= 4
    second, third = (t.split("\n", 1)[1].split() for _, t in ps[1:3])
    assert second[-PASSAGE_OVERLAP:] == third[:PASSAGE_OVERLAP]
    assert second[0] != "t0"  # the first window is not embedded twice
    assert {w for _, t in ps[1:] for w in t.split("\n", 1)[1].split()} >= \
        set(body.split()[PASSAGE_WORDS:])


# -- storage and incremental embedding ----------------------------------------------------
@pytest.fixture
def long_mx(tmp_path: Path):
    root = tmp_path / "m"
    root.mkdir()
    body = _lines(10, 40) + "\nzeppelin hangar airship dirigible mooring mast helium\n" + _lines(10, 40, "v")
    (root / "long.org").write_text(f"* Long note\n:PROPERTIES:\n:ID: L\n:END:\n{body}\n"
                                   "* Short note\nsourdough bread\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    yield m
    m.close()


def test_passages_stored_and_unchanged_text_not_reembedded(long_mx: Memex) -> None:
    e = HashingEmbedder()
    v = vector_index(long_mx.store, e.name, e.dim)
    st = v.status()
    assert st.nodes == 2 and st.pending == 2
    n = v.embed_pending(e.embed)
    assert n == v.passage_count() and n > 3
    assert v.embed_pending(e.embed) == 0 and v.status().ready
    # appending to the long node changes only its last passage(s)
    f = long_mx.root / "long.org"
    f.write_text(f.read_text().replace("* Short note", "one more closing line\n* Short note"))
    long_mx.sync()
    assert v.status().pending == 1
    redone = v.embed_pending(e.embed)
    assert 1 <= redone <= 2 < n
    # the short node's single passage has the node's own embed hash
    row = long_mx.store.db.execute(
        "SELECT n.embed_hash, p.hash FROM nodes n JOIN passages p ON p.node_id = n.id "
        "WHERE n.title = 'Short note'").fetchall()
    assert len(row) == 1 and row[0][0] == row[0][1] == embed_hash(
        embed_text([], "Short note", "sourdough bread"))


def test_dense_hit_carries_the_matching_passage_line(long_mx: Memex) -> None:
    r = Retriever(long_mx, embedder=HashingEmbedder(dim=1024))  # few collisions
    r.vectors.embed_pending(r.embedder.embed)
    res = r.search("zeppelin hangar airship dirigible mooring mast helium", mode="dense", k=2)
    top = res.hits[0]
    assert top.id == "L" and top.match_line is not None and top.match_line > top.line
    text = (long_mx.root / "long.org").read_text().split("\n")
    # the passage starting at match_line holds the words (within one passage's reach)
    window = " ".join(text[top.match_line - 1: top.match_line + 5])
    assert "zeppelin" in window
    # ``file:LINE`` of the passage is a reference read/citations resolve to the node
    assert [n.key for n in long_mx.store.nodes_by_ref(f"{top.file}:{top.match_line}")] == \
        ["id:L"]
    hy = r.search("zeppelin hangar airship dirigible", mode="hybrid", k=2)
    assert hy.hits[0].id == "L" and hy.hits[0].match_line == top.match_line
    sp = r.search("zeppelin", mode="sparse", k=2)
    assert sp.hits[0].match_line is None  # sparse alone says no passage


@pytest.mark.sqlite_only("opens an index made by the previous schema as a SQLite file")
def test_existing_index_upgrades_and_resyncs_passages(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / "a.org").write_text("* Note\nbody words\n")
    idx = tmp_path / "old.sqlite3"
    db = sqlite3.connect(idx, isolation_level=None)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for name, sql in MIGRATIONS[:-1]:  # the index as the release before passages made it
        db.executescript(f"BEGIN;{sql};INSERT INTO _migrations VALUES ('{name}', 0);COMMIT;")
    db.close()
    with Memex(root, index=idx) as m:
        m.sync()
        assert m.store.db.execute("SELECT count(*) FROM passages").fetchone()[0] == 1
        assert apply_migrations(m.store.db) == []


# -- fusion ------------------------------------------------------------------------------
def _rank_of(fused: list[tuple[str, float]], key: str) -> int:
    return [k for k, _ in fused].index(key) + 1


def test_fusion_with_one_empty_list_is_the_other() -> None:
    s = [("a", 3.0), ("b", 2.0)]
    assert fuse(s, []) == s and fuse([], s) == s and fuse([], []) == []


def test_fusion_keeps_the_decisive_list_when_the_other_is_flat() -> None:
    sparse = [("rel", 12.0), ("x1", 4.0), ("x2", 3.9), ("x3", 3.8)]
    dense = [("x3", 0.412), ("x2", 0.411), ("x1", 0.410), ("rel", 0.409)]  # no opinion
    f = fuse(sparse, dense)
    assert _rank_of(f, "rel") == 1
    dense2 = [("rel", 0.90), ("y1", 0.31), ("y2", 0.30)]  # decisive dense
    sparse2 = [("y2", 5.0), ("y1", 4.99), ("rel", 4.98)]  # flat sparse
    assert _rank_of(fuse(sparse2, dense2), "rel") == 1


@pytest.mark.parametrize("seed", range(20))
def test_fusion_never_below_the_better_input_when_they_agree_on_the_winner(seed: int) -> None:
    import random

    rnd = random.Random(seed)
    keys = [f"k{i}" for i in range(30)]
    rnd.shuffle(keys)
    sparse = sorted(((k, rnd.uniform(0, 5)) for k in keys[1:20]), key=lambda x: -x[1])
    dense = sorted(((k, rnd.uniform(0.1, 0.5)) for k in keys[5:30]), key=lambda x: -x[1])
    sparse.insert(0, (keys[0], 9.0))
    dense.insert(0, (keys[0], 0.8))  # both put the relevant one first: so must the fusion
    assert _rank_of(fuse(sparse, dense), keys[0]) == 1


# -- the sparse query ----------------------------------------------------------------------
@pytest.fixture
def words_mx(tmp_path: Path):
    root = tmp_path / "w"
    root.mkdir()
    (root / "n.org").write_text(
        "* Running notes\nShe runs every morning.\n"
        "* Caches\nThe caching layer evicts entries.\n"
        "* Both\nrunning and caching together\n"
        "* Unrelated\nsourdough bread\n"
        "* Outline parent\n** Child leaf\nplain words only\n")
    m = Memex(root, index=tmp_path / "w.sqlite3")
    m.sync()
    yield m
    m.close()


def test_sparse_stems_and_ors_the_query_words(words_mx: Memex) -> None:
    r = Retriever(words_mx, embedder=HashingEmbedder())
    hits = [h.title for h in r.search("run cached", mode="sparse").hits]
    # stemming: run ~ runs/running, cached ~ caching; OR: a node with one word matches
    assert set(hits[:3]) == {"Both", "Running notes", "Caches"} and "Unrelated" not in hits
    # phrases and prefixes still work
    assert [h.title for h in r.search('"caching layer"', mode="sparse").hits] == ["Caches"]
    assert "Caches" in [h.title for h in r.search("cach*", mode="sparse").hits]
    # the outline path is searched (as its own field, when its boost is not 0)
    want = {"Outline parent", "Child leaf"} if FIELD_BOOSTS["outline"] else {"Outline parent"}
    assert want == {h.title for h in r.search("parent", mode="sparse").hits}


def test_existing_postgresql_index_upgrades(tmp_path: Path, pg_server: str, pg_schema: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("psycopg", reason="the PostgreSQL driver (dev extras) is missing")
    from dataclasses import replace

    from opencortex.memory import migrations, nodes, pg_migrations

    root = tmp_path / "m"
    root.mkdir()
    (root / "a.org").write_text("* Parent heading\n** Child\nrunning notes\n")

    def pg_memex() -> Memex:
        m = Memex(root)
        m.settings.store_url, m.settings.store_schema = pg_server, pg_schema
        return m

    before = tuple(x for x in pg_migrations.PG_MIGRATIONS if x[0] != "pg005_passages")
    monkeypatch.setattr(migrations, "INDEX", replace(migrations.INDEX, postgresql=before))
    monkeypatch.setattr(nodes, "passages", lambda *a: [])  # that release wrote none
    with pg_memex() as m:  # the index as the release before passages made it
        m.sync()
        assert m.store.counts()["nodes"] == 2
    monkeypatch.undo()
    with pg_memex() as m:
        assert "pg005_passages" in m.store.migrations_applied
        m.sync()  # every file read again: passages written, full text with outline paths
        assert m.store.db.execute("SELECT count(*) FROM passages").fetchone()[0] == 2
        r = Retriever(m, embedder=HashingEmbedder())
        assert [h.title for h in r.search("run", mode="sparse").hits] == ["Child"]
        assert "Child" in [h.title for h in r.search("parent", mode="sparse").hits]
