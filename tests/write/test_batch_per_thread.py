"""A write op that reaches slow work (``/link N`` when the listed suggestions are not the
memex's last: ``links_suggest.apply`` runs ``suggest``, which embeds) lets go of the memex
lock while ``memex.writer.batch`` — one field shared by every worker — holds its signal's
batch.  Another worker's write meanwhile sets and clears that field, so the link's writes
are journaled outside its signal's batch: a failure of the signal no longer rolls them back
(or, with two such ops, one signal's rollback undoes the other's writes)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from opencortex.act.actuators import memex_write
from opencortex.act.registry import ActEnv
from opencortex.guard.action import Action
from opencortex.locking import slow_work
from opencortex.memex import Memex
from opencortex.retrieval.hybrid import retriever_for
from opencortex.signal import inject
from opencortex.skills.default import default_registry

A = """* Alpha notes
:PROPERTIES:
:ID:       aaaaaaaa-0000-0000-0000-000000000001
:END:
Vector search and embeddings for retrieval.
"""
B = """* Beta notes
:PROPERTIES:
:ID:       bbbbbbbb-0000-0000-0000-000000000002
:END:
Embeddings make retrieval work by meaning.
"""


class _SlowEmbedder:
    """Blocks its first call (inside slow_work, as MiniLM does) until ``go`` is set."""

    name, dim = "fake-slow", 8

    def __init__(self) -> None:
        self.in_slow, self.go = threading.Event(), threading.Event()
        self.calls = 0

    def embed(self, texts, batch_size: int = 32):
        with slow_work():
            self.calls += 1
            if self.calls == 1:
                self.in_slow.set()
                assert self.go.wait(10)
        out = np.ones((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _batch_of(sig) -> str:
    return sig.meta.get("batch") or sig.meta.setdefault("batch", sig.id)


def test_a_link_write_stays_in_its_signals_batch(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.org").write_text(A, encoding="utf-8")
    (root / "notes" / "b.org").write_text(B, encoding="utf-8")
    (root / "inbox.org").write_text("", encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        emb = _SlowEmbedder()
        retriever_for(m)._embedder = emb
        reg = default_registry(root)
        env = ActEnv(m, m.lock, None, reg, reg.actuators, lambda *a: None, _batch_of)
        sig_a = inject({"sensor": "user-input", "text": "/link 1"})
        sig_b = inject({"sensor": "user-input", "text": "capture"})
        errors: list[BaseException] = []

        def link() -> None:
            try:
                memex_write(Action("memex.write", {"op": "link", "path": "notes/a.org",
                                                   "node": "id:aaaaaaaa-0000-0000-0000-000000000001",
                                                   "n": 1}, origin="links"), sig_a, env)
            except BaseException as e:
                errors.append(e)

        t = threading.Thread(target=link, daemon=True)
        t.start()
        assert emb.in_slow.wait(10)
        # another worker's write while the link's model runs
        memex_write(Action("memex.write", {"op": "capture", "text": "buy milk",
                                           "path": "inbox.org"}, origin="capture"), sig_b, env)
        emb.go.set()
        t.join(20)
        assert not t.is_alive(), "link write hung"
        assert not errors, errors
        rows = m.store.journal(20)
        link_rows = [r for r in rows if r.path.endswith(("a.org", "b.org"))]
        assert link_rows, rows
        assert {r.batch for r in link_rows} == {_batch_of(sig_a)}, \
            [(r.path, r.batch) for r in rows]
        # the signal's rollback takes its link back
        with m.lock:
            undone = m.undo_batch(_batch_of(sig_a))
        assert len(undone) == len(link_rows)
    finally:
        m.close()
