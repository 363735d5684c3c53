"""A presented story a person recognises at a glance, over the generated recall corpus (plus
one note written in full Org: links, emphasis, a list, tags, a long sentence): no excerpt is
a bare headline line, none starts or ends mid-word, none holds raw ``[[`` link markup,
locators are shown relative to their root with the handle beside them, and adjacent
candidates are named by title and date only (no tag words glued on)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.recall.engine import Recall, parse_source
from opencortex.recall.notetext import note_segments, relative_locator, render_org
from opencortex.recall.sources import SOURCES

from .test_engine import NOW, _cases, _generator, _in_raw_record, _roots

ORG_NOTE = """
* Cache invalidation with [[id:0b5e-rag][RAG]] lookups                :caching:perf:
:PROPERTIES:
:ID: 3f1c-invalidation
:CREATED: [2026-10-02 Fri 10:00]
:END:
Stale embeddings kept answering after the source page changed, so every cached answer
now carries the /etag/ of the pages it quoted. When the etag moves, the entry is dropped
and the next query recomputes it through [[https://example.org/docs][the retrieval docs]]
pipeline, which is slower but never wrong.
- invalidate on *etag change*, not on a timer
- keep a tombstone for an hour so a burst of queries does not stampede the =embedder=
"""
HEADLINE = re.compile(r"^\*+\s")
WORD = re.compile(r"\w")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("recall-present") / "corpus"
    _generator().generate(out, distractors=8, now=NOW)
    ideas = out / "memex" / "notes" / "ideas.org"
    ideas.write_text(ideas.read_text(encoding="utf-8") + ORG_NOTE, encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def rounds(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> list:
    tmp = tmp_path_factory.mktemp("present-state")
    m = Memex(corpus / "memex", tmp / "index.sqlite3")
    e = Recall(m, [parse_source(s) for s in _roots(corpus)], defaults=False,
               state_dir=tmp / "state", gateway=False)
    cues = [c["cue"] for c in _cases(corpus).values()]
    cues.append("my note about invalidating cached answers when the etag changes")
    out = [e.start(cue, now=NOW) for cue in cues]
    m.close()
    return out


def test_no_excerpt_is_a_headline_cut_mid_word_or_raw_markup(rounds, corpus):
    presented = [r for r in rounds if r.state == "presented"]
    assert len(presented) >= len(rounds) // 2, [r.state for r in rounds]
    n = 0
    for rnd in presented:
        for c in rnd.story:
            cite = c["cite"]
            ex = cite["excerpt"]
            n += 1
            assert not HEADLINE.match(ex), cite
            assert "[[" not in ex and "]]" not in ex, cite
            raw = cite.get("raw", ex)
            assert _in_raw_record(cite["locator"], raw), cite  # grounded in the record
            # whole words at both ends: the raw piece is not glued to letters around it
            texts = [t for t in _record_texts(cite["locator"]) if raw in t]
            for text in texts[:1]:
                i = text.index(raw)
                before = text[i - 1] if i else " "
                after = text[i + len(raw)] if i + len(raw) < len(text) else " "
                assert not (WORD.match(before) and WORD.match(raw[0])), cite
                assert not (WORD.match(after) and WORD.match(raw[-1])), cite
    assert n >= 10


def _record_texts(loc: str) -> list[str]:
    """The record's text as its reader opens it (a note: the Org file itself); a git
    object is checked by ``_in_raw_record`` through ``git show`` instead."""
    path = Path(re.sub(r":[\d-]+(?::.*)?$|#.*$", "", loc))
    while not path.is_file() and path != path.parent:
        path = path.parent
    if not path.is_file():
        return []
    if path.suffix == ".org":
        return [path.read_text(encoding="utf-8", errors="replace")]
    return [t.text for src in SOURCES.values() for r in src.read(path) for t in r.turns]


def test_the_org_note_is_quoted_as_rendered_sentences(rounds):
    rnd = rounds[-1]
    assert rnd.state == "presented", rnd.to_dict()
    excerpts = [c["cite"]["excerpt"] for c in rnd.story]
    assert excerpts and not any(e.startswith("*") for e in excerpts)
    joined = " ".join(excerpts)
    assert "etag" in joined and "[[" not in joined and "/etag/" not in joined
    for e in excerpts:  # a sentence or a list item: ends with its own punctuation or word
        assert e[0].isupper() or e[0].isalnum(), e
    where = [c["cite"]["where"] for c in rnd.story]
    assert all(w.startswith("notes/ideas.org:") for w in where), where
    text = rnd.render()
    assert "notes/ideas.org:" in text and "reopen: id:3f1c-invalidation" in text
    assert str(Path("/")) + "tmp" not in text.split("Also near the cue")[0]


def test_adjacent_candidates_carry_no_tag_words(rounds):
    seen = 0
    for rnd in rounds:
        for a in rnd.adjacent:
            seen += 1
            d = a["describe"]
            assert re.fullmatch(r"«[^«»]+», (?:\d{4}-\d{2}-\d{2}|undated)(?: \(\+\d+ joined\))?",
                                d), d
            name = d[1:d.index("»")]
            assert not re.search(r"\b(?:idea|caching|perf)$", name), d
            assert "[[" not in name
    assert seen


def test_note_segments_render_org_as_text():
    segs = note_segments(ORG_NOTE)
    shown = [s for _, s in segs]
    assert not any(s.startswith("*") or ":PROPERTIES:" in s or s.startswith(":ID:")
                   for s in shown)
    assert "invalidate on etag change, not on a timer" in shown
    assert any(s.startswith("Stale embeddings kept answering") and s.endswith("quoted.")
               for s in shown)
    assert any("the retrieval docs pipeline" in s for s in shown)
    for raw, _ in segs:
        assert raw in ORG_NOTE
    assert render_org("see [[id:x][RAG]] and [[file:a.org]] with =code= and *bold*") == \
        "see RAG and a.org with code and bold"
    assert relative_locator("/m/notes/a.org:3", "/m") == "notes/a.org:3"
    assert relative_locator("/src/repo@" + "a" * 40, "/src/repo") == "repo@" + "a" * 40
    assert json.dumps(shown)  # plain strings
