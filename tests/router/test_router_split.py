"""Router splitter and syntax rules that need no model: command-line shape, place clauses
("ssh into X and …"), source directives and bare URLs after a question.  Pure string work,
so these run without loading MiniLM or training the classifier."""

from __future__ import annotations

import pytest

from opencortex.router import classifier
from opencortex.router.decompose import _join_directives, is_source_directive
from opencortex.router.rules import (
    is_command_line,
    is_place_clause,
    rule_target,
    split_candidates,
    split_clauses,
)


@pytest.mark.parametrize("clause", [
    "lsblk",
    "uptime please",
    "tailscale status",
    "restic snapshots",
    "kubectl get pods -n kube-system",
    "docker compose ps",
    "show me nmcli device status",
    "then give me the output of smartctl -a /dev/sda",
    "free -h",
    "find . -name '*.log'",
])
def test_command_line_shape_is_shell(clause):
    assert is_command_line(clause), clause
    assert rule_target(clause) == "shell"


@pytest.mark.parametrize("clause", [
    "find my notes on salt",  # an English-word program needs a flag or a path
    "make tea",
    "sort out the garage",
    "head to the shop",
    "free",
    "git branching strategies",  # a known program and topic words: no subcommand
    "docker networking tips",
    "docker is annoying",  # a sentence about the program
    "python",  # a bare language name is as likely a topic
    "ssh into the nas and pull the logs",
    "restic snapshots for the photos folder and the music folder please",  # too long
])
def test_words_that_only_mention_a_program_are_no_command_line(clause):
    assert not is_command_line(clause), clause


def test_an_unknown_path_program_needs_a_subcommand_or_flag(monkeypatch):
    from opencortex.router import rules

    monkeypatch.setattr(rules, "_on_path", lambda name: name == "frobctl")
    assert is_command_line("frobctl status")
    assert is_command_line("frobctl --verbose")
    assert not is_command_line("frobctl widgets")
    assert not is_command_line("quuxctl status")  # not on PATH, not known


@pytest.mark.parametrize("clause", [
    "ssh into the backup box", "log into the build server", "cd into the repo",
    "connect to the pi", "switch to the docs folder", "mosh to media-host",
])
def test_place_clause(clause):
    assert is_place_clause(clause)


@pytest.mark.parametrize("clause", [
    "ssh into the nas and restart the print spooler",
    "cd into the repo and run the tests",
    "log into the build box and check the disk usage",
])
def test_a_place_clause_and_what_to_do_there_is_one_clause(clause):
    assert split_clauses(clause) == [clause]
    assert split_candidates(clause) == []


def test_a_request_before_a_place_is_still_split():
    assert split_clauses("find my notes on backups and then ssh into the nas") == [
        "find my notes on backups", "ssh into the nas"]


@pytest.mark.parametrize("clause,previous,expected", [
    ("check the arch wiki page", "how do I enable wayland in kde?", True),
    ("read the official release notes", "what's new in the latest kernel?", True),
    ("see their FAQ page", "does the museum allow strollers?", True),
    ("https://example.org/post", "what is this article about?", True),
    ("https://example.org/post", "summarise this", True),  # a bare URL: the page meant
    ("check the official docs", "find my notes on rust", False),  # two requests
    ("add a todo to read the docs", "how do I configure nginx?", False),
    ("check the disk usage", "is the server full?", False),  # no source named
])
def test_source_directive(clause, previous, expected):
    assert is_source_directive(clause, previous) is expected


def test_a_source_directive_joins_the_question_and_names_its_tool():
    clauses, sents, forced = _join_directives(
        ["how do I enable wayland in kde?", "check the arch wiki page", "remind me to reboot"],
        [0, 1, 2])
    assert clauses == ["how do I enable wayland in kde? check the arch wiki page",
                       "remind me to reboot"]
    assert sents == [0, 2]
    assert forced == {0: "check the arch wiki page"}


def test_every_training_file_is_in_the_cache_key(tmp_path):
    """A new training file changes the classifier: its hash must be in the cache key."""
    names = {s.path.name for s in classifier.SOURCES}
    assert {"train_multi.jsonl", "train_hand3.jsonl"} <= names
    on_disk = {p.name for p in classifier.DATA_DIR.glob("*.jsonl")}
    assert on_disk == names


def test_text_carried_by_an_instruction_does_not_route_it():
    """The words of a text to translate or rewrite are data: "send me the file" inside it is
    no capture; an instruction that is itself a request ("remind me: …") or names a URL keeps
    its routing."""
    from opencortex.router import decompose

    for text in ("make this sound less harsh: remind the team the deadline is friday",
                 "proofread this: I will call the plumber tomorow and schedule the repair",
                 "turn this into French: add milk to the shopping list"):
        assert [i.target for i in decompose(text)] == ["chat"], text
    assert [i.target for i in decompose("capture this: phone the garage")] == ["gtd"]
    # an apostrophe inside a word opens no quote: the quoted phrase is still found
    assert [i.target for i in decompose("what's the Dutch for 'to-do list'")] == ["chat"]
    assert [i.target for i in decompose("I'm adding 'oat milk' to my shopping list")] == ["gtd"]
    assert [i.target for i in decompose("summarise this for me: https://example.org/post")] == ["web"]
