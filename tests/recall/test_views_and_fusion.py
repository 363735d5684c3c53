"""Recall ranks a commit by its best view (its gist or a chunk of its body) and fuses the
keyword and meaning orders by reciprocal rank; the cue's words say when several changes in
a row (a line) or a subject's history (a topic) is meant, and a line is a succession in
time, not every hit of a repository."""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opencortex.recall.cue import read_cue, whole_of
from opencortex.recall.engine import RRF_K, SEMANTIC_FLOOR, _fuse
from opencortex.recall.find import LINE_GAP, _runs, stems
from opencortex.recall.index import MAX_VIEWS, VIEW_WIDTH, Hit, RecordIndex, body_views

from .test_git_history import _commit, _engine, repo  # noqa: F401  (the fixture)

NOW = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


class WordsEmbedder:
    """A real, deterministic embedder for tests: each word stem hashed into one of 256
    dimensions, the counts L2-normalised — texts sharing stems are near, others are not."""

    name = "test-words"
    dim = 256

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        self.seen += list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in stems(t):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
            n = float(np.linalg.norm(out[i]))
            if n:
                out[i] /= n
        return out


def test_body_views_hold_what_the_gist_does_not() -> None:
    body = ("Keep the cache in one place.\n\nSigned-off-by: A <a@x>\n\n"
            "The second paragraph says why the parser was slow\nacross two lines.\n\n"
            + " ".join(["word"] * 200) + "\n\nok")
    gist = "Cache: one place. Keep the cache in one place."
    views = body_views(gist, body)
    assert "Keep the cache in one place." not in views  # the gist holds it already
    assert "The second paragraph says why the parser was slow across two lines." in views
    assert not any("Signed-off-by" in v for v in views)
    assert all(len(v) <= VIEW_WIDTH for v in views)
    assert "ok" not in views  # too short to mean anything alone
    many = "\n\n".join(f"paragraph number {n} about something else entirely" for n in range(20))
    assert len(body_views("", many)) == MAX_VIEWS
    assert body_views("Subject. A one-line body", "A one-line body") == []


def test_a_commit_is_scored_by_its_best_view_and_views_are_embedded_once(
        repo: Path, tmp_path: Path) -> None:  # noqa: F811
    sha = _commit(repo, "src/db.py", "z = 3\n",
                  "Tidy the module\n\n" + "Some renames and moved helpers around. " * 9 +
                  "\n\n"
                  "Along the way the backlinks buffer stopped redrawing every preview "
                  "snippet from scratch, which made opening it fast again.",
                  when="2023-04-01T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        engine.refresh(embed=False)
        index = RecordIndex.for_memex(m)
        views = list(index.q("SELECT r.session_id, v.text FROM rec_views v JOIN rec_records r "
                             "ON r.id = v.record_id"))
        assert [s for s, _ in views] == [sha]
        emb = WordsEmbedder()
        first = index.embed_pending(emb)
        assert first == 3 + 1  # three gists and the one view beyond its commit's gist
        assert index.embed_pending(emb) == 0  # cached by hash: never embedded twice
        scope, _, _ = index.scope(engine.base_roots, None)
        q = emb.embed(["the backlinks buffer redrawing every preview snippet"])[0]
        best = index.dense(q, scope, emb.name, emb.dim)
        assert best[0][0] == next(i for i in scope if index.get([i])[i].session_id == sha)
        (gist_vec,) = emb.embed([index.q("SELECT gist FROM rec_records WHERE session_id = ?",
                                         (sha,)).fetchone()[0]])
        assert best[0][1] > float(gist_vec @ q) + 0.1  # its body's view, not its gist
        # a new commit later: only its own texts are embedded
        _commit(repo, "NOTES.md", "n\n", "Write down the release steps",
                when="2023-05-01T10:00:00+00:00")
        engine.refresh(embed=False)
        emb.seen.clear()
        assert index.embed_pending(emb) == 1 and emb.seen == ["Write down the release steps."]
        # an added cue narrows the same index: the record keeps its views (no re-read)
        assert len(list(index.q("SELECT 1 FROM rec_views"))) == 1
    finally:
        m.close()


def test_a_record_first_in_both_orders_leads_the_fusion(
        repo: Path, tmp_path: Path) -> None:  # noqa: F811
    engine, m = _engine(tmp_path, repo)
    try:
        engine.refresh(embed=False)
        index = RecordIndex.for_memex(m)
        rows = index.get(sorted(index.scope(engine.base_roots, None)[0]))
        a, b = sorted(rows)
        kw = [Hit(rows[a], 9.0, ["cache"]), Hit(rows[b], 8.9, ["cache"])]
        fused = _fuse(kw, [(b, 0.7), (a, 0.1)], index)
        # b: second by words, first by meaning; a: first by words, meaning below the floor
        assert [h.record.id for h in fused] == [b, a]
        assert fused[0].score == 1 / (RRF_K + 1) + 1 / RRF_K
        assert fused[1].score == 1 / RRF_K and fused[1].semantic == 0.1 < SEMANTIC_FLOOR
        only_meaning = _fuse([], [(a, 0.5)], index)
        assert only_meaning[0].matched == [] and only_meaning[0].score == 1 / RRF_K
    finally:
        m.close()


def test_the_cue_says_when_several_changes_are_meant() -> None:
    for text in ("a handful of tiny fixes to the build config",
                 "the migration script and the follow-ups after it broke",
                 "someone added a test for one helper after another",
                 "the stretch where we replaced the parser"):
        assert whole_of(text) == "line", text
    assert whole_of("how the sync idea evolved over the years") == "topic"
    assert whole_of("all the back-and-forth over the config format") == "topic"
    assert whole_of("the commit that fixes the login and the tests") == "change"
    assert whole_of("the session where we set up CI") == "session"
    assert whole_of("when the cache moved into a database file") is None


def test_an_apostrophe_inside_a_word_is_no_quote() -> None:
    cue = read_cue(["it's the undoing commit I'm after, the 'cache_ttl' one"], NOW)
    assert "s" not in cue.terms and "the" not in cue.terms
    assert "cache_ttl" in cue.terms


def test_a_line_is_a_succession_in_time(tmp_path: Path) -> None:
    from opencortex.recall.index import IndexedRecord

    def rec(i: int, day: int | None) -> IndexedRecord:
        t = dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=day) \
            if day is not None else None
        return IndexedRecord(i, "f", "git", "commit", "r", str(i), f"r@{i}", "h", "t", "r",
                             None, None, None, t, t, [], 0, 0, 0, 0, {})

    gap = LINE_GAP.days
    recs = [rec(1, 0), rec(2, gap), rec(3, 2 * gap), rec(4, 3 * gap + 30), rec(5, None)]
    runs = _runs(list(reversed(recs)))
    assert [[r.id for r in run] for run in runs] == [[1, 2, 3], [4], [5]]


def test_a_presented_line_holds_at_most_eight_records(
        repo: Path, tmp_path: Path) -> None:  # noqa: F811
    for n in range(12):
        _commit(repo, "src/parser.py", f"v = {n}\n", f"Parser: speed up the tokenizer, step {n}",
                when=f"2023-06-{n + 1:02d}T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        rnd = engine.start("a series of commits speeding up the tokenizer in src/parser.py",
                           now=dt.datetime(2023, 7, 1, tzinfo=dt.UTC))
        assert rnd.state == "presented" and rnd.recognizable is not None
        assert rnd.recognizable["whole"] == "line"
        members = [x["locator"] for x in rnd.recognizable["members"]]
        assert 1 < len(members) <= 8 and len(members) == len(set(members))
        shown = [r["record"] for r in rnd.records]
        assert len(shown) == len(set(shown))
    finally:
        m.close()
