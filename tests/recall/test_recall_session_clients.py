"""A recall session's saved state is not bound to the privacy of the client that started
it: the person's CLI/TUI recall presents a :private: note; an HTTP client that has the
session id replies "yes, that's it" (or "stop") and ``_identified`` replays the saved
story — the private note's text — without any pass, so ``hide`` never applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opencortex.errors import RecallError
from opencortex.memex import Memex

from .test_recall_concurrency import _engine

SECRET = "#+FILETAGS: :private:\n* Zebra vault\nThe zebra vault code is 4711-SECRET.\n"


@pytest.mark.parametrize("reply", ["yes, that's it", "stop"])
def test_a_client_without_private_access_cannot_continue_a_private_session(
        tmp_path: Path, reply: str) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "vault.org").write_text(SECRET, encoding="utf-8")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        first = _engine(m, "cli").start("zebra vault", invoked=True)
        assert first.state == "presented"
        assert "4711-SECRET" in json.dumps(first.to_dict())  # the person may see it
        try:
            rnd = _engine(m, "http").reply(first.session, reply)
        except RecallError:
            return  # refused: fine
        shown = json.dumps(rnd.to_dict(), default=str)
        assert "4711-SECRET" not in shown and "Zebra vault" not in shown, shown[:2000]
    finally:
        m.close()
