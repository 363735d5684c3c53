"""Bounded reads: only regular files are opened, and opening never blocks.

A FIFO, socket or device dropped into the memex or a transcript folder would make a
plain ``open()`` wait forever (a FIFO with no writer) or read without end (``/dev/zero``
behind a symlink).  :func:`read_regular` opens with ``O_NONBLOCK`` and checks the
*opened* descriptor with ``fstat`` (no race with a swap after a ``stat``); callers skip
and count what :func:`is_regular` refuses.
"""

from __future__ import annotations

import os
import stat

from .errors import NotRegularError

__all__ = ["NotRegularError", "is_regular", "kind_of", "read_regular"]


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISDIR, "directory")):
        if test(mode):
            return name
    return "special file"


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True for a regular file (after symlinks); False for anything else or on error."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_regular(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; NotRegularError for anything else (without blocking).
    ``max_bytes``: read at most this much (an OSError says the file is too large)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularError(0, f"not a regular file ({kind_of(st.st_mode)}); skipped",
                                  os.fspath(path))
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(0, f"{st.st_size} bytes > limit {max_bytes}", os.fspath(path))
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)
