"""The content-keyed vector cache the notes answer uses for its units."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from opencortex.embed.vector_cache import cached_embed


class CountingEmbedder:
    """A deterministic embedder (vectors from each text's hash) that counts what it embeds."""

    name = "counting"
    dim = 8

    def __init__(self, salt: str = "") -> None:
        self.seen: list[str] = []
        self.salt = salt

    def embed(self, texts, batch_size: int = 32) -> np.ndarray:
        self.seen += list(texts)
        rows = [np.frombuffer(hashlib.sha256((self.salt + t).encode()).digest()[:32],
                              dtype=np.uint8)[: self.dim].astype(np.float32) + 1 for t in texts]
        out = np.array(rows, np.float32).reshape(len(texts), self.dim)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_seen_texts_come_from_the_cache_with_the_models_rows(tmp_path: Path) -> None:
    path = tmp_path / "units"
    emb = CountingEmbedder()
    first = cached_embed(emb, ["a", "b", "c"], path)
    assert emb.seen == ["a", "b", "c"]
    assert np.array_equal(first, CountingEmbedder().embed(["a", "b", "c"]))
    assert os.stat(path).st_mode & 0o777 == 0o600
    again = cached_embed(emb, ["c", "d", "a"], path)
    assert emb.seen == ["a", "b", "c", "d"]  # only the new text went to the model
    assert np.array_equal(again, CountingEmbedder().embed(["c", "d", "a"]))
    assert again.dtype == np.float32 and again.shape == (3, 8)


def test_another_model_never_reads_these_rows(tmp_path: Path) -> None:
    path = tmp_path / "units"
    cached_embed(CountingEmbedder(), ["a"], path)
    other = CountingEmbedder(salt="x")
    other.name = "other-model"
    got = cached_embed(other, ["a"], path)
    assert other.seen == ["a"] and np.array_equal(got, CountingEmbedder(salt="x").embed(["a"]))


def test_an_unusable_file_only_costs_the_model_call(tmp_path: Path) -> None:
    path = tmp_path / "units"
    path.write_bytes(b"not a database at all" * 50)
    emb = CountingEmbedder()
    got = cached_embed(emb, ["a", "b"], path)
    assert emb.seen == ["a", "b"] and np.array_equal(got, CountingEmbedder().embed(["a", "b"]))
    assert cached_embed(emb, [], path).shape == (0, 8)


def test_the_file_is_kept_under_its_size(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "units"
    emb = CountingEmbedder()
    for i in range(5):
        cached_embed(emb, [f"t{i}-{j}" for j in range(10)], path, max_rows=20)
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT count(*) FROM vec").fetchone()[0] <= 20


def test_rows_known_in_this_process_need_no_file(tmp_path: Path) -> None:
    """A pass whose rows were all read or written before opens no file and writes nothing;
    the rows are still the model's."""
    path = tmp_path / "units"
    emb = CountingEmbedder()
    cached_embed(emb, ["a", "b"], path)
    path.unlink()  # opening it again would make a new, empty one
    got = cached_embed(emb, ["b", "a", "b"], path)
    assert emb.seen == ["a", "b"]
    assert np.array_equal(got, CountingEmbedder().embed(["b", "a", "b"]))
    assert not path.exists()


def test_a_pass_read_from_the_file_writes_nothing_when_its_rows_are_fresh(
        tmp_path: Path, monkeypatch) -> None:
    """Another process's rows (on disk, not in this one's memory) are read without a
    commit while their ``used`` stamps are fresh."""
    from opencortex.embed import vector_cache

    path = tmp_path / "units"
    cached_embed(CountingEmbedder(), ["a", "b"], path)
    monkeypatch.setattr(vector_cache, "_memory", {})  # as a new process
    stamp = os.stat(path).st_mtime_ns
    emb = CountingEmbedder()
    got = cached_embed(emb, ["a", "b"], path)
    assert emb.seen == [] and np.array_equal(got, CountingEmbedder().embed(["a", "b"]))
    assert os.stat(path).st_mtime_ns == stamp
