"""Slow pure work (a model's answer, a forward pass) runs with the memex lock released: the
lock is the one connection's, and a model touches none of the memex."""

from __future__ import annotations

import threading
import time

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
