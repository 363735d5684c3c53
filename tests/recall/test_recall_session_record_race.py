"""The agent's own session records are recall records too; a conversation of a client that
may see private notes tags its turns :private:, and a client that may not see them never
gets such a record (``_hidden_memex_records``, judged when a pass chooses its scope).  A
turn recorded while the pass's model runs (the memex lock released) made a record private
after that judgement: the record is checked again, on disk, when it is opened."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from opencortex.memex import Memex
from opencortex.recall.index import Root
from opencortex.sessions.recorder import SessionRecorder

from .test_recall_concurrency import _engine, _Gated


def test_a_turn_made_private_during_a_pass_is_not_shown(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    m = Memex(root, index=tmp_path / "i.sqlite3")
    rec = SessionRecorder(root)
    try:
        rec.record("s-walrus-1", "person", "where did I put the zebra vault plans")
        rec.record("s-walrus-1", "assistant", "The zebra vault plans are in the shed.")
        m.sync()
        cue = "zebra vault plans"
        emb = _Gated(cue)
        out: list[object] = []

        def recall() -> None:  # an HTTP client: may not see :private: notes
            try:
                engine = _engine(m, "http", emb)
                engine.base_roots = [Root("opencortex", str(root))]
                with m.lock:
                    out.append(engine.start(cue, invoked=True))
            except BaseException as e:
                out.append(e)

        t = threading.Thread(target=recall, daemon=True)
        t.start()
        assert emb.in_slow.wait(10), out
        # meanwhile the person's own conversation quotes a private note (tagged private)
        rec.record("s-walrus-1", "assistant", "The zebra vault code is 4711-SECRET.",
                   tag="private")
        emb.go.set()
        t.join(20)
        assert not t.is_alive(), "deadlock"
        assert out and not isinstance(out[0], BaseException), out
        shown = json.dumps(out[0].to_dict(), default=str)
        assert "4711-SECRET" not in shown, shown[:3000]
    finally:
        m.close()
