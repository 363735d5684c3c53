"""Router mechanisms for the classes a third held-out sample missed (wording written here):
hedges before a request, the generic "I" of a how-to question, a topicless follow-up
question, a tool's name as a label, a purpose clause, a due-date question as a list view,
a text carried after a spaced dash.  Pure string work: no model."""

from __future__ import annotations

import pytest

from opencortex.router.decompose import _PAYLOAD, _dash_carries, is_personal, purpose_head
from opencortex.router.rules import extract_args, is_follow_up, rule_target, strip_greeting


@pytest.mark.parametrize("text,body", [
    ("um, no rush, but could you perhaps file the gas bill", "could you file the gas bill"),
    ("oh, when you get a chance, list my errands", "list my errands"),
    ("look up the tram times", "look up the tram times"),  # "look" without its comma
    ("hi, erm, what did I write on kefir", "what did I write on kefir"),
])
def test_hedges_before_a_request_are_dropped(text: str, body: str) -> None:
    assert strip_greeting(text) == body


@pytest.mark.parametrize("text,personal", [
    ("how do I descale a kettle", False),
    ("when would I use a heap over a tree", False),
    ("what did I write about kefir", True),
    ("do I have a note on kefir", True),
    ("what's in my kefir note", True),
])
def test_the_how_to_i_is_not_the_persons_own(text: str, personal: bool) -> None:
    assert is_personal(text) is personal


@pytest.mark.parametrize("text,follow", [
    ("what did you say", True), ("which one was that?", True),
    ("how are you?", False), ("what did you say about kefir", False),
])
def test_a_topicless_question_follows_the_request_before_it(text: str, follow: bool) -> None:
    assert is_follow_up(text) is follow


def test_a_tools_name_as_label_names_the_target() -> None:
    assert rule_target("skill creator: one that tidies my bookmarks") == "skill-creator"
    assert rule_target("review: is this paragraph clear?") is None


def test_the_purpose_clause_is_not_read_as_the_request() -> None:
    assert purpose_head("make an extension so you can read my bank statements") == \
        "make an extension"
    assert purpose_head("so you can see") == "so you can see"


def test_a_question_about_what_is_due_is_a_list_view() -> None:
    assert extract_args("gtd", "anything due before the weekend?")["op"] == "agenda"
    assert extract_args("gtd", "the report is due friday")["op"] != "agenda"


@pytest.mark.parametrize("text,carries", [
    ("gist please — the boiler service moved to thursday and the plumber needs a key", True),
    ("buy milk -- urgent", False),
    ("I keep forgetting — please note that the boiler needs its yearly service", False),
])
def test_a_spaced_dash_carries_a_text_only_when_a_text_follows(text: str, carries: bool) -> None:
    m = _PAYLOAD.match(text)
    assert m is not None and bool(m.group("dash"))
    assert _dash_carries(m) is carries
