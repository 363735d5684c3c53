"""A week of requests of every kind -- ``ask`` on the command line, a chat conversation, HTTP
and MCP -- whose words quote LOGBOOK clocks, planning lines and appointments, leaves the
person's memex as it was: its files byte for byte, clock sums (ours and Emacs's
``org-clock-sum`` over the records), the agenda, search results for their notes and
doctor's broken links.  And recall still finds yesterday's conversation when asked.

Run twice: records in their default folder (outside the memex), and in a folder of the
memex the person opted into (``[sessions] dir``), where only the index's exclusion and the
recorder's defusing keep them out."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.insight.review import review
from opencortex.mcp_server.server import OpenCortexTools
from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.recall.engine import Recall
from opencortex.retrieval.hybrid import retriever_for
from opencortex.sessions.recorder import SessionRecorder

from ..server.conftest import make_live  # noqa: F401  (the live daemon fixture)

TODAY = dt.date.today()
QUOTES = [
    "what did I write about spaced repetition?",
    "show my agenda for today",
    "what did I clock last week?",
    "explain this line from my log\nCLOCK: [2026-11-30 Mon 09:00]--[2026-11-30 Mon 17:00] =>  8:00",
    "what is this: SCHEDULED: <2026-12-09 Wed> and DEADLINE: <2026-12-10 Thu>",
    "summarise my notes on CRDTs",
    "what's on for wednesday? book club <2026-12-09 Wed 19:00>",
]
SEARCHES = ["clock", "spaced repetition", "CRDT", "agenda", "book club", "2026-12-09"]


def _person_files(memex: Path, skip: str | None) -> dict[str, str]:
    return {p.relative_to(memex).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(memex.rglob("*")) if p.is_file()
            and not (skip and p.relative_to(memex).as_posix().startswith(skip))}


def _broken(memex: Path, index: Path) -> list[dict]:
    r = CliRunner().invoke(cli, ["doctor", "--memex", str(memex), "--index", str(index),
                                 "--json"])
    links = next(c for c in json.loads(r.output)["checks"] if c["check"] == "links")
    return links.get("items", [])


def _state(memex: Path, tmp_path: Path, tag: str) -> dict[str, Any]:
    m = Memex(memex, index=tmp_path / f"state-{tag}.sqlite3")
    try:
        m.sync()
        rv = review(m, dt.date(2026, 1, 1), TODAY + dt.timedelta(days=30))
        agenda = {k: sorted((n.file, n.line, n.title) for n in v)
                  for k, v in m.agenda(today=TODAY, days=14).items()}
        day_agenda = [(d.date.isoformat(), i.file, i.line, i.type, i.time)
                      for d in m.day_agenda(today=TODAY, days=14).days for i in d.items]
        r = retriever_for(m)
        found = {q: [(h.file, h.line) for h in r.search(q, mode="sparse", k=20).hits]
                 for q in SEARCHES}
        files = m.store.file_states().keys()
    finally:
        m.close()
    return {"clock_total": rv.total, "clock_by_project": rv.by_project(),
            "agenda": agenda, "day_agenda": day_agenda, "search": found, "indexed_files": sorted(files),
            "broken": _broken(memex, tmp_path / f"doctor-{tag}.sqlite3")}


def _emacs_clock_sum(files: list[Path]) -> int:
    if shutil.which("emacs") is None or not files:
        return 0
    forms = " ".join(f'(progn (find-file "{p}") (org-mode) (setq total (+ total '
                     '(org-clock-sum))))' for p in files)
    out = subprocess.run(["emacs", "--batch", "-Q", "--eval",
                          f"(let ((total 0)) (require (quote org-clock)) {forms} "
                          '(princ (format "SUM=%d" total)))'],
                         capture_output=True, text=True, timeout=300).stdout
    return int(out.split("SUM=")[1])


@pytest.mark.parametrize("folder", [None, "agent-sessions"])
def test_a_week_of_requests_leaves_the_memex_as_it_was(
        folder: str | None, memex: Path, tmp_path: Path, make_live: Any,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    if folder:
        monkeypatch.setenv("OPENCORTEX_SESSIONS_DIR", folder)
    files_before = _person_files(memex, folder)
    before = _state(memex, tmp_path, "before")

    # a week of chat: one conversation a day, the recorder's clock on that day
    m = Memex(memex, index=tmp_path / "chat.sqlite3")
    m.sync()
    day = [dt.datetime.combine(TODAY - dt.timedelta(days=6), dt.time(9, 30))]
    k = Kernel(m, recorder=SessionRecorder.for_settings(m.settings, clock=lambda: day[0]))
    try:
        for i in range(7):
            day[0] = dt.datetime.combine(TODAY - dt.timedelta(days=6 - i), dt.time(9, 30))
            k.ask(QUOTES[i], session=f"chat-day{i}")
            k.ask(QUOTES[(i + 3) % len(QUOTES)], session=f"chat-day{i}")
            if i == 5:  # yesterday's conversation, about something only it mentions
                k.ask("let us plan the quokka enclosure migration for the garden",
                      session=f"chat-day{i}")
    finally:
        k.shutdown()
    # the command line, each `ask` a process of its own
    for q in QUOTES[:4]:
        r = CliRunner().invoke(cli, ["ask", q, "--memex", str(memex), "--index",
                                     str(tmp_path / "cli.sqlite3"), "--json"])
        assert r.exit_code == 0, r.output
    # HTTP (the daemon) and MCP
    live = make_live()
    for q in QUOTES[3:]:
        st, body, _ = live.request("POST", "/v1/chat", {"message": q, "session": "http-1"})
        assert st == 200, body
    tools = OpenCortexTools(m)
    tools.search("CLOCK: book club")
    tools.agenda(days=7)
    tools.recollect("that conversation about my clocked hours")

    sessions = m.settings.sessions_path
    records = sorted(sessions.rglob("*.org"))
    assert len(records) >= 9  # seven chat days, the CLI's and the daemon's conversations
    assert (folder is None) == (not sessions.is_relative_to(memex.resolve()))
    assert _person_files(memex, folder) == files_before  # nothing of the person's changed
    after = _state(memex, tmp_path, "after")
    assert after == before
    assert not any(f.startswith(folder or "sessions/") for f in after["indexed_files"])
    assert _emacs_clock_sum(records) == 0  # Emacs's own clock sum over every record

    # recall still finds yesterday's conversation when asked for it
    e = Recall(m, defaults=False, gateway=False, state_dir=tmp_path / "recall")
    rnd = e.start("what did we talk about yesterday? the quokka enclosure", invoked=True)
    shown = json.dumps(rnd.to_dict())
    yesterday = TODAY - dt.timedelta(days=1)
    assert f"{yesterday:%d}-chat-day5.org" in shown, rnd.render()
    m.close()
