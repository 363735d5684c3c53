"""Surgical write-back: each operation changes only its entry, Emacs agrees with the
result, writes are atomic and undoable, and a changed file is never clobbered."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from opencortex import atomic
from opencortex.errors import ConflictError, NodeNotFoundError, WriteError
from opencortex.memex import Memex

from ..conftest import emacs_dump

NOW = dt.datetime(2026, 11, 30, 14, 5)

TASKS = """#+TITLE: Tasks
#+TODO: TODO NEXT WAITING | DONE CANCELLED

* Inbox
* NEXT [#A] Write the report                                           :work:
SCHEDULED: <2026-11-30 Mon>
:PROPERTIES:
:ID:       task-report
:EFFORT:   1:00
:END:
Some body text.

** TODO Sub task
* TODO Water plants
SCHEDULED: <2026-11-28 Sat +1w>
:PROPERTIES:
:ID:       task-water
:END:
* Notes on café ☕
:PROPERTIES:
:ID: note-cafe
:END:
Body with ünïcode.
* DONE Old thing
CLOSED: [2026-11-20 Fri 09:00]
"""


@pytest.fixture
def mx(tmp_path: Path):
    root = tmp_path / "memex"
    root.mkdir()
    (root / "tasks.org").write_text(TASKS, encoding="utf-8")
    m = Memex(root, index=tmp_path / "index.sqlite3")
    m.sync()
    m.writer.clock = lambda: NOW
    yield m
    m.close()
    atomic.fault_hook = None


def changed_region(before: bytes, after: bytes) -> tuple[int, int, int]:
    """(common prefix length, common suffix length, len(after))."""
    p = 0
    n = min(len(before), len(after))
    while p < n and before[p] == after[p]:
        p += 1
    s = 0
    while s < n - p and before[-1 - s] == after[-1 - s]:
        s += 1
    return p, s, len(after)


def only_entry_changed(before: bytes, after: bytes, entry_title: bytes) -> None:
    """Bytes before the entry's headline and after its own section are identical."""
    start = before.index(entry_title)
    start = before.rindex(b"\n", 0, start) + 1
    nxt = before.find(b"\n*", start)
    end = len(before) if nxt < 0 else nxt + 1
    p, s, _ = changed_region(before, after)
    assert p >= start, "bytes before the entry changed"
    assert len(before) - s <= end, "bytes after the entry changed"


def emacs_by_title(path: Path) -> dict[str, dict]:
    return {h["title"]: h for h in emacs_dump(path)}


def test_todo_done_adds_closed_and_emacs_agrees(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    before_bytes = f.read_bytes()
    before = emacs_by_title(f)
    r = mx.set_todo("task-report", "DONE")
    after_bytes = f.read_bytes()
    only_entry_changed(before_bytes, after_bytes, b"Write the report")
    assert b"CLOSED: [2026-11-30 Mon 14:05] SCHEDULED: <2026-11-30 Mon>" in after_bytes
    after = emacs_by_title(f)
    e = after["Write the report"]
    assert e["todo"] == "DONE" and e["closed"] == "[2026-11-30 Mon 14:05]"
    assert e["scheduled"] == "<2026-11-30 Mon>" and e["id"] == "task-report"
    for title, h in before.items():  # every other entry parses exactly as before
        if title != "Write the report":
            assert {k: v for k, v in after[title].items() if k != "line"} == \
                   {k: v for k, v in h.items() if k != "line"}
    assert r.journal_id and mx.query("todo:DONE heading:report")


def test_reopen_removes_closed(mx: Memex) -> None:
    mx.set_todo("Old thing", "TODO")
    text = (mx.root / "tasks.org").read_text(encoding="utf-8")
    assert "* TODO Old thing\n" in text and "CLOSED" not in text


def test_repeating_task_moves_instead_of_closing(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    mx.set_todo("task-water", "DONE")
    e = emacs_by_title(f)["Water plants"]
    assert e["todo"] == "TODO" and e["closed"] is None
    assert e["scheduled"] == "<2026-12-05 Sat +1w>"
    assert ["LAST_REPEAT", "[2026-11-30 Mon 14:05]"] in e["properties"]
    assert '- State "DONE"       from "TODO"       [2026-11-30 Mon 14:05]' in e["body"]
    assert e["body"].startswith(":LOGBOOK:")


def test_state_change_note_when_configured(mx: Memex) -> None:
    mx.settings.log_states = True
    mx.set_todo("Sub task", "WAITING")
    e = emacs_by_title(mx.root / "tasks.org")["Sub task"]
    assert e["todo"] == "WAITING"
    assert e["body"] == (':LOGBOOK:\n- State "WAITING"    from "TODO"       '
                         "[2026-11-30 Mon 14:05]\n:END:")


def test_unknown_state_is_refused_with_the_choices(mx: Memex) -> None:
    with pytest.raises(WriteError, match="TODO, NEXT, WAITING, DONE, CANCELLED"):
        mx.set_todo("task-report", "FINISHED")


def test_set_property_update_add_delete(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    b0 = f.read_bytes()
    mx.set_property("task-report", "EFFORT", "2:00")
    mx.set_property("task-report", "OWNER", "Priya")
    mx.set_property("Inbox", "CATEGORY", "inbox")
    e = emacs_by_title(f)
    assert e["Write the report"]["properties"] == [
        ["ID", "task-report"], ["Effort", "2:00"], ["OWNER", "Priya"]]  # org-set-effort's
    assert e["Inbox"]["properties"] == [["CATEGORY", "inbox"]]
    mx.set_property("task-report", "OWNER", None)
    mx.undo(4)
    assert f.read_bytes() == b0


def test_tags_add_remove_aligned(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    mx.tag("task-report", ["+urgent", "-work"])
    mx.tag("Inbox", ["+refile"])
    e = emacs_by_title(f)
    assert e["Write the report"]["tags"] == ["urgent"]
    assert e["Write the report"]["title"] == "Write the report"
    assert e["Inbox"]["tags"] == ["refile"]
    line = next(ln for ln in f.read_text().splitlines() if ln.startswith("* Inbox"))
    assert len(line) == 77 and line.endswith(":refile:")
    with pytest.raises(WriteError):
        mx.tag("Inbox", ["+bad tag"])


def test_schedule_deadline_set_replace_remove(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    mx.deadline("task-report", dt.date(2026, 12, 4))
    mx.schedule("task-report", dt.datetime(2026, 12, 1, 9, 30))
    mx.schedule("Inbox", dt.date(2026, 12, 2), repeater="+1w")
    e = emacs_by_title(f)
    assert e["Write the report"]["scheduled"] == "<2026-12-01 Tue 09:30>"
    assert e["Write the report"]["deadline"] == "<2026-12-04 Fri>"
    assert e["Inbox"]["scheduled"] == "<2026-12-02 Wed +1w>"
    mx.schedule("Inbox", None)
    e = emacs_by_title(f)
    assert e["Inbox"]["scheduled"] is None
    assert "* Inbox\n* NEXT" in f.read_text()


def test_append_keeps_spacing(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    b0 = f.read_bytes()
    mx.append("task-report", "Second paragraph.\n- a list item")
    only_entry_changed(b0, f.read_bytes(), b"Write the report")
    e = emacs_by_title(f)["Write the report"]
    assert e["body"] == "Some body text.\nSecond paragraph.\n- a list item"
    assert "- a list item\n\n** TODO Sub task" in f.read_text()
    n = len(emacs_by_title(f))
    mx.append("task-report", "* not a headline here")  # written as text, escaped as Org does
    after = emacs_by_title(f)
    assert len(after) == n and after["Write the report"]["body"].endswith(
        "\n,* not a headline here")


def test_capture_to_file_and_under_heading(mx: Memex) -> None:
    r1 = mx.capture("Call the plumber\nabout the leak", to="inbox.org", todo="TODO")
    inbox = mx.root / "inbox.org"
    assert inbox.exists()
    e = emacs_dump(inbox)[0]
    assert e["title"] == "Call the plumber" and e["todo"] == "TODO"
    assert e["id"] == r1.node[3:]
    assert ["CREATED", "[2026-11-30 Mon 14:05]"] in e["properties"]
    assert e["body"] == "about the leak"
    # the default: the memex's own top-level Inbox heading (the one inbox)
    mx.capture("Idea: local-first sync", tags=["idea"])
    hs = emacs_by_title(mx.root / "tasks.org")
    assert hs["Idea: local-first sync"]["level"] == 2
    assert hs["Idea: local-first sync"]["tags"] == ["idea"]
    # the new entry sits inside Inbox's subtree: right before the next top-level entry
    text = (mx.root / "tasks.org").read_text()
    assert text.index("Idea: local-first sync") < text.index("* NEXT [#A] Write")
    assert mx.query("heading:plumber")


def test_new_note_and_undo_removes_it(mx: Memex) -> None:
    r = mx.new_note("Spaced repetition", body="Review at growing intervals.", tags=["learning"])
    p = mx.root / r.file
    assert r.file == "notes/spaced-repetition.org"
    e = emacs_dump(p)[0]
    assert e["title"] == "Spaced repetition" and e["id"] == r.node[3:]
    assert mx.new_note("Spaced repetition").file == "notes/spaced-repetition-2.org"
    mx.undo(2)
    assert not p.exists() and not (mx.root / "notes/spaced-repetition-2.org").exists()
    assert not mx.query("heading:Spaced")


def test_undo_restores_exact_bytes_and_refuses_after_outside_edit(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    b0 = f.read_bytes()
    mx.set_todo("task-report", "DONE")
    mx.tag("task-report", ["+x"])
    mx.undo(2)
    assert f.read_bytes() == b0
    assert mx.query("todo:NEXT heading:report")
    mx.append("Inbox", "note")
    f.write_text(f.read_text() + "\n* someone else's edit\n")
    with pytest.raises(WriteError, match="changed since"):
        mx.undo()
    assert "someone else's edit" in f.read_text()


def test_refuses_to_clobber_a_file_changed_since_read(mx: Memex) -> None:
    f = mx.root / "tasks.org"

    def edit_meanwhile(step: str) -> None:
        if step == "verified":
            with open(f, "a", encoding="utf-8") as fh:
                fh.write("* typed in Emacs meanwhile\n")

    atomic.fault_hook = edit_meanwhile
    with pytest.raises(ConflictError, match=r"tasks\.org changed on disk"):
        mx.set_todo("task-report", "DONE")
    atomic.fault_hook = None
    text = f.read_text()
    assert "typed in Emacs meanwhile" in text and "* NEXT [#A] Write the report" in text
    assert not mx.store.journal()
    assert not [p for p in mx.root.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("step", ["written", "fsynced", "verified", "before-rename"])
def test_crash_midway_leaves_the_original_intact(mx: Memex, step: str) -> None:
    f = mx.root / "tasks.org"
    b0 = f.read_bytes()

    def crash(s: str) -> None:
        if s == step:
            raise OSError(28, "simulated crash")

    atomic.fault_hook = crash
    with pytest.raises(OSError):
        mx.set_todo("task-report", "DONE")
    atomic.fault_hook = None
    assert f.read_bytes() == b0
    assert not [p for p in mx.root.iterdir() if p.name.endswith(".tmp")]
    assert not mx.store.journal()


def test_permissions_kept(mx: Memex) -> None:
    f = mx.root / "tasks.org"
    os.chmod(f, 0o640)
    mx.set_todo("task-report", "DONE")
    assert (os.stat(f).st_mode & 0o777) == 0o640


def test_crlf_and_invalid_utf8_survive(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    raw = TASKS.replace("\n", "\r\n").encode("utf-8") + b"* Binary \xff\xfe tail\r\n"
    (root / "w.org").write_bytes(raw)
    with Memex(root, index=tmp_path / "i.sqlite3") as m:
        m.sync()
        m.writer.clock = lambda: NOW
        m.set_todo("task-report", "DONE")
        m.set_property("task-report", "X", "1")
        out = (root / "w.org").read_bytes()
        assert b"\xff\xfe tail\r\n" in out
        assert b"\n" not in out.replace(b"\r\n", b"")
        assert b"CLOSED: [2026-11-30 Mon 14:05] SCHEDULED: <2026-11-30 Mon>\r\n" in out
        m.undo(2)
        assert (root / "w.org").read_bytes() == raw


def test_unknown_and_ambiguous_nodes(mx: Memex) -> None:
    with pytest.raises(NodeNotFoundError, match="no node matches"):
        mx.set_todo("does-not-exist", "DONE")
    mx.capture("Inbox", to="tasks.org")
    with pytest.raises(NodeNotFoundError, match="matches 2 nodes"):
        mx.set_todo("Inbox", "TODO")


def test_refuses_paths_outside_the_memex(mx: Memex) -> None:
    with pytest.raises(WriteError, match=r"'\.\.' is not allowed"):
        mx.capture("x", to="../escape.org")
    (mx.root / "link.org").symlink_to(mx.root.parent / "elsewhere.org")
    with pytest.raises(WriteError, match="outside"):
        mx.capture("x", to="link.org")
    assert not (mx.root.parent / "elsewhere.org").exists()
