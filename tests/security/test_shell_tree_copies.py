"""Red team (issue 23, third pass): an unindexed copy of a private note reached a client
when the command named its *folder*, or its packing was one the check did not unpack.

The last pass judged a named file the index does not hold by its own tags (``cat
locker.org~``), but ``rg -n code attic`` / ``grep -rn code attic`` read every file under
attic/ and only the folder's path was judged: no indexed private note lies under it, so the
output of a copy there (``attic/locker.txt``) left tagged public -- and a private note of
short lines (a door code) is below every content print.  A memex with no indexed private
note at all skipped the check altogether.  And a raw ``.lzma`` copy (``rg -z`` reads it by
its name, GNU tar by its first bytes), a ``.Z``, a brotli file, or a zip an approved
``unzip -p`` prints, showed no tag in its bytes and was not unpacked."""

from __future__ import annotations

import io
import lzma
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest

from opencortex.guard.egress import shell_read
from opencortex.guard.policy import GuardPolicy

from .edge_live import daemons, write_config

LOCKER = "#+FILETAGS: :private:\n* Locker\ndoor code 4471-9983\n"


def _judge(memex: Path, argv: list[str], files: frozenset[str] = frozenset({"locker.org"}),
           cwd: str = ".") -> str | None:
    root = memex.resolve()
    return shell_read(argv, root / cwd, root, files, GuardPolicy())


@pytest.fixture
def attic(memex: Path) -> Path:
    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    (memex / "attic" / "old").mkdir(parents=True)
    (memex / "attic" / "old" / "locker.txt").write_text(LOCKER, encoding="utf-8")
    (memex / "public").mkdir()
    (memex / "public" / "shopping.txt").write_text("* Shopping\nbuy milk\n",
                                                   encoding="utf-8")
    return memex


@pytest.mark.parametrize("argv,cwd", [
    (["rg", "-n", "code", "attic"], "."),
    (["grep", "-rn", "code", "attic/"], "."),
    (["find", "attic", "-type", "f"], "."),
    (["rg", "-n", "code"], "attic"),
])
def test_a_folder_holding_an_unindexed_private_copy_is_read_as_private(
        attic: Path, argv: list[str], cwd: str) -> None:
    assert _judge(attic, argv, cwd=cwd), argv


def test_a_folder_of_public_files_stays_public(attic: Path) -> None:
    assert _judge(attic, ["rg", "-n", "milk", "public"]) is None


def test_a_copy_is_judged_when_the_index_holds_no_private_note(attic: Path) -> None:
    """No indexed private note at all: the copy's own tags still decide."""
    assert _judge(attic, ["cat", "attic/old/locker.txt"], frozenset())
    assert _judge(attic, ["rg", "-n", "code", "attic"], frozenset())


def _zip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("notes/locker.org", data)
    return buf.getvalue()


@pytest.mark.parametrize("name,pack", [
    ("locker.org.lzma", lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE)),
    ("locker.org.Z", lambda b: b"\x1f\x9d\x90" + b[:8]),
    ("locker.org.br", lambda b: b"\x8b\x0b\x80" + b[:8]),
    ("backup.zip", _zip),
])
def test_a_copy_packed_in_another_format_is_read_as_private(
        memex: Path, name: str, pack: Any) -> None:
    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    (memex / name).write_bytes(pack(LOCKER.encode()))
    assert _judge(memex, ["rg", "-z", "code", name])
    (memex / "public.zip").write_bytes(_zip(b"* Inbox\nbuy milk\n"))
    assert _judge(memex, ["cat", "public.zip"]) is None


@pytest.fixture
def live_factory(tmp_path: Path) -> Any:
    yield from daemons(tmp_path)


def test_rg_over_a_folder_with_a_copy_never_reaches_http(
        attic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    write_config(tmp_path, monkeypatch, textwrap.dedent("""\
        [guard.tools]
        shell = "allow"
        """))
    live = live_factory(attic)
    st, body, _ = live.request("POST", "/v1/chat", {"message": "run rg -n code attic"})
    text = json_text(body)
    assert st == 200 and "4471" not in text, text[:600]
    assert "withheld" in text


def json_text(v: Any) -> str:
    import json

    return json.dumps(v, ensure_ascii=False)


def _commit(repo: Path, message: str) -> None:
    import subprocess

    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-C", str(repo)]
    if not (repo / ".git").exists():
        subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)


def test_git_over_a_history_that_held_a_deleted_private_note_is_private(
        tmp_path: Path) -> None:
    """The note is gone (no index entry, no content print), its door code is in the
    history: ``git log -p`` and ``git show HEAD~1:locker.org`` print it."""
    memex = tmp_path / "m"
    memex.mkdir()
    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    (memex / "gtd.org").write_text("* Inbox\n", encoding="utf-8")
    _commit(memex, "notes")
    (memex / "locker.org").unlink()
    _commit(memex, "drop the locker")
    for argv in (["git", "log", "-p"], ["git", "show", "HEAD~1:locker.org"]):
        assert _judge(memex, argv, frozenset()), argv


def test_git_over_a_history_without_private_notes_stays_public(tmp_path: Path) -> None:
    memex = tmp_path / "m"
    memex.mkdir()
    (memex / "gtd.org").write_text("* Inbox\nbuy milk\n", encoding="utf-8")
    _commit(memex, "inbox")
    assert _judge(memex, ["git", "log", "-p"], frozenset()) is None
