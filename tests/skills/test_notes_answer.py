"""Asking your notes: a question the memex answers is answered from it, with the note cited —
never by a command, a capture or the web; only the person's notes are candidates; below the
threshold the reply says so instead of guessing.  Real MiniLM, real index, real kernel."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from opencortex.access import Access
from opencortex.guard import Action
from opencortex.retrieval.hybrid import retriever_for
from opencortex.router import decompose
from opencortex.runtime import Runtime
from opencortex.signal import inject
from opencortex.skills.notes_answer import answer, units_of

QUESTIONS = [  # (question, file holding the answer, the fact) — worded as people ask
    ("where else does the nightly restic job copy to, apart from the usb disk?",
     "notes/backups.org", "B2"),
    ("how many eggs do I crack into the shakshuka?", "notes/shakshuka.org", "eggs"),
    ("when is the finished manuscript due?", "meetings.org", "mid-January"),
    ("how long does the sourdough bulk rise take?", "notes/sourdough.org", "20:00"),
    ("how many runners would the integration suite be sharded across?", "meetings.org", "8"),
]


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.org")):
        h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def rt(memex: Path, tmp_path: Path) -> Any:
    r = Runtime.open(memex, tmp_path / "i.db")
    retriever_for(r.memex).sync(embed=True)
    yield r
    r.close()


def test_a_question_about_what_the_person_knows_is_answered_from_the_notes(
        rt: Any, memex: Path) -> None:
    before = _digest(memex)
    k = rt.kernel(approval_timeout=0, record_sessions=False)
    for q, file, fact in QUESTIONS:
        # without the memex, the words alone read as a command, a capture or chat
        assert decompose(q)[0].target != "notes", q
        replies = k.ask_full(q, timeout=120)
        final = next(d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d)
        assert [i["target"] for i in final["intents"]] == ["notes"], (q, final["intents"])
        assert fact.lower() in final["answer"].lower(), final["answer"]
        assert any(c.startswith(file + "::") or c.startswith("id:")
                   for c in final["citations"]), final["citations"]
        assert f"({file}:" in final["answer"]  # the note cited as file:line
    assert not k.approvals.pending()  # nothing asked for an approval
    assert _digest(memex) == before  # nothing written
    k.shutdown()


def test_the_agents_own_records_are_never_candidates(rt: Any, memex: Path) -> None:
    """A conversation record — wherever it is kept, known by the recorder's marks — holds
    the question's very words, and a wrong fact: it is never an answer."""
    from opencortex.sessions.recorder import SessionRecorder

    rec = SessionRecorder(memex / "elsewhere")  # not under sessions/: the marks decide
    rec.record("t1", "person", "how many eggs go in the shakshuka? I think eleven eggs")
    rec.record("t1", "assistant", "The shakshuka takes eleven eggs.")
    (memex / "elsewhere").rename(memex / "logbook")
    rt.memex.sync()
    a = answer(Access(rt.memex, "cli"), "how many eggs go in the shakshuka?")
    assert a.answered and a.units[0].file == "notes/shakshuka.org"
    assert not any("logbook" in u.file or "eleven" in u.text for u in a.units)


def test_nothing_above_the_threshold_says_so_and_shows_the_closest_notes(rt: Any) -> None:
    k = rt.kernel(approval_timeout=0, record_sessions=False)
    q = "what is the registration number of my motorbike?"
    replies = k.ask_full(q, timeout=120)
    k.shutdown()
    final = next(d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d)
    assert final["intents"][0]["target"] == "notes"  # about the person: asked of the notes
    assert final["answer"].startswith("Nothing in your notes answers that")
    assert "Closest notes:" in final["answer"] and "search for" in final["answer"]
    assert final["citations"] == []  # nothing quoted, nothing presented as the answer


def test_an_untrusted_client_never_gets_a_private_note_as_the_answer(rt: Any) -> None:
    q = "who is the physio treating my knee?"
    mine = answer(Access(rt.memex, "cli"), q)
    assert mine.answered and mine.units[0].file == "notes/sleep-and-running.org"
    theirs = answer(Access(rt.memex, "http"), q)
    assert not any(u.file == "notes/sleep-and-running.org" for u in theirs.units)
    assert not any("Keller" in u.context for u in theirs.units)


def test_a_notes_question_may_only_reply(rt: Any, memex: Path) -> None:
    """Enforced where actions happen, not only in the router: whatever proposes a command,
    a write or a web request for a notes question, the kernel refuses it."""
    k = rt.kernel(approval_timeout=0, record_sessions=False)
    got: list[str] = []
    sig = inject({"payload": {"sensor": "delegation", "target": "notes",
                              "text": "what is in my backups note?"},
                  "meta": {"reply": lambda t, d=None: got.append(t)}})
    before = _digest(memex)
    for act in (Action("shell", {"command": "ls"}, origin="x"),
                Action("web", {"url": "https://example.org/"}, origin="x"),
                Action("memex.write", {"op": "capture", "path": "gtd.org", "to": "gtd.org",
                                       "text": "x"}, origin="x")):
        assert k.act(sig, act) is None
    k.shutdown()
    assert len(got) == 3 and all(t.startswith("Not done:") for t in got)
    assert not k.approvals.pending() and _digest(memex) == before


def test_units_are_sentences_list_items_and_table_rows_with_their_header() -> None:
    body = ("Intro sentence here. Dr. Who said hello.\n\n- first item\n  continues here\n"
            "- second\n\n| Name | Grams |\n|---+---|\n| flour | 450 |\n")
    texts = [t for _, t, _ in units_of(body)]
    assert texts == ["Intro sentence here.", "Dr. Who said hello.",
                     "first item continues here", "second", "Name: flour; Grams: 450"]


def test_a_units_score_is_the_same_whatever_order_the_store_ranked_its_note(
        rt: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index store only chooses which notes are read: SQLite (BM25) and PostgreSQL
    (ts_rank_cd) rank the same notes differently, and the threshold must hold on both. The
    same notes in the reverse order give every unit the same score, so the same answer."""
    acc = Access(rt.memex, "cli")
    q = "how many eggs do I crack into the shakshuka?"
    real = Access.search
    got = real(acc, q, k=10)
    assert len(got.hits) > 3
    fixed = got.hits[:6]
    monkeypatch.setattr(Access, "search", lambda self, *a, **kw: _with_hits(got, fixed))
    first = answer(acc, q, k=6)
    monkeypatch.setattr(Access, "search", lambda self, *a, **kw: _with_hits(
        got, list(reversed(fixed))))
    second = answer(acc, q, k=6)
    assert first.answered and second.answered
    assert [(u.key, u.line, u.text, u.score) for u in first.units] == \
        [(u.key, u.line, u.text, u.score) for u in second.units]
    assert {u.rank for u in first.units} != {0} and \
        [u.rank for u in first.units] != [u.rank for u in second.units]


def _with_hits(res: Any, hits: list[Any]) -> Any:
    import dataclasses

    return dataclasses.replace(res, hits=hits)


def test_the_entries_under_a_note_with_an_id_are_candidates(
        rt: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit on a note keyed by its ``id:`` brings the entries under it (keyed
    ``file::outline``): a recipe's method, a person's meeting rhythm."""
    acc = Access(rt.memex, "cli")
    q = "how many eggs do I crack into the shakshuka?"
    got = Access.search(acc, q, k=10)
    top = [h for h in got.hits if h.key == "id:655a2f77-93d8-49af-ac6c-afefc6f461a9"]
    assert top, [h.key for h in got.hits]
    monkeypatch.setattr(Access, "search", lambda self, *a, **kw: _with_hits(got, top))
    a = answer(acc, q)
    assert a.answered and "eggs" in a.units[0].text
    assert a.units[0].key.startswith("notes/shakshuka.org::Shakshuka/")


def test_a_units_vector_is_computed_once_and_the_answer_stays_the_same(rt: Any) -> None:
    """The units' vectors are kept beside the index (embed.vector_cache) and the question's
    by the retriever (one vector for its search and its scoring): asking again embeds
    nothing, and the ranking is what the model's own vectors gave."""
    emb = retriever_for(rt.memex).embedder
    seen: list[str] = []
    real = emb.embed

    def counting(texts: Any, batch_size: int = 32) -> Any:
        seen.extend(texts)
        return real(texts, batch_size)

    emb.embed = counting
    try:
        q = QUESTIONS[1][0]
        first = answer(Access(rt.memex, "cli"), q)
        n_first = len(seen)
        second = answer(Access(rt.memex, "cli"), q)
    finally:
        del emb.embed
    assert first.answered and len(first.units) > 3
    assert n_first >= len(first.units)  # the first time every unit went to the model
    assert seen[:n_first].count(q) == 1  # the search's vector scored the units too
    assert seen[n_first:] == []  # the second time nothing went to the model
    assert [(u.cite, u.text) for u in second.units] == [(u.cite, u.text) for u in first.units]
    assert [u.score for u in second.units] == pytest.approx([u.score for u in first.units],
                                                             abs=1e-6)


def test_a_lead_in_line_is_not_the_answer(rt: Any) -> None:
    """A line that only introduces a list ("For clocks A and B:") matches the question's
    words without holding an answer: it never leads over the sentences that do."""
    a = answer(Access(rt.memex, "cli"), "what did I write about vector clocks")
    assert a.answered
    assert not a.units[0].text.rstrip().endswith(":"), a.units[0].text
