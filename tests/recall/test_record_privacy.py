"""Issue 23: a session record's privacy follows its bytes, wherever they are.

A private session record outside the memex (the agent's records need not live in it), a
session file in the memex that is a symlink to a private record outside it, and a private
record whose original was deleted (read from the transcript archive) are each withheld
from a client that may not see private notes; the person's recall still finds them, and a
public archived record stays public."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.recall.index import Root
from opencortex.sessions.recorder import SessionRecorder

from .test_recall_concurrency import _engine

SECRET = "4711-SECRET"
CUE = "zebra vault plans"


def _record(root: Path, session: str, private: bool) -> Path:
    rec = SessionRecorder(root)
    rec.record(session, "person", "where did I put the zebra vault plans")
    return rec.record(session, "assistant", f"The zebra vault plans say the code is {SECRET}.",
                      tag="private" if private else None)


def _shown(m: Memex, client: str, root: str) -> str:
    engine = _engine(m, client, kind="opencortex")
    engine.base_roots = [Root("opencortex", root)]
    rnd = engine.start(CUE, invoked=True)
    return json.dumps(rnd.to_dict(), default=str)


@pytest.fixture
def m(tmp_path: Path) -> Memex:
    root = tmp_path / "memex"
    root.mkdir()
    memex = Memex(root, index=tmp_path / "i.sqlite3")
    memex.sync()
    yield memex
    memex.close()


def test_a_private_record_outside_the_memex_is_withheld(m: Memex, tmp_path: Path) -> None:
    outside = tmp_path / "records"
    _record(outside, "s-out-1", private=True)
    assert SECRET in _shown(m, "cli", str(outside))  # the person's own recall finds it
    shown = _shown(m, "http", str(outside))
    assert SECRET not in shown, shown[:2000]


def test_a_symlinked_session_file_follows_its_target_tag(m: Memex, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    target = _record(outside, "s-link-1", private=True)
    link = Path(m.root) / "sessions" / "2026" / "11" / "03-s-link-1.org"
    link.parent.mkdir(parents=True)
    os.symlink(target, link)
    m.sync()
    shown = _shown(m, "http", str(m.root))
    assert SECRET not in shown, shown[:2000]


@pytest.mark.parametrize("private", [True, False])
def test_an_archived_record_keeps_its_origin_privacy(m: Memex, tmp_path: Path,
                                                     private: bool) -> None:
    pytest.importorskip("zstandard")
    from opencortex.recall.archive import Archive, transcript_roots

    outside = tmp_path / "records"
    path = _record(outside, "s-arc-1", private=private)
    engine = _engine(m, "cli", kind="opencortex")
    engine.base_roots = [Root("opencortex", str(outside))]
    arc = Archive.for_settings(m.settings)
    arc.run(transcript_roots(engine))
    engine.refresh(embed=False)
    path.unlink()
    arc.run(transcript_roots(engine))
    assert SECRET in _shown(m, "cli", str(outside))  # read from the archived copy
    shown = _shown(m, "http", str(outside))
    assert (SECRET in shown) is (not private), shown[:2000]


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


def test_the_git_history_of_a_private_memex_file_is_withheld(m: Memex) -> None:
    """Recall over the memex's own history: ``git log --follow -p`` of a private file
    quotes its diff lines; a client that may not see private notes gets no such span."""
    root = Path(m.root)
    (root / "vault.org").write_text("* Zebra vault :private:\nThe vault code is 1111.\n")
    _git(root, "init", "-q")
    _git(root, "add", "vault.org")
    _git(root, "commit", "-qm", "zebra vault code")
    (root / "vault.org").write_text(f"* Zebra vault :private:\nThe vault code is {SECRET}.\n")
    _git(root, "commit", "-qam", "changed the zebra vault code")
    m.sync()
    cue = "today we changed the zebra vault code in vault.org"

    def history(client: str) -> list[dict[str, object]]:
        engine = _engine(m, client, kind="git")
        engine.base_roots = [Root("git", str(root))]
        rnd = engine.start(cue, invoked=True).to_dict()
        return [x for x in (rnd.get("recognizable") or {}).get("members", [])
                if " log " in str(x.get("handle"))]

    # the person's recall opens the span's history (its diff holds the private lines)
    assert any(x["opened"] for x in history("cli"))
    assert not history("http")  # never the history of a private memex file
