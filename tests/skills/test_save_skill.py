"""Answers into notes through the chat (ChatApp over the in-process kernel): the last
answer is filed under the note a person names ("save that under my RAG note", /save NODE),
its citations as Org links, valid Org as Emacs reads it; /unsave restores the file byte for
byte; a save with no answer yet, an unknown or ambiguous node writes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

from opencortex.memex import Memex
from opencortex.skills import save
from opencortex.tui.app import ChatApp
from opencortex.tui.backend import LocalBackend

from ..conftest import emacs_dump

RAG = "notes/retrieval-augmented-generation.org"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_save_under_a_node_in_chat_with_undo(memex: Path, tmp_path: Path) -> None:
    m = Memex(memex, tmp_path / "i.sqlite3")
    m.sync()
    out: list[str] = []
    be = LocalBackend(m)
    app = ChatApp(be, session="chat-1", echo=out.append)
    note = memex / RAG
    before = _sha(note)
    try:
        app.handle("/save RAG", wait=60)
        assert "no answer in this conversation yet" in out[-1] and _sha(note) == before
        app.handle("search my notes for reciprocal rank fusion", wait=60)
        for th in app._threads:
            th.join(60)
        answer = save.last_answer(m.root, "chat-1")
        assert answer and answer["citations"], out
        app.handle("save that under my RAG note", wait=60)
        for th in app._threads:
            th.join(60)
        said = "\n".join(out)
        assert "Saved the answer under “Retrieval-augmented generation (RAG)”" in said
        text = note.read_text(encoding="utf-8")
        assert "** Answer: search my notes for reciprocal rank fusion" in text
        assert "Sources:\n- [[id:" in text or "Sources:\n- [[file:" in text
        heads = emacs_dump(note)
        saved = [h for h in heads if h["title"].startswith("Answer: search my notes")]
        assert len(saved) == 1 and saved[0]["level"] == 2
        links = {tuple(x[:2]) for x in saved[0]["links"]}
        assert links and all(t in ("id", "file") for t, _ in links)
        assert not any(h["title"].startswith(("Answer", "*")) and h["level"] > 2 for h in heads)

        app.handle("/unsave", wait=60)
        for th in app._threads:
            th.join(60)
        assert "Undid the save" in out[-1] and _sha(note) == before

        app.handle("/save no such note anywhere", wait=60)
        for th in app._threads:
            th.join(60)
        assert "No note matches" in out[-1] and _sha(note) == before
    finally:
        be.close()
        be.kernel.shutdown(timeout=10)
        m.close()


def test_answer_text_never_becomes_structure(memex: Path, tmp_path: Path) -> None:
    with Memex(memex, tmp_path / "i.sqlite3") as m:
        m.sync()
        _, data = save.apply_memex_op(m, {
            "op": "save", "node": "id:b632cd44-5843-4242-b14f-c5f9636af2b2",
            "text": "* Not a headline\n#+begin_src sh\nrm -rf /\n#+end_src\n:PROPERTIES:\nok",
            "question": "q", "citations": ["gtd.org:140", "https://example.org/x"]})
        note = memex / RAG
        heads = emacs_dump(note)
        assert not any(h["title"] == "Not a headline" for h in heads)
        body = next(h for h in heads if h["title"] == "Answer: q")["body"]
        assert "https://example.org/x" in body and "rm -rf" in body
        assert data["saved"]["journal_id"]
        m.undo()
        assert "Answer: q" not in note.read_text(encoding="utf-8")


def test_parse_request_and_find_node(memex: Path, tmp_path: Path) -> None:
    assert save.parse_request("save that under my RAG note") == ("save", "RAG")
    assert save.parse_request("/save notes/bm25.org:4") == ("save", "notes/bm25.org:4")
    assert save.parse_request("please put the answer in the sourdough note.") == \
        ("save", "sourdough")
    assert save.parse_request("/unsave") == ("unsave", None)
    assert save.parse_request("save the planet") is None
    with Memex(memex, tmp_path / "i.sqlite3") as m:
        m.sync()
        hits = save.find_node(m, "RAG")
        assert [h.file for h in hits] == [RAG]
