"""Reading a vague recall: activation, binding, the cue (whole, axes, time ranges) and the
person's next utterance (only an explicit act identifies)."""

from __future__ import annotations

import datetime as dt

import pytest

from opencortex.recall.answer import read_answer
from opencortex.recall.cue import activation, bind, read_cue, resolve_time

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("text", [
    "that session a few weeks ago where we fixed the flaky login test",
    "I vaguely remember we discussed a pricing idea with Sam",
    "there was something about retries in the uploader",
    "I can't remember where we put the migration plan",
    "what was that thing with the cache expiring",
])
def test_empty_intentions_activate(text: str) -> None:
    on, reason = activation(text)
    assert on and reason.startswith("empty intention")


@pytest.mark.parametrize("text", ["what's the weather in Paris", "add a task to buy milk",
                                  "last week", "summarise caching-strategies.org"])
def test_no_empty_intention_is_not_activated_with_a_reason(text: str) -> None:
    on, reason = activation(text)
    assert not on and reason


def test_invocation_activates_on_its_own() -> None:
    assert activation("the migration plan", invoked=True)[0]
    assert activation("/recollect the migration plan")[0]


def test_binding_priority_and_several_references() -> None:
    assert bind('/recollect "the pricing idea"', "earlier words") == ("the pricing idea", [])
    assert bind("/recollect", "the flaky login test fix") == ("the flaky login test fix", [])
    assert bind("/recollect", None) == (None, [])
    assert bind("the pricing idea from last spring — recall it")[0] == \
        "the pricing idea from last spring"
    first, noted = bind("that caching fix a few weeks ago; and also the thing with Sam "
                        "about pricing last spring")
    assert first == "that caching fix a few weeks ago"
    assert noted == ["the thing with Sam about pricing last spring"]


def test_cue_axes() -> None:
    c = read_cue(["the pricing idea I had with Sam last spring in pricing/tiers.md"], NOW)
    kinds = {(a.kind, a.value) for a in c.axes}
    assert ("person", "Sam") in kinds and ("artifact", "pricing/tiers.md") in kinds
    assert c.time is not None and c.time.start < dt.datetime(2026, 3, 2, tzinfo=dt.UTC)
    assert c.time.end >= dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    assert "pricing" in c.terms and "idea" in c.terms
    ids = read_cue(["the fix for JIRA-142 in cache_ttl"], NOW)
    assert {"JIRA-142", "cache_ttl"} <= {a.value for a in ids.axes if a.kind == "identifier"}


@pytest.mark.parametrize(("phrase", "lo", "hi"), [
    ("a few weeks ago", dt.datetime(2026, 10, 20, tzinfo=dt.UTC),
     dt.datetime(2026, 11, 20, tzinfo=dt.UTC)),
    ("yesterday", dt.datetime(2026, 11, 29, 1, tzinfo=dt.UTC),
     dt.datetime(2026, 11, 29, 23, tzinfo=dt.UTC)),
    ("last month", dt.datetime(2026, 10, 2, tzinfo=dt.UTC),
     dt.datetime(2026, 10, 30, tzinfo=dt.UTC)),
    ("in March", dt.datetime(2026, 3, 2, tzinfo=dt.UTC), dt.datetime(2026, 3, 30,
                                                                     tzinfo=dt.UTC)),
    ("last winter", dt.datetime(2025, 12, 15, tzinfo=dt.UTC),
     dt.datetime(2026, 2, 15, tzinfo=dt.UTC)),
])
def test_time_expressions_cover_what_people_mean(phrase: str, lo: dt.datetime,
                                                 hi: dt.datetime) -> None:
    r = resolve_time(phrase, NOW)
    assert r is not None and r.start <= lo and r.end >= hi, (phrase, r)


def test_the_cue_is_read_afresh_and_a_correction_changes_the_whole() -> None:
    first = read_cue(["the session where we fixed the flaky login test"], NOW)
    assert first.whole == "session"
    again = read_cue(["the session where we fixed the flaky login test",
                      "no, the whole line of work on login, not the dashboard"], NOW)
    assert again.whole == "line" and "dashboard" in again.excluded
    assert "dashboard" not in again.terms and "login" in again.terms
    later = read_cue(["the pricing idea a few weeks ago", "actually it was last spring"], NOW)
    assert later.time is not None and later.time.phrase == "last spring"


@pytest.mark.parametrize(("text", "presented", "offered", "expected"), [
    ("yes, that one", True, False, "identified"),
    ("That's it!", True, False, "identified"),
    ("great, resume it", True, False, "identified"),
    ("maybe that one?", True, False, "cue"),
    ("yes, but it was earlier than that", True, False, "cue"),
    ("no, not that one — the one with Sam", True, False, "cue"),
    ("hmm, interesting", True, False, "cue"),
    ("if that's it, what did we decide?", True, False, "cue"),
    ("yes", False, False, "cue"),  # nothing presented: nothing to identify
    ("never mind", True, False, "stopped"),
    ("forget it", False, True, "stopped"),
    ("no", False, True, "declined"),
    ("yes, go ahead", False, True, "admitted"),
    ("search older history", False, True, "admitted"),
    ("", True, False, "silent"),
    (None, True, True, "silent"),
])
def test_reading_the_next_utterance(text, presented, offered, expected) -> None:
    assert read_answer(text, presented=presented, offered=offered) == expected
