"""The suite really runs against the store it says (OPENCORTEX_TEST_STORE)."""

from __future__ import annotations

from pathlib import Path

from opencortex.memex import Memex

from ..conftest import EXAMPLE, TEST_STORE


def test_every_memex_uses_the_store_under_test(tmp_path: Path) -> None:
    with Memex(EXAMPLE, index=tmp_path / "i.sqlite3") as m:
        m.sync()
        kind = type(m.store).__name__
        assert m.query("todo:NEXT")
    assert kind == ("PgStore" if TEST_STORE == "postgresql" else "SqliteStore")
