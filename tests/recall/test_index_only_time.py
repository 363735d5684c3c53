"""`recall --index-only` reports the time it really took (issue 27: "in 1.11 s" after 125 s:
the embedding of the gists and the sync were left out of the clock)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.recall.index import RecordIndex

from .conftest import FIXTURES


def test_reported_seconds_cover_the_embedding(memex: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_embed(self, emb, progress=None) -> int:
        time.sleep(1.5)  # what embedding thousands of gists costs, in small
        return 7

    monkeypatch.setattr(RecordIndex, "embed_pending", slow_embed)
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, ["recall", "--index-only", "--no-defaults", "--source",
                                 f"claude-code:{FIXTURES / 'claude'}", "--memex", str(memex),
                                 "--index", str(tmp_path / "i.sqlite3"), "--json"])
    wall = time.perf_counter() - t0
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["embedded"] == 7 and s["embed_seconds"] >= 1.5
    assert s["seconds"] >= s["read_seconds"] + s["embed_seconds"]
    assert 1.5 <= s["seconds"] <= wall
    human = CliRunner().invoke(cli, ["recall", "--index-only", "--no-defaults", "--memex",
                                     str(memex), "--index", str(tmp_path / "i.sqlite3")])
    m = re.search(r"in (\d+\.\d\d) s \(reading \d+\.\d\d s, embedding (\d+\.\d\d) s\)",
                  human.output)
    assert m and float(m[1]) >= float(m[2]) >= 1.5, human.output
