"""Issue 26, second sample (wording written here): a pasted text that runs over several
sentences after its instruction is data, not requests; a request after the text that speaks
to the agent again ("then …", "… send it to …") is kept; a question asked beside a request
is a request of its own, not context; one conversational turn split at a comma is one chat;
a question about a generic "you" is knowledge, not the task list."""

from __future__ import annotations

import pytest

from opencortex.router import decompose


def targets(text: str) -> list[str]:
    return [i.target for i in decompose(text)]


@pytest.mark.parametrize("text", [
    "condense this: The landlord will inspect the flat on Friday. Remind all tenants to clear "
    "the hallway and run the dishwasher before noon.",
    "could you check the spelling in this email? Hi Marta, we will schedule the audit for "
    "next week. Please run the export tonite and add the numbers to the report.",
    "rewrite the following more warmly. Deadline for the forms is tomorrow. Search the "
    "shared drive and file them by 5pm.",
])
def test_a_pasted_text_over_several_sentences_routes_by_its_instruction(text: str) -> None:
    got = decompose(text)
    assert [i.target for i in got] == ["chat"]
    assert got[0].text.endswith(text.split(". ")[-1])  # the whole text is carried


def test_a_request_after_the_text_that_speaks_to_the_agent_again_is_kept() -> None:
    text = ("put this into spanish: The bakery opens at seven. Bring cash. "
            "Then remind me to send it to Lucia on monday.")
    assert targets(text) == ["chat", "gtd"]


def test_a_statement_before_a_request_carries_no_text() -> None:
    """Only an instruction carries a text: "I like this." is a remark, the request after it
    is routed as before."""
    assert targets("I really like this. Remind me to order two more on friday.") == ["gtd"]


def test_a_question_beside_a_request_is_asked_not_context() -> None:
    assert targets("book the car service for thursday in my todos. "
                   "btw, why is the ocean salty?") == ["gtd", "chat"]


def test_one_conversational_turn_split_at_a_comma_is_one_chat() -> None:
    assert targets("what's a closure in javascript, keep it short") == ["chat"]


@pytest.mark.parametrize("text", [
    "what happens if you pay a parking fine after the deadline?",
    "how much is the late fee when you return a rental car after it's due?",
])
def test_a_question_about_a_generic_you_is_knowledge_not_the_list(text: str) -> None:
    assert targets(text) == ["chat"]
