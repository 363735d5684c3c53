"""A sync that will take seconds without a progress bar says what it does on stderr."""

from __future__ import annotations


def test_a_big_first_index_says_what_it_does(tmp_path, monkeypatch, capsys) -> None:
    """Anything that takes seconds says so on stderr (the first index of a large memex)."""
    from opencortex.memex import Memex
    from opencortex.memory import incremental

    monkeypatch.setattr(incremental, "SLOW_SYNC_FILES", 3)
    monkeypatch.delenv("OPENCORTEX_NO_PROGRESS")
    root = tmp_path / "m"
    root.mkdir()
    for i in range(4):
        (root / f"n{i}.org").write_text(f"* note {i}\n")
    with Memex(root, tmp_path / "i.sqlite3") as m:
        m.sync()
        assert "indexing 4 Org files" in capsys.readouterr().err
        (root / "n0.org").write_text("* changed\n")
        m.sync()  # an ordinary re-index stays quiet
        assert capsys.readouterr().err == ""
