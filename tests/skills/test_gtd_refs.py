"""Which entry a GTD command means (exact, partial, ID, file:line; ambiguous -> a question;
unknown -> nothing written and nothing captured), and the plans built on it, applied
through the Memex write API (repeaters advance, keywords the file allows, undo)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from opencortex.memex import Memex
from opencortex.skills import gtd
from opencortex.skills.base import Action
from opencortex.skills.gtd_refs import resolve_ref

from .conftest import ctx_for, run

SKILL = gtd.skill()


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in root.rglob("*.org") if not p.relative_to(root).as_posix().startswith(
                "sessions/")}


def _plan(mx: Memex, text: str) -> tuple[dict, object]:
    return run(SKILL, ctx_for(mx, text, target="gtd"))


def _apply(mx: Memex, text: str) -> str:
    _p, a = _plan(mx, text)
    assert isinstance(a, Action) and a.tool == "memex.write", (_p, a)
    out, _ = gtd.apply_memex_op(mx, a.args)
    return out


def _reply(mx: Memex, text: str) -> str:
    p, a = _plan(mx, text)
    assert isinstance(a, Action) and a.tool == "reply", (p, a)
    return str(a.args["text"])


def test_exact_partial_id_and_line(mx: Memex) -> None:
    assert resolve_ref(mx, "Fix the kitchen tap washer").node.line == 109  # type: ignore[union-attr]
    assert resolve_ref(mx, "that tap washer job").node.title == "Fix the kitchen tap washer"  # type: ignore[union-attr]
    r = resolve_ref(mx, "id:61267f0d-0262-4fd9-9c65-71c59800ba49")
    assert r.exact and r.node.title.startswith("Update CI quarantine")  # type: ignore[union-attr]
    assert resolve_ref(mx, "gtd.org:109").node.title == "Fix the kitchen tap washer"  # type: ignore[union-attr]
    assert resolve_ref(mx, 'the "Pay rent" one').node.title == "Pay rent"  # type: ignore[union-attr]


def test_open_task_preferred_over_note_of_same_title(mx: Memex) -> None:
    r = resolve_ref(mx, "weekly review")
    assert r.node is not None and r.node.file == "gtd.org" and r.node.todo == "TODO"


def test_ambiguous_reference_asks_and_writes_nothing(mx: Memex) -> None:
    before = _tree(mx.root)
    text = _reply(mx, "mark the restic one as done")
    assert text.startswith("Which one") and "Check restic backup report" in text
    assert "Set up restic to Backblaze B2" in text and "Nothing was changed" in text
    assert _tree(mx.root) == before


def test_unknown_reference_captures_no_duplicate(mx: Memex) -> None:
    before = _tree(mx.root)
    text = _reply(mx, "cancel the trampoline assembly")
    assert "found no task" in text and "trampolin" in text
    text = _reply(mx, "hoovered the attic")
    assert "found no task" in text
    assert _tree(mx.root) == before and not mx.store.journal()


def test_done_on_a_repeating_task_advances_it(mx: Memex) -> None:
    out = _apply(mx, "did my anki reviews")
    assert "Anki reviews" in out
    n = next(x for x in mx.query("heading:anki") if x.title == "Anki reviews")
    # Org's "+1d": one interval on, the keyword stays, the repeat is logged
    assert n.todo == "TODO" and n.scheduled == "<2026-11-03 Tue 07:30 +1d>"
    assert n.properties.get("LAST_REPEAT")


def test_past_report_closes_the_matching_task(mx: Memex) -> None:
    _apply(mx, "fixed the kitchen tap washer")
    n = mx.query("heading:washer")[0]
    assert n.todo == "DONE" and n.closed


def test_state_tag_priority_effort_note_on_existing(mx: Memex) -> None:
    _apply(mx, "scrap the croissants plan")
    assert mx.query("heading:croissants")[0].todo == "CANCELLED"
    _apply(mx, "the restic to backblaze setup will take about 3 hours")
    n = mx.query("heading:backblaze")[0]
    assert n.properties.get("Effort") == "3:00"
    _apply(mx, "make the dental cleaning low priority")
    assert mx.query("heading:dental")[0].priority == "C"
    _apply(mx, "tag the kitchen tap washer with plumbing")
    assert "plumbing" in mx.query("heading:washer")[0].local_tags
    _apply(mx, "add a note to the pay rent task: landlord changed the IBAN")
    assert "landlord changed the IBAN" in (mx.root / "gtd.org").read_text()
    _apply(mx, "mark the dental cleaning as waiting")
    assert mx.query("heading:dental")[0].todo == "WAITING"


def test_shift_keeps_time_repeater_and_warning(mx: Memex) -> None:
    _apply(mx, "push the rent back by 2 days")
    n = next(x for x in mx.query("heading:rent") if x.title == "Pay rent")
    assert n.deadline == "<2026-12-03 Thu +1m -3d>"


def test_capture_with_slots_and_undo(mx: Memex) -> None:
    before = _tree(mx.root)
    out = _apply(mx, "remind me on thursday at 7pm to book the piano tuner, high priority, "
                     "should take 20 minutes #music")
    assert out.startswith("Captured Book the piano tuner (gtd.org:")
    n = mx.query("heading:piano")[0]
    assert (n.todo, n.priority, n.scheduled) == ("TODO", "A", "<2026-12-03 Thu 19:00>")
    assert n.properties["Effort"] == "0:20" and "music" in n.local_tags
    mx.undo(5)
    assert _tree(mx.root) == before


def test_waiting_capture_goes_where_the_keyword_exists(mx: Memex) -> None:
    _apply(mx, "gave the ladder to my neighbour, waiting for him to return it")
    n = mx.query("heading:ladder")[0]
    assert n.todo == "WAITING" and n.file == "gtd.org"


def test_question_never_writes(mx: Memex) -> None:
    before = _tree(mx.root)
    for q in ("is the kitchen tap washer done?", "when is the rent due",
              "which tasks are tagged money", "show me what is waiting"):
        _reply(mx, q)
    assert _tree(mx.root) == before and not mx.store.journal()


def test_more_command_forms(mx: Memex) -> None:
    _apply(mx, "take the jujutsu one off my list")
    assert mx.query("heading:jujutsu")[0].todo == "CANCELLED"
    _apply(mx, "the kitchen tap washer moved to wednesday")
    assert mx.query("heading:washer")[0].scheduled == "<2026-12-02 Wed>"
    _apply(mx, "add 25 minutes effort to the restic report check")
    n = next(x for x in mx.query("heading:restic") if x.title.startswith("Check"))
    assert n.properties["Effort"] == "0:25"
    _apply(mx, "the croissants can wait, put them under cooking")
    assert "cooking" in mx.query("heading:croissants")[0].local_tags
    assert "already NEXT" in _reply(mx, "mark the dental cleaning as next")


def test_report_of_done_is_not_applied_to_finished_tasks(mx: Memex) -> None:
    # the only title sharing these words is already DONE: a new task, not an edit of it
    _p, a = _plan(mx, "the expense report for the offsite is due on the 9th")
    assert isinstance(a, Action) and a.args["steps"][0]["op"] == "capture"


def test_part_of_a_compound_names_the_entry(mx: Memex) -> None:
    r = resolve_ref(mx, "the spätzle recipe")
    assert r.node is not None and "Käsespätzle" in r.node.title


def test_a_state_change_looks_among_tasks_first(mx: Memex) -> None:
    before = _tree(mx.root)
    out = _reply(mx, "cancel the Lena task")  # the meeting notes with Lena are no rivals
    assert "chapter 7 outline" in out and "feedback" in out and "Call with Lena" not in out
    assert _tree(mx.root) == before


def test_subject_of_a_waiting_report_is_the_entry(mx: Memex) -> None:
    n_before = len(mx.query("todo:WAITING"))
    _apply(mx, "the error handling task is waiting on Marco's review")
    n = mx.query("heading:thiserror")[0]
    assert n.todo == "WAITING" and len(mx.query("todo:WAITING")) == n_before + 1
    assert not mx.query("heading:Marco")  # no duplicate captured


def test_next_action_report_and_priority_complement_change_the_entry(mx: Memex) -> None:
    _apply(mx, "the reader transaction fix is my next action now")
    assert mx.query("heading:\"reader open\"")[0].todo == "NEXT"
    _apply(mx, "make the tap washer one urgent")
    assert mx.query("heading:washer")[0].priority == "A"
    assert not mx.query("heading:urgent")


def test_new_waiting_entry_goes_to_the_waiting_for_list(mx: Memex) -> None:
    _apply(mx, "waiting for the plumber to send over his quote")
    n = mx.query("heading:plumber")[0]
    assert n.todo == "WAITING" and n.outline == ["Waiting for"]
    assert n.title == "The plumber to send over his quote"


def test_generic_head_noun_and_declared_cancel(mx: Memex) -> None:
    _apply(mx, "scrap the WebAssembly idea")
    assert mx.query("heading:WebAssembly")[0].todo == "CANCELLED"
    _apply(mx, "I'm not going to try jujutsu after all")
    assert mx.query("heading:Jujutsu")[0].todo == "CANCELLED"
    before = _tree(mx.root)
    assert "found no task" in _reply(mx, "cancel the piano lessons")
    assert _tree(mx.root) == before


def test_it_after_an_imperative_is_the_new_entry(mx: Memex) -> None:
    _apply(mx, "pick up stamps, tag it errand")
    n = mx.query("heading:stamps")[0]
    assert n.todo == "TODO" and "errand" in n.local_tags


def test_on_hold_waits_the_named_task(mx: Memex) -> None:
    _apply(mx, "put the failing disk replacement on hold")
    assert mx.query("heading:\"failing disk\"")[0].todo == "WAITING"
    assert not mx.query("heading:hold")


def test_a_different_number_names_another_item() -> None:
    """'item 17' never resolves to 'item 3': the numbers disagree, so the title is no match;
    a title with the same number, or with no number, still matches."""
    from opencortex.memory.nodes import Node
    from opencortex.skills.gtd_refs import score_nodes

    def node(key: str, title: str) -> Node:
        return Node(key=key, file="gtd.org", line=1, level=2, title=title, todo="TODO",
                    todo_type="todo")

    pool = [node("a", "Renew parking permit 3"), node("b", "Renew parking permit 17"),
            node("c", "Renew the library card")]
    assert [s.node.key for s in score_nodes(pool, "parking permit 17")][:1] == ["b"]
    assert "a" not in {s.node.key for s in score_nodes(pool, "parking permit 17")}
    assert "a" not in {s.node.key for s in score_nodes(pool, "renew permit 9")}
    assert {s.node.key for s in score_nodes(pool, "renew")} == {"a", "b", "c"}
