"""GTD mechanisms found missing on a second held-out sample (issue 26), on the example memex
(now = Mon 30 Nov 2026 10:00): a weekday repeated every n weeks, a question about a task's
effort (answered and routed, never written), repeat questions in other words, a longer phrase
that merely holds a short title's word is no reference to it, and an arrival names the
WAITING entry by one of its rarer words."""

from __future__ import annotations

import datetime as dt

from opencortex.memex import Memex
from opencortex.skills import gtd
from opencortex.skills.base import Action
from opencortex.skills.gtd_route import is_gtd_clause
from opencortex.skills.gtd_slots import parse_clause

from .conftest import NOW, ctx_for, run

SKILL = gtd.skill()


def _act(mx: Memex, text: str) -> Action:
    _, a = run(SKILL, ctx_for(mx, text, target="gtd"))
    assert isinstance(a, Action), a
    return a


def _steps(mx: Memex, text: str) -> list[dict]:
    a = _act(mx, text)
    assert a.tool == "memex.write", a
    return list(a.args["steps"])


def _reply(mx: Memex, text: str) -> str:
    a = _act(mx, text)
    assert a.tool == "reply", a
    return str(a.args["text"])


def test_a_weekday_every_other_or_every_nth_week() -> None:
    s = parse_clause("water the orchids every other friday", NOW)
    assert (s.title, s.repeater, s.scheduled) == ("Water the orchids", "+2w", dt.date(2026, 12, 4))
    s = parse_clause("each 3rd tuesday at 6pm pay the gardener", NOW)
    assert s.repeater == "+3w" and s.scheduled == dt.datetime(2026, 12, 1, 18, 0)
    assert s.title == "Pay the gardener"
    s = parse_clause("every two thursdays bake bread", NOW)
    assert s.repeater == "+2w" and s.scheduled == dt.date(2026, 12, 3)
    assert parse_clause("every thursday put the bins out", NOW).repeater == "+1w"


def test_how_long_a_task_takes_is_its_effort_read_never_written(mx: Memex) -> None:
    before = (mx.root / "gtd.org").read_bytes()
    out = _reply(mx, "how much time will the CI quarantine list update need?")
    assert "0:30" in out and "quarantine" in out
    out = _reply(mx, "how long does fixing the kitchen tap washer take?")
    assert "Fix the kitchen tap washer" in out and "no effort" in out
    assert (mx.root / "gtd.org").read_bytes() == before
    assert is_gtd_clause(mx, "how long will the quarantine list update take?", NOW)
    assert not is_gtd_clause(mx, "how long does bread dough take to rise?", NOW)


def test_repeats_asked_in_other_words_list_every_repeating_entry(mx: Memex) -> None:
    out = _reply(mx, "what keeps coming around again?")
    for title in ("Weekly review", "Water the plants", "Check restic backup report", "Pay rent",
                  "Anki reviews"):
        assert title in out
    assert "dental" not in out


def test_a_longer_phrase_holding_a_short_title_is_something_new(mx: Memex) -> None:
    steps = _steps(mx, "the bike shed rent receipt has to be filed by friday")
    assert steps[0]["op"] == "capture" and "receipt" in steps[0]["text"].lower()
    assert all("Pay rent" not in str(s.get("ref")) for s in steps)
    steps = _steps(mx, "the rent is due on the 3rd")  # the title's own words: that task
    assert steps[0]["op"] == "deadline" and "Pay rent" in steps[0]["ref"]


def test_an_arrival_names_the_waited_for_entry_by_a_rarer_word(mx: Memex) -> None:
    steps = _steps(mx, "the hetzner cash came through at last")
    assert steps == [{"op": "todo", "ref": "gtd.org::Waiting for/Refund from Hetzner for the "
                      "double-billed storage box", "state": "DONE"}]
    assert is_gtd_clause(mx, "the hetzner cash came through at last", NOW)
    steps = _steps(mx, "the parcel from my aunt arrived")  # nothing waited for is named
    assert [s["op"] for s in steps] == ["capture"]


def test_a_reminder_said_after_its_day_is_a_gtd_request() -> None:
    from opencortex.router.decompose import decompose

    for text in ("in a fortnight ping me to descale the coffee machine",
                 "on the last friday of the month, remind me to pay the cleaner"):
        assert [i.target for i in decompose(text)] == ["gtd"], text
    assert decompose("remind me what the wifi password is")[0].target != "gtd"


def test_a_labelled_capture_keeps_a_question_inside_its_text() -> None:
    from opencortex.router.decompose import decompose

    got = decompose("inbox: does the blue paint cover the stain? test a patch first")
    assert [(i.target, i.text) for i in got] == [
        ("gtd", "inbox: does the blue paint cover the stain? test a patch first")]
    got = decompose("capture: does the blue paint cover the stain? what's due today?")
    assert [i.target for i in got] == ["gtd", "gtd"] and len(got) == 2


def test_a_short_word_names_the_title_word_it_begins(mx: Memex) -> None:
    steps = _steps(mx, "scrap the jj trial for the book repo")
    assert steps == [{"op": "todo", "ref": "gtd.org::Someday / maybe/Try Jujutsu (jj) for the "
                      "book repository", "state": "CANCELLED"}]


def test_a_time_of_day_for_doing_a_deadline_only_task_schedules_it(mx: Memex) -> None:
    steps = _steps(mx, "friday at 4pm I'm going to the cheese shop for jonas's christmas present")
    assert [(s["op"], s["when"]) for s in steps] == [("schedule", "2026-12-04T16:00")]
    steps = _steps(mx, "move jonas's christmas present to the 18th")  # a move: the deadline
    assert [(s["op"], s["when"]) for s in steps] == [("deadline", "2026-12-18")]


def test_a_statement_naming_two_open_tasks_alike_asks_which(mx: Memex) -> None:
    out = _reply(mx, "the rustlings iterators will need about 90 minutes")
    assert "Which one" in out and "Rustlings iterators and traits" in out
    assert "Rustlings: finish the iterators exercises" in out


def test_advice_asked_about_a_named_task_shows_it_and_changes_nothing(mx: Memex) -> None:
    before = (mx.root / "gtd.org").read_bytes()
    out = _reply(mx, "should we drop the croissants task?")
    assert "Learn to make proper croissants" in out and "nothing was changed" in out
    assert (mx.root / "gtd.org").read_bytes() == before


def test_repeaters_said_with_a_weekday_a_quarter_or_a_morning() -> None:
    s = parse_clause("fortnightly on thursdays water the fern", NOW)
    assert (s.title, s.repeater, s.scheduled) == ("Water the fern", "+2w", dt.date(2026, 12, 3))
    s = parse_clause("every quarter check the smoke alarms", NOW)
    assert (s.title, s.repeater) == ("Check the smoke alarms", "+3m")
    s = parse_clause("each weekday morning at 5:45 feed the chickens", NOW)
    assert s.repeater == "+1d" and s.scheduled == dt.datetime(2026, 12, 1, 5, 45)
    assert parse_clause("weekly review the budget", NOW).repeater is None  # a title's word


def test_forget_the_task_cancels_it_and_dont_forget_captures(mx: Memex) -> None:
    steps = _steps(mx, "forget the webassembly build")
    assert steps == [{"op": "todo", "ref": "gtd.org::Someday / maybe/Compile tinysearch to "
                      "WebAssembly", "state": "CANCELLED"}]
    assert _steps(mx, "don't forget the stamps")[0]["op"] == "capture"


def test_how_long_the_weekly_review_takes_is_no_review(mx: Memex) -> None:
    out = _reply(mx, "how long does my weekly review usually take?")
    assert out.startswith("Weekly review:") and "Inbox" not in out


def test_a_negated_start_is_a_start_date_never_a_done_report(mx: Memex) -> None:
    steps = _steps(mx, "I won't get round to the kitchen tap washer until next week")
    assert steps == [{"op": "schedule", "ref": "gtd.org::Next actions/Fix the kitchen tap washer",
                      "when": "2026-12-07", "repeater": None}]
    steps = _steps(mx, "the cut-over weekend can't happen until the new year")
    assert [(s["op"], s["when"]) for s in steps] == [("schedule", "2027-01-01")]


def test_giving_up_on_a_task_cancels_it(mx: Memex) -> None:
    steps = _steps(mx, "I've given up on the croissants")
    assert steps == [{"op": "todo", "ref": "gtd.org::Someday / maybe/Learn to make proper "
                      "croissants", "state": "CANCELLED"}]


def test_two_titles_sharing_the_words_are_told_apart_by_meaning(mx: Memex) -> None:
    steps = _steps(mx, "the dentist booking is sorted")
    assert steps == [{"op": "todo", "ref": "gtd.org::Next actions/Book a dental cleaning",
                      "state": "DONE"}]
    assert "Which one" in _reply(mx, "mark the restic one as done")  # alike in meaning too


def test_a_weekday_counted_in_every_month_repeats_monthly() -> None:
    s = parse_clause("every second wednesday of the month water the bonsai", NOW)
    assert (s.title, s.repeater, s.scheduled) == ("Water the bonsai", "+1m", dt.date(2026, 12, 9))
    s = parse_clause("each month on the last day archive the receipts", NOW)
    assert (s.title, s.repeater, s.scheduled) == ("Archive the receipts", "+1m",
                                                  dt.date(2026, 11, 30))
    s = parse_clause("on the last friday of the month hand in the timesheet", NOW)
    assert s.repeater is None and s.scheduled == dt.date(2026, 12, 25)  # once: no repeater
    assert parse_clause("plan the offsite — est. 3h", NOW).title == "Plan the offsite"


def test_advice_about_a_named_open_task_routes_to_gtd(mx: Memex) -> None:
    assert is_gtd_clause(mx, "should I still compile tinysearch to webassembly?", NOW)
    assert not is_gtd_clause(mx, "should I use sqlite or postgres?", NOW)
