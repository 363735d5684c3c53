"""The index-backed GTD routing hint (skills/gtd_route.py): a statement about an existing open
task that carries a GTD slot, or a question about a task's state or a project's lists, goes to
gtd whatever the classifier reads; a clause naming no existing task, carrying no slot, or
written in unambiguous tool syntax is left to the rules and the classifier."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.router import decompose
from opencortex.skills.gtd_route import hint, is_gtd_clause

from .conftest import NOW


@pytest.mark.parametrize("text", [
    "the kitchen tap washer got sorted",                   # state: done
    "learning to make croissants is no longer happening",  # state: cancelled
    "put a money tag on the rent one",                     # tag
    "the anki reviews are top priority now",               # priority
    "checking the restic backup report takes 20 minutes",  # effort
    "the jujutsu trial for the book repository can slip by two weeks",  # shift
    "anki reviews: every other day from now on",           # repeater
    "what's finished in the rust learning project?",       # a project's list
    "when is the chapter 7 outline for lena due?",         # one task's date
])
def test_statements_and_questions_about_existing_tasks(mx: Memex, text: str) -> None:
    assert is_gtd_clause(mx, text, NOW), text


@pytest.mark.parametrize("text", [
    "the kitchen tap washer",                        # names a task, asks nothing of it
    "the gazebo repaint is done",                    # slot, but no such task
    "remind me to buy flour for the croissants",     # an explicit capture: not a lookup
    "what do my notes say about croissants?",        # a question, but not about a list
    "/notes kitchen tap washer done",                # unambiguous syntax: the rules decide
    "read https://example.com/tap-washer-done",
    "thanks, that's done",                           # a pleasantry names no task
])
def test_other_clauses_are_left_to_the_classifier(mx: Memex, text: str) -> None:
    assert not is_gtd_clause(mx, text, NOW), text


def _fake_embed(texts):
    import numpy as np

    rows = np.zeros((len(texts), 512), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            rows[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 512] += 1.0
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def test_decompose_keeps_a_hinted_clause_whole_and_below_the_rules(mx: Memex) -> None:
    h = hint(mx, NOW)
    got = decompose("the kitchen tap washer is done, the new one fits", embed=_fake_embed,
                    hint=h)
    assert [i.target for i in got] == ["gtd"], got
    # a leading /command stays what its syntax says
    assert [i.target for i in decompose("/notes kitchen tap washer done", embed=_fake_embed,
                                        hint=h)] == ["notes"]
    # without a hint the same text is the classifier's to decide (no memex: no lookup)
    assert decompose("the kitchen tap washer is done", embed=_fake_embed)


def _headlines(root: Path) -> list[str]:
    return sorted(line.rstrip() for p in root.rglob("*.org")
                  if not p.relative_to(root).as_posix().startswith("sessions/")
                  for line in p.read_text(encoding="utf-8").splitlines()
                  if line.startswith("*"))


def test_a_reported_state_closes_the_task_through_the_kernel(memex: Path,
                                                             tmp_path: Path) -> None:
    """Said as a statement, the report changes the existing entry: no new capture."""
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    before = _headlines(memex)
    k = Kernel(m, record_sessions=False)
    k.approval_timeout = 0
    try:
        k.ask("the kitchen tap washer got sorted")
        after = _headlines(memex)
        assert len(after) == len(before)
        assert any(h.startswith("** DONE Fix the kitchen tap washer") for h in after), after
        text = (memex / "gtd.org").read_text(encoding="utf-8")
        assert "CLOSED: [" in text.split("Fix the kitchen tap washer", 1)[1][:200]
        # a question about a project's list answers and writes nothing
        tree = {p: p.read_bytes() for p in memex.rglob("*.org")
                if "sessions" not in p.parts}
        out = k.ask("what's finished in the rust learning project?")
        assert out and "DONE" in out[0], out
        assert {p: p.read_bytes() for p in memex.rglob("*.org")
                if "sessions" not in p.parts} == tree
    finally:
        k.shutdown(timeout=10)
        m.close()


# -- the slots and plans these statements rely on --------------------------------------------

def test_statement_slots() -> None:
    import datetime as dt

    from opencortex.skills.gtd_slots import parse_clause

    now = dt.datetime(2026, 12, 2, 9, 0)  # a Wednesday
    s = parse_clause("the gutter cleaning can wait until next month", now)
    assert s.scheduled == dt.date(2027, 1, 1) and s.deadline is None  # a new start, not a due
    s = parse_clause("the bin rota is weekly on thursdays", now)
    assert (s.repeater, s.scheduled) == ("+1w", dt.date(2026, 12, 3))
    s = parse_clause("the gazebo repaint isn't going to happen", now)
    assert s.state == "CANCELLED" and s.ref_text.lower() == "the gazebo repaint"
    s = parse_clause("the gazebo repaint isn't happening before spring", now)
    assert s.state is None  # put off, not called off
    assert parse_clause("the spare key finally arrived", now).arrived


def _steps(mx: Memex, text: str) -> list[tuple[str, object]]:
    from opencortex.skills.gtd_plan import plan

    p = plan(mx, text, NOW)
    return [(st["op"], st.get("state") or st.get("when") or st.get("changes") or st.get("value"))
            for st in p.get("steps", [])]


def test_plans_for_statements(mx: Memex) -> None:
    from opencortex.skills.gtd_plan import plan

    # what a WAITING entry waits for came: done (and routed to gtd)
    assert _steps(mx, "hetzner reimbursed the storage box charge") == [("todo", "DONE")]
    assert is_gtd_clause(mx, "hetzner reimbursed the storage box charge", NOW)
    # the task's own verb in the past, irregular or passive: done
    assert _steps(mx, "I've paid the rent") == [("todo", "DONE")]
    assert _steps(mx, "the dental cleaning is booked") == [("todo", "DONE")]
    # a state said of something only one word of a title shares: nothing changes, no capture
    p = plan(mx, "the plumber visit isn't happening", NOW)
    assert p["action"] == "reply" and "nothing was changed" in p["text"], p
    assert not is_gtd_clause(mx, "the plumber visit isn't happening", NOW)


def test_progress_question_lists_done_and_open(mx: Memex) -> None:
    from opencortex.skills.gtd_questions import answer

    text = "how far along is the rust learning project?"
    assert is_gtd_clause(mx, text, NOW)
    out = answer(mx, text, NOW)
    assert out.startswith("Learn Rust well enough") and "done" in out and "Still open" in out
    assert "learning-rust.org:" in out
