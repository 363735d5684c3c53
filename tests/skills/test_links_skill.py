"""Link suggestions in the chat (ChatApp over the in-process kernel): /links NODE lists
notes that do not yet link with it — none the node already links to — and /link N adds
the id: link through the guarded writer; `undo` takes it back."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from opencortex.memex import Memex
from opencortex.tui.app import ChatApp
from opencortex.tui.backend import LocalBackend

RAG = "notes/retrieval-augmented-generation.org"


def _wait(app: ChatApp) -> None:
    for th in app._threads:
        th.join(300)


def test_links_in_chat(memex: Path, tmp_path: Path) -> None:
    note = memex / RAG
    before = hashlib.sha256(note.read_bytes()).hexdigest()
    ids = set(re.findall(r"\[\[id:([^\]]+)\]", note.read_text(encoding="utf-8")))
    linked_files = {str(p.relative_to(memex)) for p in memex.rglob("*.org")
                    if p != note and any(f":ID:       {i}" in p.read_text(encoding="utf-8")
                                         for i in ids)}
    assert linked_files
    m = Memex(memex, tmp_path / "i.sqlite3")
    m.sync()
    out: list[str] = []
    be = LocalBackend(m)
    app = ChatApp(be, session="chat-links", echo=out.append)
    try:
        app.handle("/link 1", wait=60)
        _wait(app)
        assert "List suggestions first" in out[-1]
        app.handle("/links Retrieval-augmented generation (RAG)", wait=300)
        _wait(app)
        listing = next(x for x in out if x.startswith("Notes close to"))
        assert re.search(r"^1\. ", listing, re.M)
        for f in linked_files:
            assert f"({f}:" not in listing
        app.handle("/link 1", wait=120)
        _wait(app)
        assert out[-1].startswith("Linked to [[id:") or any(
            x.startswith("Linked to [[id:") for x in out), out
        assert "- See also: [[id:" in note.read_text(encoding="utf-8")
        with be.kernel.memex_lock:
            undone = m.undo(2)
        assert undone and hashlib.sha256(note.read_bytes()).hexdigest() == before
    finally:
        be.close()
        be.kernel.shutdown(timeout=10)
        m.close()
