"""Issue 26's routing classes (wording written here): two verbs of one command are one shell
request; a notes question that goes on about dates or tasks stays one notes question; a
labelled capture routes by its label; a follow-up verb with an object of its own is a
request of its own; general-knowledge questions and small talk are chat, not GTD; a
question that names the notes is the notes'."""

from __future__ import annotations

import pytest

from opencortex.router import decompose
from opencortex.router.rules import is_follow_up, is_strong_joint


def targets(text: str) -> list[str]:
    return [i.target for i in decompose(text)]


@pytest.mark.parametrize("text", [
    "check the disk usage and show the biggest folders",
    "list the docker containers and stop the stale one",
    "grep the logs for timeouts and count them",
])
def test_two_verbs_of_one_command_are_one_shell_request(text: str) -> None:
    got = decompose(text)
    assert [i.target for i in got] == ["shell"] and got[0].text == text


def test_then_still_makes_two_requests() -> None:
    assert targets("check free memory, then list the docker images") == ["shell", "shell"]
    assert is_strong_joint(", then ", "list the docker images")
    assert not is_strong_joint(" and ", "show the biggest folders")


@pytest.mark.parametrize("text", [
    "what did I note down about the loft conversion, and what was still left to do?",
    "according to my notes, when is the visa renewal due and what papers does it need?",
    "in my notes from the offsite, what were the deadlines and who owns each task?",
])
def test_a_notes_question_about_dates_or_tasks_is_one_notes_request(text: str) -> None:
    assert targets(text) == ["notes"]


def test_a_notes_question_then_a_task_command_is_still_two() -> None:
    got = targets("what did I note about the loft conversion? also remind me to call the "
                  "builder on friday")
    assert got == ["notes", "gtd"]


@pytest.mark.parametrize("text", [
    "capture: look up train times to Porto",
    "todo - search the web for a cheaper broadband deal",
    "inbox: which wallpaper paste is mould resistant?",
])
def test_a_labelled_capture_routes_by_its_label(text: str) -> None:
    assert targets(text) == ["gtd"]


def test_a_follow_up_verb_with_its_own_object_is_its_own_request() -> None:
    assert not is_follow_up("tell me a joke")
    assert not is_follow_up("summarize my sourdough notes")
    assert is_follow_up("tell me the top story")
    assert targets("remind me to descale the kettle at 6 and tell me a joke") == ["gtd", "chat"]


def test_a_general_question_with_task_words_is_no_list_question() -> None:
    assert targets("when are tax returns usually due in the UK?") in (["chat"], ["web"])


@pytest.mark.parametrize("text", [
    "how many projects do people typically juggle at once?",
    "is it normal to have fifty open tasks?",
    "what have you been up to this afternoon?",
    "how's your week going?",
])
def test_general_questions_and_small_talk_are_chat(text: str) -> None:
    assert targets(text) == ["chat"]


@pytest.mark.parametrize("text", [
    "in my diary, what happened on the 14th?",
    "what did I write in my journal the week before the move?",
    "what deadlines did I record in my notes about the grant?",
])
def test_a_question_that_names_the_notes_is_the_notes(text: str) -> None:
    assert targets(text) == ["notes"]


@pytest.mark.parametrize("text", ["what's due today?", "is the tap washer fixed yet?",
                                  "what tasks are tagged errand?"])
def test_list_questions_stay_gtd(text: str) -> None:
    assert targets(text) == ["gtd"]


def test_a_request_about_a_text_instructions_result_is_its_own() -> None:
    """The carried text is data; a closing request that acts on the result is not."""
    got = decompose("translate into french: happy birthday, and remind me to post it to "
                    "Claire on friday")
    assert [i.target for i in got] == ["chat", "gtd"]
    assert got[1].text == "remind me to post it to Claire on friday"
    assert targets("proofread this: I will call the plumber tomorow and schedule the "
                   "repair") == ["chat"]
