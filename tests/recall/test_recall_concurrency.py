"""A recall pass reads record ids (its scope: the boundary minus what this client may not
see), lets go of the memex lock while its model embeds, then uses those ids.  A refresh of
the record index meanwhile deletes and inserts records, and SQLite gives a deleted row's id
to the next: a private note's record could take an id the stale scope allowed, and be shown
to a client that may not see private notes.  Passes and refreshes of one record index run
one at a time."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np

from opencortex.access import Access
from opencortex.locking import slow_work
from opencortex.memex import Memex
from opencortex.recall.index import Root

PUBLIC = "* Garden\nTomatoes grow well in the sun.\n"
SECRET = "#+FILETAGS: :private:\n* Zebra vault\nThe zebra vault code is 4711-SECRET.\n"


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


def _engine(m: Memex, client: str, emb: _Gated):
    engine = Access(m, client).recall()
    engine.base_roots = [Root("notes", str(m.root))]
    engine._embedder = emb
    engine._gateway = False
    return engine


def test_a_refresh_waits_for_a_pass_so_no_private_note_is_shown(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "garden.org").write_text(PUBLIC, encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        cue = "zebra vault"
        emb = _Gated(cue)
        out: list[object] = []
        refreshed: list[object] = []
        refreshing = threading.Event()

        def recall() -> None:  # an HTTP client: may not see :private: notes
            try:
                with m.lock:  # as the kernel holds it around a skill
                    out.append(_engine(m, "http", emb).start(cue, invoked=True))
            except BaseException as e:
                out.append(e)

        def refresh() -> None:  # the person's `recall --index-only` in the daemon's process
            try:
                with m.lock:
                    (root / "garden.org").unlink()
                    (root / "vault.org").write_text(SECRET, encoding="utf-8")
                    refreshing.set()
                    refreshed.append(_engine(m, "cli", emb).refresh())
            except BaseException as e:
                refreshed.append(e)

        t = threading.Thread(target=recall, daemon=True)
        t.start()
        assert emb.in_slow.wait(10), out
        r = threading.Thread(target=refresh, daemon=True)
        r.start()
        assert refreshing.wait(10)
        time.sleep(0.3)  # the refresh now waits for the pass (before: it ran meanwhile)
        emb.go.set()
        t.join(20)
        r.join(20)
        assert not t.is_alive() and not r.is_alive(), "deadlock"
        assert out and not isinstance(out[0], BaseException), out
        assert refreshed and not isinstance(refreshed[0], BaseException), refreshed
        shown = json.dumps(out[0].to_dict(), default=str)
        assert "4711-SECRET" not in shown and "Zebra vault" not in shown, shown[:2000]
    finally:
        m.close()
