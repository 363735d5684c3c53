"""A recall pass lets go of the memex lock while its model embeds (``locking.slow_work``).
Meanwhile the memex and the record index can change; none of it may show a client that
may not see private notes (HTTP, MCP, Telegram) anything private:
- a refresh deletes and inserts records, and SQLite gave a deleted record's id to the next
  — a private note's record could take an id the pass's scope allowed (passes and
  refreshes of one record index now run one at a time, and the ids are never reused);
- a note is tagged private, or the editor saves a private heading into the note's indexed
  byte range, or the person's own conversation records a private turn in a session record
  (what a pass opens is judged again as read)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from opencortex.access import Access
from opencortex.locking import slow_work
from opencortex.memex import Memex
from opencortex.recall.index import Root
from opencortex.sessions.recorder import SessionRecorder

SECRET = "4711-SECRET"
PUBLIC = "* Garden\nTomatoes grow well in the sun.\n"
PRIVATE_NOTE = f"#+FILETAGS: :private:\n* Zebra vault\nThe zebra vault code is {SECRET}.\n"
VAULT = "* Zebra vault\nThe zebra vault is in the garden shed, behind the pots.\n"


class _Gated:
    """Every text the same unit vector (meaning always reaches the cue); the call that
    embeds the cue blocks inside slow_work (as MiniLM's forward pass runs) until ``go``."""

    name, dim = "fake-gated", 8

    def __init__(self, cue: str) -> None:
        self.cue = cue
        self.in_slow, self.go = threading.Event(), threading.Event()
        self.blocked = False

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        with slow_work():
            if not self.blocked and len(texts) == 1 and self.cue in texts[0]:
                self.blocked = True
                self.in_slow.set()
                assert self.go.wait(10)
        v = np.zeros((len(texts), self.dim), dtype=np.float32)
        v[:, 0] = 1.0
        return v


def _engine(m: Memex, client: str, emb: Any = False, kind: str = "notes") -> Any:
    engine = Access(m, client).recall()
    engine.base_roots = [Root(kind, str(m.root))]
    engine._embedder = emb
    engine._gateway = False
    return engine


def _race(m: Memex, cue: str, meanwhile: Callable[[_Gated], None], kind: str = "notes") -> str:
    """An HTTP client's recall of ``cue`` (under the memex lock, as the kernel runs a
    skill); ``meanwhile`` runs on another thread while its model embeds — it may finish, or
    wait for the pass.  Returns what the client was shown."""
    emb = _Gated(cue)
    out: list[Any] = []
    side: list[Any] = []

    def recall() -> None:
        try:
            engine = _engine(m, "http", emb, kind)
            with m.lock:
                out.append(engine.start(cue, invoked=True))
        except BaseException as e:
            out.append(e)

    def other() -> None:
        try:
            meanwhile(emb)
            side.append(True)
        except BaseException as e:
            side.append(e)

    t = threading.Thread(target=recall, daemon=True)  # a deadlock must not hang the run
    t.start()
    assert emb.in_slow.wait(10), out
    r = threading.Thread(target=other, daemon=True)
    r.start()
    r.join(0.5)  # done, or waiting for the pass
    emb.go.set()
    t.join(20)
    r.join(20)
    assert not t.is_alive() and not r.is_alive(), "deadlock"
    assert out and not isinstance(out[0], BaseException), out
    assert side == [True], side
    return json.dumps(out[0].to_dict(), default=str)


@pytest.fixture
def memex(tmp_path: Path):
    root = tmp_path / "memex"
    root.mkdir()
    m = Memex(root, index=tmp_path / "i.sqlite3")
    yield m
    m.close()


def test_a_refresh_waits_for_a_pass_so_no_private_note_is_shown(memex: Memex) -> None:
    root = Path(memex.root)
    (root / "garden.org").write_text(PUBLIC, encoding="utf-8")
    memex.sync()

    def refresh(emb: _Gated) -> None:  # `recall --index-only` in the daemon's process
        with memex.lock:
            (root / "garden.org").unlink()
            (root / "vault.org").write_text(PRIVATE_NOTE, encoding="utf-8")
            _engine(memex, "cli", emb).refresh()

    shown = _race(memex, "zebra vault", refresh)
    assert SECRET not in shown and "Zebra vault" not in shown, shown[:2000]


def test_a_note_made_private_during_a_pass_is_not_shown(memex: Memex) -> None:
    root = Path(memex.root)
    (root / "vault.org").write_text(VAULT, encoding="utf-8")
    memex.sync()

    def make_private(emb: _Gated) -> None:  # the person tags it; another request syncs
        with memex.lock:
            (root / "vault.org").write_text(
                f"#+FILETAGS: :private:\n{VAULT}The zebra vault code is {SECRET}.\n",
                encoding="utf-8")
            memex.sync()

    shown = _race(memex, "zebra vault", make_private)
    assert SECRET not in shown, shown[:3000]


def test_a_private_heading_saved_into_a_notes_byte_range_is_not_shown(memex: Memex) -> None:
    root = Path(memex.root)
    (root / "vault.org").write_text(VAULT, encoding="utf-8")
    memex.sync()

    def editor_saves(emb: _Gated) -> None:  # nothing syncs: the index's offsets are stale
        (root / "vault.org").write_text(
            f"* Zebra vault code :private:\nThe zebra vault code is {SECRET}.\n{VAULT}",
            encoding="utf-8")

    shown = _race(memex, "zebra vault", editor_saves)
    assert SECRET not in shown, shown[:3000]


def test_a_session_record_made_private_during_a_pass_is_not_shown(memex: Memex) -> None:
    rec = SessionRecorder(Path(memex.root))
    rec.record("s-walrus-1", "person", "where did I put the zebra vault plans")
    rec.record("s-walrus-1", "assistant", "The zebra vault plans are in the shed.")
    memex.sync()

    def private_turn(emb: _Gated) -> None:  # the person's own conversation quotes a
        rec.record("s-walrus-1", "assistant",  # private note: its turn is tagged private
                   f"The zebra vault code is {SECRET}.", tag="private")

    shown = _race(memex, "zebra vault plans", private_turn, kind="opencortex")
    assert '"records": 1' in shown, shown[:3000]  # the record was in scope
    assert SECRET not in shown, shown[:3000]
