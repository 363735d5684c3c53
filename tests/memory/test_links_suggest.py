"""`links suggest` on the example memex with the offline MiniLM: no suggestion is a note
that already links to or from the node; each carries a passage of its own text; --apply
links one by id: (creating the target's ID), the link is then known to the index and the
suggestion gone; undo restores both files byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.insight.links_suggest import _root_of, suggest
from opencortex.memex import Memex

RAG = "id:b632cd44-5843-4242-b14f-c5f9636af2b2"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def shared_index(memex: Path, tmp_path: Path) -> Path:
    return tmp_path / "i.sqlite3"


def test_suggestions_exclude_existing_links_and_apply_links_one(memex: Path,
                                                                shared_index: Path):
    with Memex(memex, shared_index) as m:
        m.sync()
        node, found = suggest(m, RAG, k=5)
        assert found
        nodes = m.store.select("1=1", with_body=True)
        by_file: dict = {}
        for n in sorted(nodes, key=lambda n: n.line):
            by_file.setdefault(n.file, []).append(n)
        by_key = {n.key: n for n in nodes}
        me = _root_of(node, by_file)
        sub = by_file[me.file]
        linked = set()
        for x in sub:
            linked |= {_root_of(by_key[ln.target_key], by_file).key
                       for ln in m.store.links_from(x.key) if ln.target_key in by_key}
            linked |= {_root_of(by_key[ln.source_key], by_file).key
                       for ln in m.store.backlinks(x.key) if ln.source_key in by_key}
        assert len(linked) >= 3  # the RAG note does link with several notes
        for s in found:
            c = by_key[s.key]
            assert _root_of(c, by_file).key not in linked | {me.key}, s
            assert s.passage and (s.passage in " ".join((c.body or "").split())
                                  or s.passage == c.title)
            assert s.score > 0
    r = CliRunner()
    args = ["--memex", str(memex), "--index", str(shared_index)]
    listed = json.loads(r.invoke(cli, ["links", "suggest", RAG, *args, "--json"]).output)
    first = listed["suggestions"][0]
    assert first["key"] == found[0].key
    note = memex / "notes" / "retrieval-augmented-generation.org"
    tfile = memex / first["file"]
    before = (_sha(note), _sha(tfile))
    out = r.invoke(cli, ["links", "suggest", RAG, *args, "--apply", "1", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    tid = d["linked"]["id"]
    assert f"[[id:{tid}][" in note.read_text(encoding="utf-8")
    assert f":ID:       {tid}" in tfile.read_text(encoding="utf-8") or first["id"] == tid
    with Memex(memex, shared_index) as m:
        m.sync()
        assert any(ln.path == tid for x in [m.resolve(RAG)] for ln in m.store.links_from(x.key))
        _, again = suggest(m, RAG, k=5)
        assert first["key"] not in [s.key for s in again]
    undo = r.invoke(cli, ["undo", str(len(d["writes"])), *args])
    assert undo.exit_code == 0, undo.output
    assert (_sha(note), _sha(tfile)) == before
    bad = r.invoke(cli, ["links", "suggest", RAG, *args, "--apply", "99", "--json"])
    assert bad.exit_code == 1 and "suggestions" in json.loads(bad.output)["error"]
