"""GTD slot extraction against a fixed now (Mon 30 Nov 2026 10:00): dates, times,
SCHEDULED vs DEADLINE, repeaters, priority, tags, effort, states, notes, shifts, and the
title left once the slot words are gone."""

from __future__ import annotations

import datetime as dt

import pytest

from opencortex.skills.gtd_slots import parse_clause, resolve_day

from .conftest import NOW

D = dt.date
T = dt.datetime


def p(text: str, **kw: object):
    return parse_clause(text, NOW, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("phrase", "want"), [
    ("tomorrow", D(2026, 12, 1)),
    ("thursday", D(2026, 12, 3)),
    ("monday", D(2026, 12, 7)),  # today is Monday: the next one
    ("next wednesday", D(2026, 12, 2)),
    ("in three days", D(2026, 12, 3)),
    ("in 2 weeks", D(2026, 12, 14)),
    ("in a month", D(2026, 12, 30)),
    ("april 9", D(2027, 4, 9)),
    ("9th of april", D(2027, 4, 9)),
    ("dec 24", D(2026, 12, 24)),
    ("end of the month", D(2026, 11, 30)),
    ("end of february", D(2027, 2, 28)),
    ("next week", D(2026, 12, 7)),
    ("tonight", D(2026, 11, 30)),
    ("2027-01-05", D(2027, 1, 5)),
    ("12/18", D(2026, 12, 18)),  # the long tail goes through dateparser
    ("this weekend", D(2026, 12, 5)),
])
def test_day_phrases(phrase: str, want: dt.date) -> None:
    assert resolve_day(phrase, NOW) == want


def test_week_start_moves_next_week() -> None:
    assert resolve_day("next week", NOW, week_start=6) == D(2026, 12, 6)  # a Sunday start
    from types import SimpleNamespace

    from opencortex.skills.gtd_plan import week_start_of

    assert week_start_of(SimpleNamespace(data={"gtd": {"week_start": "Sunday"}})) == 6
    assert week_start_of(SimpleNamespace(data={})) == 0


@pytest.mark.parametrize(("text", "sched", "title"), [
    ("ping me thursday at 2pm to order printer toner", T(2026, 12, 3, 14, 0),
     "Order printer toner"),
    ("remind me tomorrow at quarter to eight in the morning to defrost the freezer",
     T(2026, 12, 1, 7, 45), "Defrost the freezer"),
    ("remind me to water the fern on friday at 6:15 pm", T(2026, 12, 4, 18, 15),
     "Water the fern"),
    ("in three days remind me to return the library books", D(2026, 12, 3),
     "Return the library books"),
    ("renew the parking permit, wednesday 8 in the evening", T(2026, 12, 2, 20, 0),
     "Renew the parking permit"),
    ("call the bank at noon", T(2026, 11, 30, 12, 0), "Call the bank"),
])
def test_dates_and_times_scheduled(text: str, sched: object, title: str) -> None:
    s = p(text)
    assert s.scheduled == sched and s.deadline is None
    assert s.title == title


@pytest.mark.parametrize(("text", "deadline", "title"), [
    ("the visa form is due on april 2", D(2027, 4, 2), "The visa form"),
    ("finish the slides by thursday", D(2026, 12, 3), "Finish the slides"),
    ("file the insurance claim before dec 20", D(2026, 12, 20), "File the insurance claim"),
    ("deadline for the essay is end of the month", D(2026, 11, 30), "Essay"),
])
def test_deadline_cues(text: str, deadline: dt.date, title: str) -> None:
    s = p(text)
    assert s.deadline == deadline and s.scheduled is None
    assert title.lower() in s.title.lower()


def test_scheduled_and_deadline_together() -> None:
    s = p("begin the tax return on saturday, it has to be in by january 31")
    assert s.scheduled == D(2026, 12, 5) and s.deadline == D(2027, 1, 31)


@pytest.mark.parametrize(("text", "rep", "sched"), [
    ("stretch every morning", "+1d", D(2026, 11, 30)),
    ("take the bins out every thursday", "+1w", D(2026, 12, 3)),
    ("every other week clean the fridge", "+2w", D(2026, 11, 30)),
    ("change the water filter every 3 months", "+3m", D(2026, 11, 30)),
    ("pay the gym on the 15th of every month", "+1m", D(2026, 12, 15)),
    ("back up the laptop weekly", "+1w", D(2026, 11, 30)),
    ("starting wednesday, floss daily", "+1d", D(2026, 12, 2)),
])
def test_repeaters(text: str, rep: str, sched: dt.date) -> None:
    s = p(text)
    assert s.repeater == rep and s.scheduled == sched


def test_adjective_weekly_is_not_a_repeater() -> None:
    s = p("prepare the weekly report")
    assert s.repeater is None and s.title == "Prepare the weekly report"


@pytest.mark.parametrize(("text", "prio"), [
    ("renew passport, high priority", "A"),
    ("low priority: sort the photo albums", "C"),
    ("sort the cables [#B]", "B"),
    ("make the landlord call priority a", "A"),
    ("urgent: email the school", "A"),
    ("no priority on the garage task", "none"),
])
def test_priority(text: str, prio: str) -> None:
    assert p(text).priority == prio


def test_priority_words_leave_the_title() -> None:
    assert p("renew passport, high priority").title == "Renew passport"


def test_tags_from_hash_at_and_words() -> None:
    assert p("buy stamps #errand @town").tags == ["errand", "@town"]
    assert p("tag the boiler service as home and money").tags == ["home", "money"]
    assert p("put a finance tag on the pension letter").tags == ["finance"]
    s = p("pick up dry cleaning, it's an errand", known_tags=frozenset({"errand"}))
    assert s.tags == ["errand"] and s.title == "Pick up dry cleaning"
    # a word that is not one of the memex's tags stays in the title
    s = p("pick up dry cleaning, it's an errand", known_tags=frozenset({"work"}))
    assert s.tags == [] and "errand" in s.title


@pytest.mark.parametrize(("text", "effort"), [
    ("write the newsletter, should take 45 minutes", "0:45"),
    ("the garden fence will take me about two hours", "2:00"),
    ("grading takes half an hour", "0:30"),
    ("tidy the shed, will take an hour and a half", "1:30"),
    ("effort 1:15 for the budget review", "1:15"),
    ("it'll take 90 min to assemble the desk", "1:30"),
])
def test_effort(text: str, effort: str) -> None:
    assert p(text).effort == effort


def test_in_minutes_is_a_time_not_an_effort() -> None:
    s = p("remind me in 2 weeks to check the tyres")
    assert s.effort is None and s.scheduled == D(2026, 12, 14)


@pytest.mark.parametrize(("text", "state"), [
    ("the boiler service is done", "DONE"),
    ("finished the tax return", "DONE"),
    ("mark the dentist one as complete", "DONE"),
    ("cancel the gym membership task", "CANCELLED"),
    ("forget about the garage sale", "CANCELLED"),
    ("I'm waiting on the plumber for a quote", "WAITING"),
    ("mark the invoice chase as waiting", "WAITING"),
    ("reopen the printer ticket", "TODO"),
    ("make the bike repair a next action", "NEXT"),
])
def test_states(text: str, state: str) -> None:
    assert p(text).state == state


def test_past_tense_report() -> None:
    assert p("vacuumed the stairs").past
    assert not p("vacuum the stairs").past


def test_note_and_shift() -> None:
    s = p("add a note to the roof repair: the quote came in at 900")
    assert s.note == "the quote came in at 900" and s.ref_text == "the roof repair"
    s = p("push the car service back by two weeks")
    assert s.shift == (2, "w") and s.ref_verb == "push"
    assert p("bring the dentist forward by 3 days").shift == (-3, "d")


def test_capture_wrappers_leave_the_title() -> None:
    assert p("don't let me forget to defrost the freezer").title == "Defrost the freezer"
    assert p("put oat milk on my list").title == "Oat milk"
    assert p("jot down: fix the squeaky door").title == "Fix the squeaky door"
    assert p("I need to phone the council").title == "Phone the council"


def test_any_text_parses_without_error() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from([
        *"abc xyz 0123456789:/-,.'#@?", " tomorrow", " at ", " every ", " by ", " due ",
        " pm", " minutes", " priority", " tag ", " done", " the ", " on ", " of the month",
        " half past "])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(alphabet, max_size=40).map("".join))
    def check(text: str) -> None:
        s = p(text)
        assert isinstance(s.title, str)
        if s.effort:
            assert int(s.effort.split(":")[1]) < 60

    check()


def test_deferral_keeps_by_as_deadline() -> None:
    s = p("the gutters need to be cleaned out by friday")
    assert s.deadline == D(2026, 12, 4) and s.scheduled is None
    s = p("the boiler check got moved over, it has to happen by friday")
    assert s.deadline == D(2026, 12, 4) and s.scheduled is None
    s = p("snooze the boiler check until friday")
    assert s.scheduled == D(2026, 12, 4) and s.deadline is None


@pytest.mark.parametrize(("phrase", "want"), [
    ("a week from monday", D(2026, 12, 14)),  # the coming Monday (7 Dec) + a week
    ("two days after the 14th", D(2026, 12, 16)),
    ("friday week", D(2026, 12, 11)),
    ("a week from tomorrow", D(2026, 12, 8)),
    ("in a week from now", D(2026, 12, 7)),
])
def test_days_counted_from_another_day(phrase: str, want: dt.date) -> None:
    assert resolve_day(phrase, NOW) == want


def test_offset_day_leaves_the_title() -> None:
    s = p("remind me a week from monday to renew the parking permit")
    assert s.scheduled == D(2026, 12, 14) and s.title == "Renew the parking permit"


@pytest.mark.parametrize(("text", "effort", "title"), [
    ("descale the kettle, twenty minutes", "0:20", "Descale the kettle"),
    ("fix the garden gate (~2h)", "2:00", "Fix the garden gate"),
    ("oil the hinges, a ten-minute job", "0:10", "Oil the hinges"),
    ("tidy the shed - about an hour", "1:00", "Tidy the shed"),
])
def test_a_duration_said_alone_is_the_effort(text: str, effort: str, title: str) -> None:
    s = p(text)
    assert (s.effort, s.title) == (effort, title)


def test_in_a_duration_is_still_no_effort() -> None:
    assert p("remind me in twenty minutes to stir the soup").effort is None


@pytest.mark.parametrize(("text", "prio"), [
    ("make the tap washer one urgent", "A"),
    ("mark the tax return as important", "A"),
    ("set the photo album sorting to low", "C"),
    ("the roof leak is urgent", "A"),
])
def test_priority_as_the_verbs_complement(text: str, prio: str) -> None:
    assert p(text).priority == prio


def test_high_without_a_verb_acting_on_an_item_is_no_priority() -> None:
    assert p("put the shelf up high").priority is None


def test_leading_add_captures_unless_it_names_a_slot() -> None:
    s = p("add draft the offsite agenda and tag it work")
    assert s.capture_cue and s.title == "Draft the offsite agenda" and s.tags == ["work"]
    assert not p("add an hour to the report estimate").capture_cue
    assert p("add a note to the tap task: washer is 1/2 inch").note == "washer is 1/2 inch"


def test_put_under_a_context_files_a_new_entry() -> None:
    s = p("put bleed the radiators under home", known_tags=frozenset({"home"}))
    assert s.capture_cue and s.title == "Bleed the radiators" and s.tags == ["home"]
    s = p("the croissants can wait, put them under cooking", known_tags=frozenset({"cooking"}))
    assert not s.capture_cue and s.tags == ["cooking"]


def test_waiting_subject_and_waiting_titles() -> None:
    s = p("the error handling task is waiting on Marco's review")
    assert s.state == "WAITING" and s.subject == "the error handling task"
    assert p("waiting for the plumber to send his quote").title == "The plumber to send his quote"
    assert p("waiting on Sam for the logs").title == "Sam: the logs"


def test_next_action_said_with_a_copula() -> None:
    assert p("the reader fix is my next action now").state == "NEXT"
    assert p("the plumber visit is up next").state == "NEXT"
    assert p("the dentist is next tuesday").state is None


def test_deadline_for_x_leaves_x_as_the_title() -> None:
    s = p("deadline for the grant letter is jan 9, note it down")
    assert s.deadline == D(2027, 1, 9) and s.title == "The grant letter"


def test_place_words_map_to_the_memex_tags() -> None:
    from opencortex.skills.gtd_slots import place_tag

    assert place_tag("house", {"home", "work"}) == "home"
    assert place_tag("office", {"work"}) == "work"
    assert place_tag("house", {"work"}) is None


def test_every_weekday_repeats_daily_from_a_working_day() -> None:
    s = p("every weekday at 7:30 do the stretches")
    assert s.repeater == "+1d" and s.title == "Do the stretches"
    assert s.scheduled == T(2026, 12, 1, 7, 30)  # 7:30 is past on Mon 30 Nov 10:00
    sat = parse_clause("every weekday water the seedlings", T(2026, 12, 5, 9, 0))
    assert sat.scheduled == D(2026, 12, 7) and sat.repeater == "+1d"


def test_title_loses_the_verb_a_deadline_phrase_leaves() -> None:
    s = p("the lease renewal has a deadline of january 31")
    assert s.title == "The lease renewal" and s.deadline == D(2027, 1, 31)
    s = p("clear out the garage, should be a 3 hour job")
    assert s.title == "Clear out the garage" and s.effort == "3:00"


def test_declaring_not_doing_it_cancels() -> None:
    assert p("I'm not going to try jujutsu after all").state == "CANCELLED"
    assert p("we won't need the spare keys anymore").state == "CANCELLED"
    assert p("I'm not going to make the dentist on friday").state is None


@pytest.mark.parametrize(("text", "rep", "sched"), [
    ("every first of the month pay the gardener", "+1m", D(2026, 12, 1)),
    ("every 2nd week clean the gutters", "+2w", D(2026, 11, 30)),
    ("every third day turn the compost", "+3d", D(2026, 11, 30)),
])
def test_ordinal_repeaters(text: str, rep: str, sched: dt.date) -> None:
    s = p(text)
    assert (s.repeater, s.scheduled) == (rep, sched)
    assert "every" not in s.title.lower()


def test_in_an_hour_is_a_time_from_now() -> None:
    s = p("remind me in an hour to take the bread out")
    assert s.scheduled == T(2026, 11, 30, 11, 0) and s.title == "Take the bread out"
    assert p("ping me in 20 minutes to stir the soup").scheduled == T(2026, 11, 30, 10, 20)


def test_early_late_next_week_and_first_thing() -> None:
    s = p("call the plumber early next week")
    assert s.scheduled == D(2026, 12, 7) and s.title == "Call the plumber"
    assert resolve_day("late next week", NOW) == D(2026, 12, 11)
    s = p("remind me first thing tomorrow to email Ana")
    assert s.scheduled == D(2026, 12, 1) and s.title == "Email Ana"


def test_obligation_words_leave_the_title() -> None:
    s = p("the report for Priya has to be in by thursday")
    assert s.title == "The report for Priya" and s.deadline == D(2026, 12, 3)


def test_on_hold_note_with_that_and_arrival_reference() -> None:
    s = p("put the failing disk replacement on hold")
    assert s.state == "WAITING" and "hold" not in s.ref_text
    s = p("write a note on the Tailscale task that the phone tag works")
    assert s.note == "the phone tag works" and s.ref_text == "the Tailscale task"
    s = p("the refund from Hetzner came through")
    assert s.arrived and s.ref_text == "The refund from Hetzner"


# -- the date grammar composes (issue 26): phrases built from other phrases ----------------
@pytest.mark.parametrize(("phrase", "want"), [
    ("the second friday of next month", D(2026, 12, 11)),
    ("first monday of january", D(2027, 1, 4)),
    ("the last thursday of the month", D(2026, 12, 31)),  # November's is gone: December's
    ("the last working day of next month", D(2026, 12, 31)),
    ("the third wednesday in february", D(2027, 2, 17)),
    ("the 20th of next month", D(2026, 12, 20)),
    ("the first of next month", D(2026, 12, 1)),
    ("next month on the third tuesday", D(2026, 12, 15)),
    ("the week after next", D(2026, 12, 14)),
    ("friday next week", D(2026, 12, 11)),
    ("next week on tuesday", D(2026, 12, 8)),
    ("the week after next on thursday", D(2026, 12, 17)),
    ("thursday after next", D(2026, 12, 10)),
    ("a fortnight from friday", D(2026, 12, 18)),
    ("two weeks from next monday", D(2026, 12, 21)),
    ("two days before the 20th", D(2026, 12, 18)),
    ("the day after the first monday of january", D(2027, 1, 5)),
    ("a week tomorrow", D(2026, 12, 8)),
    ("in three weeks' time", D(2026, 12, 21)),
    ("ten days from now", D(2026, 12, 10)),
    ("friday fortnight", D(2026, 12, 18)),
    ("christmas eve", D(2026, 12, 24)),
    ("easter", D(2027, 3, 28)),
    ("thanksgiving", D(2027, 11, 25)),
])
def test_composed_day_phrases(phrase: str, want: dt.date) -> None:
    assert resolve_day(phrase, NOW) == want


def test_ordinal_weekdays_land_on_that_weekday_every_month() -> None:
    """"the second <weekday> of <month>" is always that weekday, the 8th to the 14th."""
    from opencortex.skills.gtd_dates import WD

    for month in ("january", "april", "june", "september"):
        for i, wd in enumerate(WD):
            d = resolve_day(f"the second {wd} of {month}", NOW)
            assert d is not None and d.weekday() == i and 8 <= d.day <= 14, (wd, month, d)
            last = resolve_day(f"the last {wd} of {month}", NOW)
            assert last is not None and last.weekday() == i and \
                (last + dt.timedelta(days=7)).month != last.month


def test_the_week_start_setting_moves_named_weeks() -> None:
    sunday = 6
    assert resolve_day("the week after next", NOW, sunday) == D(2026, 12, 13)
    assert resolve_day("sunday next week", NOW) == D(2026, 12, 13)
    assert resolve_day("sunday next week", NOW, sunday) == D(2026, 12, 6)
    assert resolve_day("friday next week", NOW, sunday) == D(2026, 12, 11)


def test_week_start_is_a_checked_setting() -> None:
    from opencortex.config import ConfigError, GtdSettings, Settings, check_config_names

    check_config_names({"gtd": {"week_start": "sunday"}})  # a known section now
    s = Settings()
    s.apply_config({"gtd": {"week_start": "Sunday"}}, env={})
    assert s.gtd.week_start == 6
    assert GtdSettings.parse({}, {"OPENCORTEX_WEEK_START": "sat"}).week_start == 5
    with pytest.raises(ConfigError, match="week_start"):
        GtdSettings.parse({"week_start": "someday"}, {})


def test_dates_in_clauses_compose_and_leave_the_title() -> None:
    s = p("remind me to pay the nursery fees on the second friday of next month")
    assert s.scheduled == D(2026, 12, 11) and s.title == "Pay the nursery fees"
    s = p("the week after next renew my library card")
    assert s.scheduled == D(2026, 12, 14) and s.title == "Renew my library card"
    s = p("nudge me a fortnight from friday to reseed the lawn")
    assert s.scheduled == D(2026, 12, 18) and s.title == "Reseed the lawn"


def test_a_holiday_needs_a_cue_and_no_noun_after_it() -> None:
    s = p("wrap the gifts before christmas")
    assert s.deadline == D(2026, 12, 25) and s.title == "Wrap the gifts"
    s = p("order the christmas hamper")
    assert s.deadline is None and s.scheduled is None and "christmas" in s.title.lower()


@pytest.mark.parametrize(("text", "effort", "title"), [
    ("clean the oven, maybe forty minutes", "0:40", "Clean the oven"),
    ("sort the garage, probably two hours", "2:00", "Sort the garage"),
    ("repaint the fence ~3h", "3:00", "Repaint the fence"),
    ("write the report, 2 hours-ish", "2:00", "Write the report"),
    ("call the bank, half an hour give or take", "0:30", "Call the bank"),
    ("defrost the freezer, it'll probably take about twenty five minutes", "0:25",
     "Defrost the freezer"),
    ("service the bike - a couple of hours tops", "2:00", "Service the bike"),
    ("update the wiki (~45 min) tomorrow", "0:45", "Update the wiki"),
    ("tidy the shed, roughly an hour or so, on saturday", "1:00", "Tidy the shed"),
])
def test_hedged_efforts_keep_the_estimate(text: str, effort: str, title: str) -> None:
    s = p(text)
    assert (s.effort, s.title) == (effort, title)


def test_a_negated_before_is_the_earliest_start() -> None:
    s = p("the gutter cleaning can't happen before the 12th")
    assert s.scheduled == D(2026, 12, 12) and s.deadline is None
    s = p("the attic job won't start until january")
    assert s.scheduled == D(2027, 1, 1) and s.deadline is None
    assert p("the gutter cleaning has to happen before the 12th").deadline == D(2026, 12, 12)


def test_statement_phrases_name_the_subject_and_what_time_is_for() -> None:
    s = p("the gutter cleaning can't happen before the 12th")
    assert [r.lower() for r in s.refs] == ["the gutter cleaning"]
    s = p("block out saturday morning for the gutter cleaning")
    assert s.refs[0].lower() == "the gutter cleaning" and s.title == "The gutter cleaning"
    assert p("the birthday card has to be posted by friday").obliged


def test_stacked_day_phrases_are_bounded() -> None:
    """Anchors resolve recursively: a long stack ("early early …", "day after day after …")
    is no date and no RecursionError (it crashed the old "early …" rule too)."""
    for unit in ("early ", "day after ", "the day before ", "a week from "):
        resolve_day(unit * 2000 + "friday", NOW)  # returns: no RecursionError
        p(unit * 2000)  # the slot parser reads it without error
    assert resolve_day("two days before the day after christmas", NOW) == D(2026, 12, 24)


def test_a_day_zero_of_a_month_is_no_day() -> None:
    """Found by the fuzz test above: "0 of the month" raised ValueError (day 0)."""
    from opencortex.skills.gtd_dates import resolve_day

    now = dt.datetime(2026, 11, 30, 10, 0)
    got = resolve_day("0 of the month", now, 0)  # no day 0: another reading or none
    assert got is None or got.day != 0
    assert resolve_day("the 20th of next month", now, 0) == dt.date(2026, 12, 20)
    assert resolve_day("the 0th", now, 0) is None  # a ValueError before (day 0)
    for phrase in ("a week before the 0th", "two days before the 00th"):
        resolve_day(phrase, now, 0)  # a ValueError before; now a reading or none
