from __future__ import annotations

import os
from pathlib import Path

import pytest

from opencortex.errors import WriteError
from opencortex.guard import UnsafePathError, confine


def test_relative_and_absolute_inside(memex: Path) -> None:
    real = memex.resolve()
    assert confine("inbox.org", memex) == real / "inbox.org"
    assert confine("notes/new.org", memex) == real / "notes" / "new.org"
    assert confine("./notes/./a.org", memex) == real / "notes" / "a.org"
    assert confine(str(memex / "notes" / "a.org"), memex) == real / "notes" / "a.org"
    assert confine("new/dir/deep.org", memex) == real / "new" / "dir" / "deep.org"


@pytest.mark.parametrize("bad", [
    "../outside.org", "notes/../../x.org", "notes/../inbox.org", "/etc/passwd.org",
    "~/x.org", "a\x00.org", "a\nb.org", "", "notes/a.txt", "inbox.org.sh", "notes",
    ".git/config.org", "NOTES/.GIT/x.org", ".",
])
def test_refused(memex: Path, bad: str) -> None:
    with pytest.raises(UnsafePathError):
        confine(bad, memex)


def test_is_a_write_error(memex: Path) -> None:
    with pytest.raises(WriteError):
        confine("../x.org", memex)


def test_symlinked_dir_escape(memex: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (memex / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="outside the memex"):
        confine("link/evil.org", memex)
    with pytest.raises(UnsafePathError):
        confine(str(memex / "link" / "evil.org"), memex)


def test_symlinked_file_escape(memex: Path, tmp_path: Path) -> None:
    target = tmp_path / "secret.org"
    target.write_text("x")
    (memex / "notes" / "sneaky.org").symlink_to(target)
    with pytest.raises(UnsafePathError):
        confine("notes/sneaky.org", memex)


def test_dangling_and_chained_symlinks(memex: Path, tmp_path: Path) -> None:
    (memex / "dangling.org").symlink_to(tmp_path / "nowhere" / "x.org")
    with pytest.raises(UnsafePathError):
        confine("dangling.org", memex)
    # inside -> inside -> outside: every hop is followed
    (memex / "hop2").symlink_to(tmp_path)
    (memex / "hop1").symlink_to(memex / "hop2")
    with pytest.raises(UnsafePathError):
        confine("hop1/x.org", memex)


def test_symlink_loop(memex: Path) -> None:
    (memex / "loop").symlink_to(memex / "loop")
    with pytest.raises(UnsafePathError):
        confine("loop/x.org", memex)


def test_symlinks_inside_are_fine(memex: Path) -> None:
    (memex / "alias").symlink_to(memex / "notes")
    assert confine("alias/a.org", memex) == (memex / "notes" / "a.org").resolve()
    (memex / "same.org").symlink_to(memex / "inbox.org")
    assert confine("same.org", memex) == (memex / "inbox.org").resolve()


def test_symlink_to_non_org_inside_refused(memex: Path) -> None:
    (memex / "script.sh").write_text("echo")
    (memex / "looks.org").symlink_to(memex / "script.sh")
    with pytest.raises(UnsafePathError, match=r"\.org"):
        confine("looks.org", memex)


def test_root_itself_a_symlink(tmp_path: Path, memex: Path) -> None:
    alias = tmp_path / "memex-alias"
    alias.symlink_to(memex)
    assert confine(str(alias / "inbox.org"), alias) == (memex / "inbox.org").resolve()
    assert confine(str(memex / "inbox.org"), alias) == (memex / "inbox.org").resolve()


def test_file_in_the_middle_and_special_files(memex: Path) -> None:
    with pytest.raises(UnsafePathError, match="not a directory"):
        confine("inbox.org/x.org", memex)
    os.mkfifo(memex / "fifo.org")
    with pytest.raises(UnsafePathError, match="not a regular file"):
        confine("fifo.org", memex)


def test_directory_mode(memex: Path, tmp_path: Path) -> None:
    assert confine("notes", memex, suffixes=None, directory=True) == (memex / "notes").resolve()
    assert confine(".", memex, suffixes=None, directory=True) == memex.resolve()
    with pytest.raises(UnsafePathError):
        confine("missing", memex, suffixes=None, directory=True)
    with pytest.raises(UnsafePathError):
        confine(str(tmp_path), memex, suffixes=None, directory=True)


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="root"):
        confine("x.org", tmp_path / "nope")
