"""Questions over the lists are answered from the index and never write: the sentence-form
classifier, list answers naming items with file:line, and questions run through
`opencortex ask` leave the memex unchanged: the questions written here always; the dev sets
outside the repository too when opted in with OPENCORTEX_TEST_DEV_EVAL=DIR (never copied
here)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.memex import Memex
from opencortex.skills.gtd_questions import answer, is_question

from .conftest import NOW

_DEV = os.environ.get("OPENCORTEX_TEST_DEV_EVAL", "")
"""Opt-in: a folder with gtd-dev.jsonl / router-dev*.jsonl (read at import: the autouse
fixture strips OPENCORTEX_* from the environment)."""
EVAL = Path(_DEV) if _DEV else None

OWN_QUESTIONS = [
    "which tasks are tagged money?", "what have I finished in the home server project",
    "anything high priority still open?", "when is the restic backblaze setup due",
    "what's the next action on learning rust", "what can I do at home?",
    "have I finished the BM25 write-up?", "is the rent paid yet?", "which things are overdue",
    "what deadlines come up in the next 10 days?", "what projects do I have going?",
    "what did I get done last week?", "show me my A priorities", "do I have anything waiting",
    "list my someday stuff", "how many errands are open", "what's on for tomorrow?",
    "show the done items", "is the tap washer finished", "what's scheduled this week?",
    "any errands I can run in town?", "who am I waiting on?", "what's due today",
    "tell me what is stuck", "give me the inbox items",
]
"""Questions of every form the classifier takes (written for this test)."""


@pytest.mark.parametrize("text", [
    "what is on my plate for the garden project?", "which tasks are tagged money",
    "when is the boiler service due", "do I have anything waiting", "show the done items",
    "list my someday stuff", "any urgent things left", "is the tap washer finished",
    "can you show me the open tasks?", "how many errands are open",
])
def test_questions_by_form(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize("text", [
    "remind me to call the bank", "mark the washer as done", "did my anki reviews",
    "can you add milk to my list", "the tap washer is done", "schedule the dentist friday",
])
def test_commands_by_form(text: str) -> None:
    assert not is_question(text)


def test_answers_name_items_with_locations(mx: Memex) -> None:
    now = NOW
    money = answer(mx, "which tasks are tagged money?", now)
    assert "Pay rent" in money and "(gtd.org:" in money
    assert "Refund from Hetzner" in money
    done = answer(mx, "what have I finished in the home server project", now)
    assert "Install Debian 13" in done and "Cut-over weekend" not in done
    urgent = answer(mx, "anything high priority still open?", now)
    assert "failing disk" in urgent and "expense report" not in urgent
    when = answer(mx, "when is the restic backblaze setup due", now)
    assert "2026-12-12" in when and "projects/home-server-migration.org:" in when
    nxt = answer(mx, "what's the next action on learning rust", now)
    assert nxt.startswith("Next step for Learn Rust") and "Rustlings iterators" in nxt
    home = answer(mx, "what can I do at home?", now)
    assert "kitchen tap washer" in home and "Buy a Christmas present" not in home


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()
            and not p.relative_to(root).as_posix().startswith("sessions/")}


_FORM = re.compile(r"^(?:what|what's|whats|which|when|where|who|how|why|do|does|did|is|are|"
                   r"have|has|any|anything|got any|show|list|tell me|give me)\b", re.I)


def _dev_questions() -> list[str]:
    out: list[str] = []
    assert EVAL is not None
    gtd = EVAL / "gtd-dev.jsonl"
    if gtd.exists():
        out += [c["ask"] for c in map(json.loads, gtd.read_text().splitlines())
                if "answer_has" in c]
    for name in ("router-dev.jsonl", "router-dev-2.jsonl"):
        f = EVAL / name
        if f.exists():
            # one-intent requests only: a compound may pair a question with a capture
            out += [c["text"] for c in map(json.loads, f.read_text().splitlines())
                    if len(c.get("intents", [])) == 1
                    and (c["text"].rstrip().endswith("?") or _FORM.match(c["text"].strip()))]
    return out


def _assert_no_question_writes(questions: list[str], memex: Path, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("CACHE", "STATE", "CONFIG", "DATA"):
        monkeypatch.setenv(f"XDG_{k}_HOME", str(tmp_path / k.lower()))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for k in ("OPENCORTEX_CONFIG", "OPENCORTEX_MEMEX", "OPENCORTEX_INDEX"):
        monkeypatch.delenv(k, raising=False)
    before = _tree(memex)
    runner = CliRunner()
    index = tmp_path / "i.sqlite3"
    wrote = []
    for q in questions:
        r = runner.invoke(cli, ["ask", q, "--memex", str(memex), "--index", str(index),
                                "--json"], catch_exceptions=False)
        assert r.exit_code == 0, (q, r.output)
        if _tree(memex) != before:
            wrote.append(q)
            before = _tree(memex)
    assert not wrote, f"questions that wrote to the memex: {wrote}"
    with Memex(memex, index=index) as m:
        assert not m.store.journal(), [j.description for j in m.store.journal()]


def test_no_question_writes_through_ask(memex: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(is_question(q) for q in OWN_QUESTIONS)
    _assert_no_question_writes(OWN_QUESTIONS, memex, tmp_path, monkeypatch)


@pytest.mark.skipif(EVAL is None, reason="opt-in: OPENCORTEX_TEST_DEV_EVAL=DIR of dev sets")
def test_no_dev_question_writes_through_ask(memex: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    questions = _dev_questions()
    assert questions, f"no dev questions found in {EVAL}"
    _assert_no_question_writes(questions, memex, tmp_path, monkeypatch)


def test_status_overdue_and_ranges(mx: Memex) -> None:
    done = answer(mx, "have I finished the BM25 write-up?", NOW)
    assert done.startswith("Write up BM25 notes") and "DONE, closed [2026-11-28" in done
    still = answer(mx, "is the rent paid yet?", NOW)
    assert "Pay rent: still TODO" in still
    late = answer(mx, "which things are overdue", NOW)
    assert "failing disk" in late and "Buy a Christmas present" not in late
    soon = answer(mx, "what deadlines come up in the next 10 days?", NOW)
    assert "Send revised chapter 7 outline" in soon and "Pay rent" in soon
    assert "Christmas present" not in soon  # Dec 15 is 15 days out
    none = answer(mx, "what's left on the garden shed project?", NOW)
    assert none.startswith("I found no project matching") and "Learn Rust" in none


def test_projects_with_their_next_actions(mx: Memex) -> None:
    out = answer(mx, "what projects do I have going and what's next on each?", NOW)
    assert "Inject a clock" in out and "zfs send" in out and "Rustlings iterators" in out
    assert "WordPress" not in out


def test_place_words_and_last_week(mx: Memex) -> None:
    house = answer(mx, "what's there to do around the house?", NOW)
    assert "kitchen tap washer" in house and "Tailscale" not in house
    done = answer(mx, "what did I get done last week?", NOW)  # NOW is Mon 30 Nov: 23–29 Nov
    assert "library card" in done and "expense report" in done and "WD Red" not in done


def test_plural_priority_finish_date_and_names_in_titles(mx: Memex) -> None:
    a = answer(mx, "show me my A priorities", NOW)
    assert "failing disk" in a and "Book a dental cleaning" not in a
    when = answer(mx, "when did I finish the expense report?", NOW)
    assert "2026-11-27" in when and "Rustlings" not in when
    lena = answer(mx, "what am I waiting on from Lena?", NOW)
    assert "feedback" in lena and "Hetzner" not in lena
