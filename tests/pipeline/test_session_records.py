"""The agent's own session records live outside the person's notes: where they go, that
the index never holds them (nor the old ``sessions/`` layout, nor an opted-in folder), that
quoted clocks, planning lines and active timestamps are defused, retention, and the
undoable migration of old records."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.config import load_settings
from opencortex.memex import Memex
from opencortex.org.parser import parse
from opencortex.recall.sources import opencortex_sessions as ocs
from opencortex.sessions.recorder import SessionRecorder

QUOTE = ("Here is your log:\n:LOGBOOK:\nCLOCK: [2026-11-30 Mon 09:00]--[2026-11-30 Mon 17:00] =>"
         "  8:00\n:END:\nSCHEDULED: <2026-12-09 Wed>\nBook club <2026-12-09 Wed 19:00>\n"
         "  deadline: <2026-12-10 Thu>")


def test_default_folder_is_outside_the_memex(memex: Path) -> None:
    s = load_settings(memex=memex)
    data = Path(os.environ["XDG_DATA_HOME"])
    assert s.sessions_path.is_relative_to(data / "opencortex" / "sessions")
    assert not s.sessions_path.is_relative_to(memex.resolve())
    assert s.record_folder is None
    other = load_settings(memex=memex.parent / "other")
    assert other.sessions_path != s.sessions_path  # one folder per memex


def test_config_opts_into_a_memex_folder_and_off(memex: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[sessions]\ndir = "agent/sessions"\nretention_days = 30\n')
    s = load_settings(memex=memex)
    assert s.sessions_path == memex.resolve() / "agent" / "sessions"
    assert s.record_folder == "agent/sessions/"
    assert s.sessions.retention_days == 30
    assert s.is_record_file("agent/sessions/2026/12/07-x.org")
    assert s.is_record_file("sessions/2026/12/07-chat-1.org")  # the old layout
    assert not s.is_record_file("sessions/therapy.org")  # a person's own folder of notes
    cfg.write_text("[sessions]\nrecord = false\n")
    s = load_settings(memex=memex)
    assert SessionRecorder.for_settings(s) is None
    monkeypatch.setenv("OPENCORTEX_SESSIONS", "true")
    assert SessionRecorder.for_settings(load_settings(memex=memex)) is not None
    cfg.write_text("[sessions]\nretention_days = -1\n")
    with pytest.raises(Exception, match=r"sessions\.retention_days"):
        load_settings(memex=memex)


def test_quoted_clocks_and_timestamps_are_defused_and_read_back(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path)
    p = rec.record("q-1", "assistant", QUOTE, title="<2026-12-09 Wed 19:00> book club")
    text = p.read_text()
    doc = parse(text)
    # no clock, planning or active timestamp Org would read, anywhere in the file
    assert "CLOCK:" not in text and "SCHEDULED:" not in text
    assert "<2026-" not in text
    assert all(h.scheduled is None and h.deadline is None for h in doc.headings)
    [r] = ocs.read(p)
    assert r.turns[0].text == QUOTE  # recall shows the words as they were said


def test_emacs_sees_no_clock_or_appointment_in_a_record(tmp_path: Path) -> None:
    """Emacs's own org-clock-sum and agenda over a record quoting a LOGBOOK and a meeting."""
    import shutil
    import subprocess

    if shutil.which("emacs") is None:
        pytest.skip("emacs not installed")
    rec = SessionRecorder(tmp_path)
    p = rec.record("q-2", "assistant", QUOTE, title="meeting <2026-12-09 Wed 19:00>")
    el = (f'(progn (require (quote org-agenda)) (find-file "{p}") (org-mode) '
          '(princ (format "SUM=%s\\n" (org-clock-sum))) '
          f'(setq org-agenda-files (list "{p}")) '
          '(org-agenda-list nil "2026-12-07" 7) '
          '(princ (format "AGENDA=%s\\n" (with-current-buffer org-agenda-buffer-name '
          '(buffer-string)))))')
    out = subprocess.run(["emacs", "--batch", "-Q", "--eval", el], capture_output=True,
                         text=True, timeout=120).stdout
    assert "SUM=0" in out, out
    agenda = out.split("AGENDA=", 1)[1]
    assert "book" not in agenda.lower() and "meeting" not in agenda.lower(), agenda


def test_the_index_never_holds_records(memex: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    old = memex / "sessions" / "2026" / "11"
    old.mkdir(parents=True)
    (old / "30-chat-1.org").write_text("#+TITLE: Session chat-1\n* [2026-11-30 Mon 10:00] "
                                       "person: zanzibar walrus\n")
    (memex / "sessions" / "mine.org").write_text("* zanzibar my own note\n")
    monkeypatch.setenv("OPENCORTEX_SESSIONS_DIR", "agent")
    (memex / "agent" / "2026" / "12").mkdir(parents=True)
    (memex / "agent" / "2026" / "12" / "01-x.org").write_text("* zanzibar agent turn\n")
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        files = {n.file for n in m.query("zanzibar")}
        assert files == {"sessions/mine.org"}
        # a buffer-update from Emacs of a record file indexes nothing either
        assert m.index_text(memex / "agent" / "2026" / "12" / "01-x.org", "* zanzibar\n") == 0
        assert {n.file for n in m.query("zanzibar")} == {"sessions/mine.org"}
        # nor does the live ripgrep scan list them
        from opencortex.retrieval.scan import scan

        hits = scan(memex, "zanzibar", exclude=m.settings.is_record_file)
        assert {h.file for h in hits} == {"sessions/mine.org"}
    finally:
        m.close()


def test_retention_prunes_old_records(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, retention_days=7)
    old = rec.record("old-1", "person", "hello")
    rec2 = SessionRecorder(tmp_path, retention_days=7)
    fresh = rec2.record("new-1", "person", "hello")
    ten_days = time.time() - 10 * 86400
    os.utime(old, (ten_days, ten_days))
    assert rec2.prune() == [old]
    assert not old.exists() and fresh.exists()
    assert SessionRecorder(tmp_path, retention_days=0).prune() == []


def _old_records(memex: Path) -> dict[str, bytes]:
    d = memex / "sessions" / "2026" / "11"
    d.mkdir(parents=True)
    out = {}
    for i in range(3):
        p = d / f"2{i}-chat-{i}.org"
        p.write_bytes(f"#+TITLE: Session chat-{i}\n* [2026-11-2{i} Fri 10:00] person: "
                      f"hi {i}\n".encode())
        out[p.relative_to(memex).as_posix()] = p.read_bytes()
    (memex / "sessions" / "README.org").write_text("* mine\n")
    return out


def test_migrate_moves_reports_and_undoes(memex: Path, tmp_path: Path) -> None:
    before = _old_records(memex)
    folder = load_settings(memex=memex).sessions_path
    taken = folder / "2026" / "11" / "20-chat-0.org"
    taken.parent.mkdir(parents=True)
    taken.write_text("* another record of the same name\n")
    args = ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3"), "--json"]
    r = CliRunner().invoke(cli, ["doctor", *args])
    sess = next(c for c in json.loads(r.output)["checks"] if c["check"] == "sessions")
    assert sess.get("warn") and "sessions migrate" in sess["fix"]
    r = CliRunner().invoke(cli, ["sessions", "migrate", *args])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["moved"] == 3 and len(rep["renamed"]) == 1 and rep["manifest"]
    assert any("README.org" in x for x in rep["left"])
    assert (memex / "sessions" / "README.org").exists()  # not a record: kept
    assert not (memex / "sessions" / "2026").exists()
    assert taken.read_text() == "* another record of the same name\n"
    moved = sorted(p.read_bytes() for p in folder.rglob("*.org") if p != taken)
    assert moved == sorted(before.values())  # every byte of every record
    r = CliRunner().invoke(cli, ["sessions", "migrate", "--undo", *args])
    assert r.exit_code == 0 and json.loads(r.output)["moved"] == 3, r.output
    assert {k: (memex / k).read_bytes() for k in before} == before
    assert taken.exists()


def test_recorder_writes_to_the_folder_and_recall_reads_it(memex: Path, tmp_path: Path) -> None:
    from opencortex.recall.engine import Recall

    m = Memex(memex, index=tmp_path / "i.sqlite3")
    try:
        clock = iter([dt.datetime.now() - dt.timedelta(days=1)] * 10)
        rec = SessionRecorder(m.settings.sessions_path, clock=lambda: next(clock))
        rec.record("chat-y", "person", "let us plan the quokka migration tooling")
        rec.record("chat-y", "assistant", "Plan: a quokka dry run first")
        e = Recall(m, defaults=False, gateway=False, state_dir=tmp_path / "s")
        rnd = e.start("what did we talk about yesterday about the quokka migration",
                      invoked=True)
        cites = json.dumps(rnd.to_dict())
        assert str(m.settings.sessions_path) in cites, rnd.render()
    finally:
        m.close()
