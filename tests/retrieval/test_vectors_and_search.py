"""Vectors keyed by (text hash, model, dim); hybrid search; deep reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.retrieval.deep_read import deep_read
from opencortex.retrieval.hybrid import Retriever
from opencortex.retrieval.vectors import vector_index

from .conftest import HashingEmbedder

NOTES = {
    "a.org": "* Alpha caching note\n:PROPERTIES:\n:ID: A\n:END:\nWrite-through caches. "
             "See [[id:B][beta]].\n** Alpha child\nchild text\n",
    "b.org": "* Beta eviction note\n:PROPERTIES:\n:ID: B\n:END:\nLRU eviction policy. "
             "Back to [[id:A][alpha]] and [[file:c.org::*Gamma][gamma]].\n",
    "c.org": "* Gamma\n:PROPERTIES:\n:ID: C\n:END:\n" + "Long gamma text about zebras. " * 80,
    "d.org": "* Delta unrelated\nSourdough bread hydration.\n",
}


@pytest.fixture
def mx(tmp_path: Path):
    root = tmp_path / "m"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text)
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    yield m
    m.close()


def test_embeddings_are_incremental_and_content_addressed(mx: Memex) -> None:
    e = HashingEmbedder()
    v = vector_index(mx.store, e.name, e.dim)
    assert v.status().pending == 5
    assert v.embed_pending(e.embed) == 8  # Gamma (400 words) is 4 passages
    assert v.embed_pending(e.embed) == 0 and v.status().ready
    f = mx.root / "d.org"
    f.write_text(f.read_text() + "More about rye.\n")
    mx.sync()
    assert v.status().pending == 1 and v.embed_pending(e.embed) == 1
    (mx.root / "moved.org").write_text((mx.root / "b.org").read_text().replace("ID: B", "ID: B2"))
    mx.sync()  # same title/body/outline elsewhere: same text hash, no new embedding
    assert v.status().pending == 0


def test_model_or_dimension_change_reembeds_never_mixes(mx: Memex) -> None:
    e1, e2, e3 = HashingEmbedder("m1", 64), HashingEmbedder("m2", 64), HashingEmbedder("m1", 32)
    v1 = vector_index(mx.store, e1.name, e1.dim)
    v1.embed_pending(e1.embed)
    v2 = vector_index(mx.store, e2.name, e2.dim)
    v3 = vector_index(mx.store, e3.name, e3.dim)
    assert v2.status().embedded == 0 and v3.status().embedded == 0
    assert v2.search(e2.embed(["caching"])[0]) == []
    v3.embed_pending(e3.embed)
    _keys, m = v3.matrix()
    assert m.shape == (8, 32)  # one row per passage
    assert v1.matrix()[1].shape == (8, 64)


def test_wrong_dimension_from_embedder_is_a_clear_error(mx: Memex) -> None:
    v = vector_index(mx.store, "m", 16)
    with pytest.raises(Exception, match="dimension"):
        v.embed_pending(HashingEmbedder("m", 8).embed)


@pytest.mark.sqlite_only("corrupts a float32 BLOB in the SQLite file; pgvector validates "
                        "vectors on write")
def test_corrupted_vector_row_is_dropped_and_redone(mx: Memex) -> None:
    e = HashingEmbedder()
    v = vector_index(mx.store, e.name, e.dim)
    v.embed_pending(e.embed)
    mx.store.db.execute("UPDATE embeddings SET vec = x'00ff' WHERE hash = "
                        "(SELECT min(hash) FROM embeddings)")
    keys, _m = v.matrix()
    assert len(keys) == 7 and v.corrupt_dropped == 1  # 8 passages, one dropped
    assert v.embed_pending(e.embed) == 1
    assert len(v.matrix()[0]) == 8


def test_hybrid_fuses_and_expands_links(mx: Memex) -> None:
    r = Retriever(mx, embedder=HashingEmbedder())
    res = r.search("caching")
    assert res.mode == "sparse" and "not ready" in res.notes[0]
    r.vectors.embed_pending(r.embedder.embed)
    res = r.search("caching write-through", k=10)
    assert res.mode == "hybrid"
    top = res.hits[0]
    assert top.id == "A" and top.outline == ["Alpha caching note"]
    assert top.why["sparse_rank"] == 1 and top.why["dense_rank"] is not None
    assert "caching" in top.snippet.lower() or "caches" in top.snippet.lower()
    dense = r.search("lru eviction policy", mode="dense", k=2)
    assert dense.hits[0].id == "B" and dense.hits[0].why["dense_rank"] == 1


def test_empty_and_one_note_memex(tmp_path: Path) -> None:
    root = tmp_path / "e"
    root.mkdir()
    with Memex(root, index=tmp_path / "e.sqlite3") as m:
        m.sync()
        r = Retriever(m, embedder=HashingEmbedder())
        assert r.search("anything").hits == []
        (root / "one.org").write_text("* Only note\nhello world\n")
        m.sync()
        r.vectors.embed_pending(r.embedder.embed)
        res = r.search("hello")
        assert [h.title for h in res.hits] == ["Only note"] and res.mode == "hybrid"


def test_deep_read_follows_links_cycle_safe(mx: Memex) -> None:
    res = deep_read(mx, ["A"], depth=3, budget=100_000)
    ids = [(n.id, n.depth, n.via) for n in res.nodes]
    assert ids == [("A", 0, None), ("B", 1, "id:A"), ("C", 2, "id:B")]
    assert "** Alpha child" in res.nodes[0].text  # the whole subtree
    assert {b["key"] for b in res.nodes[0].backlinks} == {"id:B"}
    assert res.omitted == []


def test_deep_read_stops_at_budget_and_says_what_was_left(mx: Memex) -> None:
    res = deep_read(mx, ["A"], depth=3, budget=120)
    assert [n.id for n in res.nodes] == ["A", "B"]
    assert res.used <= 120
    assert res.omitted and res.omitted[0]["title"] == "Gamma"
    assert res.omitted[0]["reason"] == "token budget"
    tiny = deep_read(mx, ["C"], depth=0, budget=50)
    assert tiny.nodes[0].truncated and tiny.used <= 50


def test_link_expansion_adds_one_hop_neighbours(mx: Memex) -> None:
    r = Retriever(mx, embedder=HashingEmbedder())
    scores, why = {"id:A": 1.0}, {"id:A": {"sparse_rank": 1}}
    r._expand(scores, why)
    assert scores["id:B"] == 0.5 and why["id:B"] == {"linked_from": "id:A"}
    assert "id:C" not in scores  # one hop only


def test_search_with_structured_filters(mx: Memex) -> None:
    (mx.root / "t.org").write_text("* TODO Caching task :work:\nfix the cache\n"
                                   "* DONE Caching done\nold cache work\n")
    mx.sync()
    r = Retriever(mx, embedder=HashingEmbedder())
    all_hits = {h.title for h in r.search("caching cache", mode="sparse").hits}
    assert {"Caching task", "Caching done", "Alpha caching note"} <= all_hits
    only = r.search("caching cache", mode="sparse", filters="todo tags:work")
    assert [h.title for h in only.hits] == ["Caching task"]
