"""The keyword and vector engines are chosen by the store's dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.memory.dialect import SQLITE
from opencortex.memory.store import store_dialect
from opencortex.retrieval.keyword import PgKeywordEngine, TantivyEngine, engine_for
from opencortex.retrieval.vectors import MatrixVectors, vector_index


@pytest.mark.sqlite_only("which engine a location gets (the PostgreSQL one without connecting)")
def test_engines_are_chosen_by_the_store_dialect(tmp_path: Path) -> None:
    assert store_dialect("postgresql://u@h/db").name == "postgresql"
    assert store_dialect("postgres://h/db").name == "postgresql"
    assert store_dialect(tmp_path / "i.sqlite3").name == "sqlite"
    root = tmp_path / "m"
    root.mkdir()
    m = Memex(root, index=tmp_path / "i.sqlite3")
    assert isinstance(engine_for(m), TantivyEngine)
    assert isinstance(vector_index(m.store, "m", 8), MatrixVectors)
    m.close()
    m.settings.store_url = "postgresql://nobody@127.0.0.1:1/none"
    assert isinstance(engine_for(m), PgKeywordEngine)
    assert m._store is None  # chosen from settings: the store was not opened

    class NoRows:
        dialect = SQLITE

        def generation(self) -> str:
            return "0"

    with pytest.raises(TypeError, match="keeps no passage-vector rows"):
        vector_index(NoRows(), "m", 8)
