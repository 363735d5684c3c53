"""A pass opens a note by the byte range the memex index recorded, in the file as it is on
disk *now*.  The person's editor saves the file while the pass's model embeds (the memex
lock released, nothing syncs): a private heading inserted above the note now lies in that
byte range, and its text is presented to an HTTP client."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from opencortex.memex import Memex

from .test_recall_concurrency import _engine, _Gated

BEFORE = "* Zebra vault\nThe zebra vault is in the garden shed, behind the pots.\n"
AFTER = ("* Zebra vault code :private:\nThe zebra vault code is 4711-SECRET.\n"
         "* Zebra vault\nThe zebra vault is in the garden shed, behind the pots.\n")


def test_a_note_edited_on_disk_during_a_pass_shows_no_private_heading(tmp_path: Path
                                                                       ) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "vault.org").write_text(BEFORE, encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        cue = "zebra vault"
        emb = _Gated(cue)
        out: list[object] = []

        def recall() -> None:  # an HTTP client: may not see :private: notes
            try:
                with m.lock:
                    out.append(_engine(m, "http", emb).start(cue, invoked=True))
            except BaseException as e:
                out.append(e)

        t = threading.Thread(target=recall, daemon=True)
        t.start()
        assert emb.in_slow.wait(10), out
        (root / "vault.org").write_text(AFTER, encoding="utf-8")  # the editor saves
        emb.go.set()
        t.join(20)
        assert not t.is_alive(), "deadlock"
        assert out and not isinstance(out[0], BaseException), out
        shown = json.dumps(out[0].to_dict(), default=str)
        assert "4711-SECRET" not in shown, shown[:3000]
    finally:
        m.close()
