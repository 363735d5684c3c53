"""Questions go to the notes first — but not a question about work done with the agent
(recall's), nor one about the machine's state (a command's), even when the notes match."""

from __future__ import annotations

import pytest

from opencortex.router import decompose


def _always(_: str) -> bool:
    return True  # the notes "answer" everything: only the exceptions keep their target


@pytest.mark.parametrize("text", [
    "which session was it where we tracked down the flaky upload test?",
    "you helped me rename the config keys a while ago, what did we call them?",
    "what did we end up deciding in our chat about the backup rotation?",
])
def test_past_work_with_the_agent_stays_recall(text: str) -> None:
    plain = [i.target for i in decompose(text)]
    assert plain == ["recollect"], plain  # the words alone read as recall
    assert [i.target for i in decompose(text, notes=_always)] == ["recollect"]


@pytest.mark.parametrize("text", ["how much free space is on this laptop?",
                                  "how full is the disk right now?"])
def test_a_question_about_the_machine_stays_shell(text: str) -> None:
    plain = [i.target for i in decompose(text)]
    if plain != ["shell"]:
        pytest.skip(f"the words alone read {plain}")
    assert [i.target for i in decompose(text, notes=_always)] == ["shell"]


def test_a_question_about_what_the_person_wrote_goes_to_the_notes() -> None:
    text = "what did I decide about the sourdough hydration?"
    assert [i.target for i in decompose(text, notes=_always)] == ["notes"]


@pytest.mark.parametrize("text", [
    "where do the weekly photo backups end up besides the external disk?",
    "which folder did I say the scans go into?",
])
def test_a_question_that_only_mentions_a_disk_or_folder_may_be_the_notes(text: str) -> None:
    """A machine word alone is not a question about the machine's state: with nothing
    asking how it is now, the notes that answer it get it."""
    assert [i.target for i in decompose(text, notes=_always)] == ["notes"]


def test_a_present_we_is_the_persons_household_not_past_work() -> None:
    """ "which electrician are we booking for the kitchen?" is about the person's life (their
    notes), not about work done with the agent."""
    text = "which electrician are we booking for the kitchen?"
    assert [i.target for i in decompose(text, notes=_always)] == ["notes"]


def test_org_text_pasted_after_a_question_is_what_it_asks_about() -> None:
    """Pasted Org after a question is data for the question, never a capture of its own;
    an order after a question is still its own request."""
    got = decompose("anything on friday? dentist <2027-01-15 Fri 10:00>")
    assert len(got) == 1 and "<2027-01-15 Fri 10:00>" in got[0].text
    got = decompose("anything on friday? remind me to call the dentist <2027-01-15 Fri>")
    assert len(got) == 2
