"""A pass decides which notes this client may not see (``_hidden_notes``) before its model
embeds with the memex lock released, and opens the leading candidate's notes after — by
node key, as the memex index holds them *then*.  A note made private meanwhile (the person
tags it :private: and writes the secret into it; the memex is synced by another request)
keeps its key, so the pass opens the now-private note and shows it to an HTTP client."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from opencortex.memex import Memex

from .test_recall_concurrency import _engine, _Gated

BEFORE = "* Zebra vault\nThe zebra vault is in the garden shed.\n"
AFTER = ("#+FILETAGS: :private:\n* Zebra vault\nThe zebra vault is in the garden shed. "
         "The zebra vault code is 4711-SECRET.\n")


def test_a_note_made_private_during_a_pass_is_not_shown(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "vault.org").write_text(BEFORE, encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        cue = "zebra vault"
        emb = _Gated(cue)
        out: list[object] = []
        done: list[object] = []

        def recall() -> None:  # an HTTP client: may not see :private: notes
            try:
                with m.lock:
                    out.append(_engine(m, "http", emb).start(cue, invoked=True))
            except BaseException as e:
                out.append(e)

        def person_edits() -> None:  # the person tags the note private; a request syncs
            try:
                with m.lock:
                    (root / "vault.org").write_text(AFTER, encoding="utf-8")
                    m.sync()
                done.append(True)
            except BaseException as e:
                done.append(e)

        t = threading.Thread(target=recall, daemon=True)
        t.start()
        assert emb.in_slow.wait(10), out
        e = threading.Thread(target=person_edits, daemon=True)
        e.start()
        e.join(10)
        assert done == [True], done
        emb.go.set()
        t.join(20)
        assert not t.is_alive(), "deadlock"
        assert out and not isinstance(out[0], BaseException), out
        shown = json.dumps(out[0].to_dict(), default=str)
        assert "4711-SECRET" not in shown, shown[:3000]
    finally:
        m.close()
