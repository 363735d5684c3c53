"""Atomic file replacement that refuses to clobber a file changed since it was read.

temp file in the same directory -> write -> fsync -> permissions -> read back and verify
-> re-check the original is unchanged -> rename over it -> fsync the directory.
A failure at any step leaves the original untouched and removes the temp file.
A base module (errors and regular below it only): the writer, the session recorder and the
guard's trust store all write through it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ConflictError, WriteError

__all__ = ["HASH_PREFIX", "Snapshot", "atomic_write", "content_hash", "fault_hook",
           "read_snapshot"]

HASH_PREFIX = "b2:"


def content_hash(data: bytes) -> str:
    """Tagged hash of a file's bytes, so a change of algorithm is detectable."""
    return HASH_PREFIX + hashlib.blake2b(data, digest_size=16).hexdigest()


fault_hook: Callable[[str], None] | None = None
"""Tests set this to raise at a named step ("written", "fsynced", "verified",
"before-rename", "renamed") to prove a crash midway loses nothing."""


def _step(name: str) -> None:
    if fault_hook is not None:
        fault_hook(name)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file as it was read: its bytes and the facts that tell if it changed since."""

    path: Path
    data: bytes | None
    """None: the file did not exist."""
    mtime_ns: int = 0
    size: int = 0
    mode: int | None = None

    @property
    def hash(self) -> str | None:
        return content_hash(self.data) if self.data is not None else None

    @property
    def text(self) -> str:
        return (self.data or b"").decode("utf-8", "surrogateescape")


def read_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the write
        with open(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise WriteError(f"cannot write {p}: it is not a regular file (a FIFO, "
                                 "socket or device); only regular files are edited")
            data = f.read()
    except FileNotFoundError:
        return Snapshot(p, None)
    except OSError as e:
        raise WriteError(f"cannot read {p}: {e.strerror}") from e
    return Snapshot(p, data, st.st_mtime_ns, st.st_size, stat.S_IMODE(st.st_mode))


def _check_unchanged(expected: Snapshot) -> None:
    p = expected.path
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if expected.data is None:
            return
        raise ConflictError(str(p), "it was deleted") from None
    if expected.data is None:
        raise ConflictError(str(p), "it was created by someone else")
    if st.st_mtime_ns == expected.mtime_ns and st.st_size == expected.size:
        return
    from .regular import read_regular

    try:
        now = read_regular(p)
    except OSError:
        raise ConflictError(str(p), "it is no longer a regular file") from None
    if now != expected.data:
        raise ConflictError(str(p))


def atomic_write(expected: Snapshot, data: bytes) -> None:
    """Replace ``expected.path`` with ``data`` iff it still holds ``expected.data``."""
    path = expected.path
    _check_unchanged(expected)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.oc-{secrets.token_hex(4)}.tmp")
    mode = expected.mode if expected.mode is not None else 0o644 & ~_umask()
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            _step("written")
            os.fsync(fd)
            _step("fsynced")
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        with open(tmp, "rb") as f:
            if f.read() != data:
                raise WriteError(f"verification of the temporary copy of {path} failed; "
                                 "nothing was written (disk full or failing?)")
        _step("verified")
        _check_unchanged(expected)
        _step("before-rename")
        if expected.data is None:
            os.link(tmp, path)  # fails if someone created it meanwhile: never clobber
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
        _step("renamed")
    except FileExistsError as e:
        _unlink_quietly(tmp)
        raise ConflictError(str(path), "it was created by someone else") from e
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(path.parent)


def remove_file(expected: Snapshot) -> None:
    """Delete a file iff it still holds ``expected.data`` (undo of a file creation)."""
    _check_unchanged(expected)
    os.unlink(expected.path)
    _fsync_dir(expected.path.parent)


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _unlink_quietly(p: Path) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
