"""Issue 26's GTD classes, on the example memex (now = Mon 30 Nov 2026 10:00): a statement
about an existing task changes that task (its subject, what time is set aside for, what it
means) before it is ever a capture; a labelled capture captures; a question never writes,
whoever proposes the write; list questions about repeaters and states name every entry."""

from __future__ import annotations

import hashlib
from pathlib import Path

from opencortex.memex import Memex
from opencortex.skills import gtd
from opencortex.skills.base import Action, Rejection

from .conftest import ctx_for, run

SKILL = gtd.skill()


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in root.rglob("*.org")}


def _plan(mx: Memex, text: str) -> tuple[dict, object]:
    return run(SKILL, ctx_for(mx, text, target="gtd"))


def _steps(mx: Memex, text: str) -> list[dict]:
    p, a = _plan(mx, text)
    assert isinstance(a, Action) and a.tool == "memex.write", (p, a)
    return list(a.args["steps"])


def _reply(mx: Memex, text: str) -> str:
    p, a = _plan(mx, text)
    assert isinstance(a, Action) and a.tool == "reply", (p, a)
    return str(a.args["text"])


def test_a_subject_that_can_not_start_yet_schedules_that_task(mx: Memex) -> None:
    steps = _steps(mx, "the tap washer can't happen before the 12th")
    assert [s["op"] for s in steps] == ["schedule"]
    assert steps[0]["when"] == "2026-12-12" and "tap washer" in steps[0]["ref"]
    _, a = _plan(mx, "the tap washer can't happen before the 12th")
    gtd.apply_memex_op(mx, a.args)  # type: ignore[union-attr]
    text = (mx.root / "gtd.org").read_text(encoding="utf-8")
    assert "Fix the kitchen tap washer" in text and "SCHEDULED: <2026-12-12 Sat>" in text
    assert "can't happen" not in text  # nothing captured


def test_time_set_aside_for_a_task_schedules_it_with_the_time(mx: Memex) -> None:
    steps = _steps(mx, "reserve thursday 8am for the dental cleaning")
    assert steps == [{"op": "schedule", "ref": "gtd.org::Next actions/Book a dental cleaning",
                      "when": "2026-12-03T08:00", "repeater": None}]


def test_time_set_aside_for_something_new_captures_that_thing(mx: Memex) -> None:
    steps = _steps(mx, "block out saturday for the loft insulation quotes")
    assert steps[0]["op"] == "capture" and steps[0]["text"] == "The loft insulation quotes"
    assert steps[1]["when"] == "2026-12-05"


def test_a_subject_named_in_other_words_is_found_by_meaning(mx: Memex) -> None:
    steps = _steps(mx, "the jujutsu trial is due by friday")
    assert steps == [{"op": "deadline", "ref": "gtd.org::Someday / maybe/Try Jujutsu (jj) for "
                      "the book repository", "when": "2026-12-04", "repeater": None}]


def test_a_statement_about_nothing_on_the_list_is_a_capture(mx: Memex) -> None:
    steps = _steps(mx, "the boiler service is due on friday")
    assert steps[0]["op"] == "capture" and "boiler" in steps[0]["text"].lower()


def test_what_still_has_to_happen_is_not_done(mx: Memex) -> None:
    steps = _steps(mx, "the christmas present for jonas has to be bought by the 12th")
    assert [s["op"] for s in steps] == ["deadline"] and steps[0]["when"] == "2026-12-12"


def test_a_labelled_capture_captures_even_a_question(mx: Memex) -> None:
    steps = _steps(mx, "capture: which hinge fits the shed door?")
    assert steps[0]["op"] == "capture" and "hinge" in steps[0]["text"]
    steps = _steps(mx, "todo - ring the council about the bins")
    assert steps[0] == {"op": "capture", "to": "gtd.org::Inbox", "todo": "TODO", "tags": [],
                        "text": "Ring the council about the bins"}


def test_a_question_never_writes_whoever_proposes_it(mx: Memex) -> None:
    before = _tree(mx.root)
    ctx = ctx_for(mx, "is the tap washer fixed yet?", target="gtd")
    assert SKILL.symbolic is not None
    model_plan = {"action": "memex", "op": "gtd", "path": "gtd.org", "steps": [
        {"op": "todo", "ref": "gtd.org::Next actions/Fix the kitchen tap washer",
         "state": "DONE"}]}
    assert isinstance(SKILL.symbolic(model_plan, ctx), Rejection)
    assert isinstance(SKILL.symbolic({"action": "capture", "text": "tap washer?"}, ctx),
                      Rejection)
    _reply(mx, "is the tap washer fixed yet?")  # the offline answer reads only
    assert _tree(mx.root) == before


def test_repeater_questions_list_every_repeating_entry(mx: Memex) -> None:
    text = _reply(mx, "which of my tasks are recurring?")
    for title in ("Weekly review", "Water the plants", "Check restic backup report",
                  "Pay rent", "Anki reviews"):
        assert title in text, text
    weekly = _reply(mx, "what repeats every week?")
    assert "Water the plants" in weekly and "Check restic backup report" in weekly
    assert "Pay rent" not in weekly and "Anki reviews" not in weekly
    assert "Anki reviews" in _reply(mx, "show me the daily habits")


def test_state_questions_list_every_entry_in_that_state(mx: Memex) -> None:
    text = _reply(mx, "list everything in the WAITING state")
    for title in ("Sam: CI runner logs", "Refund from Hetzner", "Lena's feedback",
                  "Get the WAL trace", "Decide whether Home Assistant moves too"):
        assert title in text, text
    drafts = _reply(mx, "which entries are marked DRAFT?")
    assert "(4):" in drafts and "Search without a server" in drafts


def test_a_question_naming_a_task_tag_is_routed_to_the_lists(mx: Memex) -> None:
    """The index-backed hint: "tagged homelab" names a tag open tasks carry, so the list
    answers it, whatever topic the tag's word reads as."""
    import datetime as dt

    from opencortex.skills.gtd_route import hint

    h = hint(mx, dt.datetime(2026, 11, 30, 10, 0))
    assert h("what have I got tagged homelab?")
    assert not h("what have I got tagged astronomy?")
    text = _reply(mx, "what have I got tagged homelab?")
    assert "Replace the failing disk" in text and "Check restic backup report" in text
