from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from opencortex.guard import Action, ApprovalError, ApprovalQueue

A = Action("shell", {"argv": ["ls"]}, "shell")


def test_request_resolve_wait() -> None:
    q = ApprovalQueue()
    p = q.request(A, "shell needs approval")
    assert p.action == A and p.reason == "shell needs approval"
    assert p.created.tzinfo is not None
    assert q.pending() == [p]
    assert q.wait(p.id, timeout=0.01) is None
    r = q.resolve(p.id, True, by="sam")
    assert r.approved and r.by == "sam"
    assert q.wait(p.id, timeout=0) is True
    assert q.pending() == []


def test_errors() -> None:
    q = ApprovalQueue()
    with pytest.raises(ApprovalError, match="no pending approval"):
        q.resolve("nope", True, "sam")
    with pytest.raises(ApprovalError):
        q.wait("nope", 0)
    p = q.request(A, "r")
    q.resolve(p.id, False, "sam")
    with pytest.raises(ApprovalError, match="already rejected by sam"):
        q.resolve(p.id, True, "mallory")
    assert q.wait(p.id, 0) is False


def test_pending_in_order_with_clock() -> None:
    t = iter(range(10))
    q = ApprovalQueue(clock=lambda: datetime.fromtimestamp(next(t), UTC))
    ids = [q.request(A, str(i)).id for i in range(3)]
    assert [p.id for p in q.pending()] == ids
    q.resolve(ids[1], True, "x")
    assert [p.id for p in q.pending()] == [ids[0], ids[2]]


def test_waiters_across_threads() -> None:
    q = ApprovalQueue()
    ps = [q.request(A, str(i)) for i in range(8)]
    results: dict[str, bool | None] = {}

    def waiter(pid: str) -> None:
        results[pid] = q.wait(pid, timeout=5)

    threads = [threading.Thread(target=waiter, args=(p.id,)) for p in ps]
    for th in threads:
        th.start()
    time.sleep(0.05)
    for i, p in enumerate(ps):
        q.resolve(p.id, i % 2 == 0, "sam")
    for th in threads:
        th.join(5)
    assert results == {p.id: i % 2 == 0 for i, p in enumerate(ps)}


def test_concurrent_resolution_only_one_wins() -> None:
    q = ApprovalQueue()
    p = q.request(A, "r")
    wins: list[str] = []
    errors: list[Exception] = []
    barrier = threading.Barrier(10)

    def resolver(n: int) -> None:
        barrier.wait()
        try:
            q.resolve(p.id, True, f"user{n}")
            wins.append(f"user{n}")
        except ApprovalError as e:
            errors.append(e)

    threads = [threading.Thread(target=resolver, args=(n,)) for n in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(5)
    assert len(wins) == 1 and len(errors) == 9


def test_many_requests_from_threads_get_unique_ids() -> None:
    q = ApprovalQueue()
    out: list[str] = []
    lock = threading.Lock()

    def make() -> None:
        for _ in range(200):
            pid = q.request(A, "r").id
            with lock:
                out.append(pid)

    threads = [threading.Thread(target=make) for _ in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert len(set(out)) == 1000 == len(q.pending())


def test_resolved_history_is_bounded() -> None:
    q = ApprovalQueue(keep_resolved=2)
    ps = [q.request(A, "r") for _ in range(3)]
    for p in ps:
        q.resolve(p.id, True, "x")
    with pytest.raises(ApprovalError):
        q.get(ps[0].id)
    assert q.get(ps[2].id)[1] is not None
