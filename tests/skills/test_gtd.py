"""GTD skill: views with citations, natural dates against a fixed now, state changes
through the Memex write API, ambiguity refused with candidates."""

from __future__ import annotations

import datetime as dt

import pytest

from opencortex.memex import Memex
from opencortex.skills import gtd
from opencortex.skills.base import Action, Rejection

from .conftest import NOW, ctx_for, run

SKILL = gtd.skill()


@pytest.mark.parametrize(("text", "want"), [
    ("next Tuesday at 9", dt.datetime(2026, 12, 1, 9, 0)),
    ("in 3 days", dt.date(2026, 12, 3)),
    ("tomorrow", dt.date(2026, 12, 1)),
    ("Friday", dt.date(2026, 12, 4)),
    ("monday", dt.date(2026, 12, 7)),  # today is Monday: the next one
    ("tomorrow at 5pm", dt.datetime(2026, 12, 1, 17, 0)),
    ("Dec 24 14:30", dt.datetime(2026, 12, 24, 14, 30)),
    ("2026-12-24", dt.date(2026, 12, 24)),
    ("in 2 weeks", dt.date(2026, 12, 14)),
    ("today at noon", dt.datetime(2026, 11, 30, 12, 0)),
])
def test_parse_when(text: str, want: object) -> None:
    assert gtd.parse_when(text, NOW) == want


def test_parse_when_rejects_gibberish() -> None:
    assert gtd.parse_when("whenever the cows come home", NOW) is None
    assert gtd.parse_when("at 27", NOW) is None


def _reply(mx: Memex, text: str | None = None, **d: object) -> str:
    p, a = run(SKILL, ctx_for(mx, text, **d))
    assert isinstance(a, Action) and a.tool == "reply" and a.origin == "gtd", (p, a)
    return str(a.args["text"])


def test_agenda_today_week_overdue_with_citations(mx: Memex) -> None:
    text = _reply(mx, target="gtd", op="agenda")
    today, week, overdue = (text.index(s) for s in ("Today (Mon 30 Nov)", "This week",
                                                    "Overdue"))
    assert today < week < overdue
    assert "Update CI quarantine list" in text[today:week]
    assert "(gtd.org:46 id:61267f0d-0262-4fd9-9c65-71c59800ba49)" in text
    assert "Send revised chapter 7 outline" in text[week:overdue]
    assert "Replace the failing disk" in text[overdue:]
    only_today = _reply(mx, "what's due today")
    assert "This week" not in only_today and "Update CI quarantine" in only_today


def test_next_actions_per_project(mx: Memex) -> None:
    text = _reply(mx, target="gtd", op="next", project="rust")
    assert text.startswith("Next actions for Learn Rust")
    assert "NEXT Rustlings iterators and traits (projects/learning-rust.org:" in text
    everything = _reply(mx, "next actions")
    assert "Migrate the home server" in everything and "Other next actions:" in everything
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="next", project="zzz nothing"))
    assert "no active project matches" in a.args["text"]


def test_waiting_and_review(mx: Memex) -> None:
    waiting = _reply(mx, "what am I waiting for?")
    assert waiting.startswith("Waiting for (5)")
    assert "Refund from Hetzner" in waiting
    review = _reply(mx, target="gtd", op="review")
    assert "Inbox: 4 item(s)" in review and "Overdue: 5" in review
    assert "Projects without a next action: 1" in review and "Chapter 7" in review
    assert "Waiting for: 5" in review and "Done in the last 7 days: 4" in review
    assert "(gtd.org:115 id:dcfbe854-798d-47bb-86fa-e8aab1919a1a)" in review


def test_capture_to_inbox(mx: Memex) -> None:
    # no inbox.org in this memex: the capture goes under its Inbox heading
    _p, a = run(SKILL, ctx_for(mx, "inbox: call the plumber about the boiler"))
    assert isinstance(a, Action) and a.args["op"] == "gtd" and a.args["path"] == "gtd.org"
    assert a.args["steps"] == [{"op": "capture", "to": "gtd.org::Inbox", "tags": [],
                                "text": "Call the plumber about the boiler", "todo": "TODO"}]
    text, data = gtd.apply_memex_op(mx, a.args)
    assert text.startswith("Captured Call the plumber about the boiler (gtd.org:")
    assert data["writes"][0]["file"] == "gtd.org"
    review = _reply(mx, target="gtd", op="review")
    assert "Inbox: 5 item(s)" in review and "Call the plumber" in review


def test_mark_done_through_apply(mx: Memex) -> None:
    _p, a = run(SKILL, ctx_for(mx, "mark dental cleaning as done"))
    assert isinstance(a, Action) and a.tool == "memex.write"
    assert a.args["op"] == "gtd" and a.args["path"] == "gtd.org"
    assert [(st["op"], st["state"]) for st in a.args["steps"]] == [("todo", "DONE")]
    text, data = gtd.apply_memex_op(mx, a.args)
    assert text.startswith("Updated Book a dental cleaning (gtd.org:")
    assert "NEXT -> DONE" in text
    assert data["writes"][0]["changed"] and data["writes"][0]["journal_id"]
    n = mx.query("heading:dental")[0]
    assert n.todo == "DONE" and n.closed
    mx.undo(1)
    assert mx.query("heading:dental")[0].todo == "NEXT"


def test_a_step_on_the_new_entry_before_a_capture_is_undone(mx: Memex) -> None:
    """Steps that reach the actuator without the verifier (a plan naming ``@new`` with no
    capture before it) fail with a clear error and undo the steps already made."""
    _p, a = run(SKILL, ctx_for(mx, "mark dental cleaning as done"))
    assert isinstance(a, Action)
    steps = [*a.args["steps"], {"op": "todo", "ref": "@new", "state": "DONE"}]
    with pytest.raises(ValueError, match="names the new entry before it is captured"):
        gtd.apply_memex_op(mx, {**a.args, "steps": steps})
    assert mx.query("heading:dental")[0].todo == "NEXT"  # the first step was undone


def test_ambiguous_task_refused_with_candidates(mx: Memex) -> None:
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="todo", task="review", state="DONE"))
    assert isinstance(a, Rejection)
    assert "matches 3 tasks" in a.reason
    assert "Weekly review (gtd.org:207 id:a6e3f025" in a.reason
    assert "Anki reviews" in a.reason
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="todo", task="frobnicate", state="DONE"))
    assert isinstance(a, Rejection) and "no task title contains" in a.reason


def test_schedule_natural_date(mx: Memex) -> None:
    _p, a = run(SKILL, ctx_for(mx, "schedule kitchen tap for next Tuesday at 9"))
    assert isinstance(a, Action) and a.args["path"] == "gtd.org"
    (st,) = a.args["steps"]
    assert (st["op"], st["when"], st["repeater"]) == ("schedule", "2026-12-01T09:00", None)
    text, _ = gtd.apply_memex_op(mx, a.args)
    assert "Fix the kitchen tap washer: SCHEDULED <2026-12-01 Tue 09:00>" in text
    assert "SCHEDULED: <2026-12-01 Tue 09:00>" in (mx.root / "gtd.org").read_text()


def test_deadline_and_waiting_state(mx: Memex) -> None:
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="deadline", task="christmas present",
                              when="in 3 days"))
    gtd.apply_memex_op(mx, a.args)
    assert mx.query("heading:christmas")[0].deadline == "<2026-12-03 Thu>"
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="waiting", task="kitchen tap washer"))
    assert a.args["op"] == "todo" and a.args["state"] == "WAITING"
    gtd.apply_memex_op(mx, a.args)
    assert "Fix the kitchen tap washer" in _reply(mx, target="gtd", op="waiting")


def test_bad_date_is_rejected(mx: Memex) -> None:
    _p, a = run(SKILL, ctx_for(mx, target="gtd", op="schedule", task="kitchen tap",
                              when="whenever the cows come home"))
    assert isinstance(a, Rejection) and "could not read" in a.reason


def test_trigger_is_specific(mx: Memex) -> None:
    assert not SKILL.trigger(ctx_for(mx, "caching strategies"))
    assert not SKILL.trigger(ctx_for(mx, target="foundry", name="x"))
    assert SKILL.trigger(ctx_for(mx, target="gtd"))
