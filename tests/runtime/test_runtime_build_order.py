"""Runtime.registry before Runtime.memex: the registry is built under ``_build`` and reads
``self.memex``, which takes ``_build`` again (pre-existing, not of the slow_work change)."""

from __future__ import annotations

import threading
from pathlib import Path

from opencortex.config import load_settings
from opencortex.runtime import Runtime


def test_registry_first_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    rt = Runtime(load_settings(memex=tmp_path / "m", index=tmp_path / "i.sqlite3"))
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(len(rt.registry.skills())), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "Runtime.registry deadlocked on its own _build lock"
    assert got and got[0] > 0
    rt.close()
