"""The memex's one lock, and the rule that slow pure work runs with it released.

The index is one connection, so every gateway, worker and the heartbeat hold the memex lock
around memex calls, and a request's reasoning runs under it.  But a model's forward pass over
some texts, or the wait for a model server's answer, reads and writes nothing of the memex and
takes milliseconds to seconds: holding the lock meanwhile makes every other request, the
heartbeat and Emacs's point updates wait on a computation they do not share.  So the code
that does such work (the embedders, the LLM gateway) wraps it in ``slow_work()``, which lets
go of every memex lock the calling thread holds — however deeply re-entered — and takes them
back, in the order first taken, before returning.

What the caller sees afterwards is the memex as other threads left it, as after any wait: no
transaction may be open across slow work (the stores run in autocommit mode and open
transactions only inside ``transaction()`` blocks, which call no model), and writes verify
the file on disk before they replace it.

Any other lock a thread holds across slow work must be an ``OuterLock``: ordered outside the
memex lock, waited for with the memex locks released.  A plain lock there deadlocks: its
holder, back from slow work, waits for the memex lock, held by a thread that waits for the
plain lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["MemexLock", "OuterLock", "slow_work"]

_held = threading.local()
"""Per thread: the MemexLocks it holds, in the order it first took them."""


def _held_locks() -> list[MemexLock]:
    got: list[MemexLock] | None = getattr(_held, "locks", None)
    if got is None:
        got = _held.locks = []
    return got


class MemexLock:
    """A re-entrant lock that knows how deeply this thread holds it (``threading.RLock``
    keeps that private), so ``slow_work`` can release it entirely and restore it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = threading.local()

    def depth(self) -> int:
        """How many times the calling thread holds this lock (0: not at all)."""
        return int(getattr(self._depth, "n", 0))

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not self._lock.acquire(blocking, timeout):
            return False
        n = self.depth()
        if n == 0:
            _held_locks().append(self)
        self._depth.n = n + 1
        return True

    def release(self) -> None:
        n = self.depth()
        if n <= 0:
            raise RuntimeError("cannot release a memex lock this thread does not hold")
        self._depth.n = n - 1
        if n == 1:
            _held_locks().remove(self)
        self._lock.release()

    def __enter__(self) -> MemexLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


@contextmanager
def slow_work() -> Iterator[None]:
    """Run the block with none of this thread's memex locks held (a no-op when it holds
    none, e.g. nested slow work or a CLI command outside any lock)."""
    held = [(lock, lock.depth()) for lock in _held_locks()]
    for lock, n in reversed(held):
        for _ in range(n):
            lock.release()
    try:
        yield
    finally:
        for lock, n in held:
            for _ in range(n):
                lock.acquire()


class OuterLock:
    """A lock that may be held across ``slow_work`` (one recall session's turn, say):
    taken at once when free, else waited for with this thread's memex locks released — so
    no thread ever holds a memex lock while it waits for this one (see the module's
    docstring), and the memex is served meanwhile.  Not re-entrant."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if not self._lock.acquire(blocking=False):
            with slow_work():
                self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> OuterLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
