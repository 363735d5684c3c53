"""Slow pure work (a model's answer, a forward pass) runs with the memex lock released: the
lock is the one connection's, and a model touches none of the memex."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from opencortex.locking import MemexLock, slow_work

from .conftest import FakeLLM, Reply, completion


def _free_elsewhere(lock: MemexLock, timeout: float = 2.0) -> bool:
    got: list[bool] = []

    def probe() -> None:
        ok = lock.acquire(timeout=timeout)
        if ok:
            lock.release()
        got.append(ok)

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return got[0]


def test_slow_work_releases_every_level_and_restores_them() -> None:
    a, b = MemexLock(), MemexLock()
    with a, a, b:
        assert (a.depth(), b.depth()) == (2, 1)
        assert not _free_elsewhere(a, 0.05)
        with slow_work():
            assert (a.depth(), b.depth()) == (0, 0)
            assert _free_elsewhere(a) and _free_elsewhere(b)
            with slow_work():  # nested: nothing more to release
                assert a.depth() == 0
        assert (a.depth(), b.depth()) == (2, 1)
        assert not _free_elsewhere(b, 0.05)
    assert a.depth() == b.depth() == 0
    with pytest.raises(RuntimeError, match="does not hold"):
        a.release()


def test_slow_work_restores_the_lock_when_the_work_raises() -> None:
    a = MemexLock()
    with a:
        with pytest.raises(ValueError), slow_work():
            raise ValueError("model failed")
        assert a.depth() == 1
    assert a.depth() == 0


def test_another_thread_uses_the_memex_while_a_model_answers() -> None:
    from opencortex.llm import Gateway, Message, Provider

    server = FakeLLM()
    lock = MemexLock()
    try:
        server.push(Reply(body=completion("done"), delay=0.6))
        gw = Gateway([Provider("test", server.url, {"fast": "m", "smart": "m"},
                               key_required=False, local=True, max_retries=0, timeout=5)])
        out: list[str] = []
        depth: list[int] = []

        def ask() -> None:
            with lock, lock:
                out.append(gw.complete([Message("user", "hi")]).text or "")
                depth.append(lock.depth())

        t = threading.Thread(target=ask)
        t.start()
        time.sleep(0.2)  # the model is thinking
        t0 = time.perf_counter()
        assert lock.acquire(timeout=2)
        waited = time.perf_counter() - t0
        lock.release()
        t.join(5)
        assert out == ["done"] and depth == [2]
        assert waited < 0.3, waited  # not until the answer came
    finally:
        server.close()


def _run(*targets) -> list[threading.Thread]:
    ts = [threading.Thread(target=t, daemon=True) for t in targets]  # a deadlock must not
    for t in ts:                                                      # hang the test run
        t.start()
    for t in ts:
        t.join(5)
    return ts


def test_a_lock_held_across_slow_work_is_waited_for_with_the_memex_lock_released() -> None:
    """The deadlock a plain lock makes: A holds the memex lock and a turn lock, lets go of
    the memex lock for slow work; B takes the memex lock, waits for the turn lock; A, done,
    waits for the memex lock. With an OuterLock, B waits with the memex lock released."""
    from opencortex.recall.engine import _turn_lock

    memex = MemexLock()
    in_slow, b_waiting = threading.Event(), threading.Event()
    done: list[str] = []
    turn = _turn_lock(Path("/nonexistent/recall/session-x"))

    def first() -> None:
        with memex, turn:
            with slow_work():
                in_slow.set()
                assert b_waiting.wait(5)
                time.sleep(0.1)  # B is now blocked on the turn lock
            done.append("first")

    def second() -> None:
        assert in_slow.wait(5)
        with memex:
            b_waiting.set()
            with turn:
                assert memex.depth() == 1  # the memex lock is held again inside
                done.append("second")
        assert memex.depth() == 0

    ts = _run(first, second)
    assert not any(t.is_alive() for t in ts), "deadlock"
    assert done == ["first", "second"]
    assert not turn.locked()


def test_outer_lock_is_taken_at_once_when_free_keeping_the_memex_lock() -> None:
    from opencortex.locking import OuterLock

    memex, outer = MemexLock(), OuterLock()
    seen: list[bool] = []

    def probe() -> None:  # the memex lock is not let go of when nobody waits
        seen.append(memex.acquire(timeout=0.05))
        if seen[-1]:
            memex.release()

    with memex, outer:
        t = threading.Thread(target=probe)
        t.start()
        t.join(5)
        assert memex.depth() == 1
    assert seen == [False]
