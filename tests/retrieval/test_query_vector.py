"""A Retriever embeds a query once (``Retriever.query_vector``): the search and the notes
answer's scoring share the vector; a swapped-in embedder's vectors are its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opencortex.memex import Memex
from opencortex.retrieval.hybrid import Retriever


class Counting:
    name = "counting"
    dim = 4

    def __init__(self, scale: float = 1.0) -> None:
        self.seen: list[str] = []
        self.scale = scale

    def embed(self, texts, batch_size: int = 32) -> np.ndarray:
        self.seen += list(texts)
        return np.array([[len(t), 1.0, 0.0, self.scale] for t in texts], np.float32)


def test_a_query_is_embedded_once_per_embedder(tmp_path: Path) -> None:
    (tmp_path / "memex").mkdir()
    m = Memex(tmp_path / "memex", tmp_path / "i.sqlite3")
    try:
        emb = Counting()
        r = Retriever(m, embedder=emb)
        a = r.query_vector("walrus code")
        b = r.query_vector("walrus code")
        assert emb.seen == ["walrus code"] and np.array_equal(a, b)
        other = Counting(scale=2.0)
        r._embedder = other  # as links_suggest and tests do
        c = r.query_vector("walrus code")
        assert other.seen == ["walrus code"] and c[3] == 2.0
    finally:
        m.close()
