"""Red-team of the client surfaces added with the MCP tools: each test is an attack a
client (an MCP host, an HTTP/OpenAI client) can make with tool arguments alone, against
the real tool code on a copy of the example memex; Emacs is the judge where Org is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from opencortex.mcp_server.server import OpenCortexTools
from opencortex.memex import Memex

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memex"
TAILSCALE = "gtd.org::Inbox/Look into Tailscale ACL tags for the new server"


@pytest.fixture
def tools(tmp_path: Path) -> OpenCortexTools:
    root = tmp_path / "memex"
    shutil.copytree(EXAMPLE, root)
    mx = Memex(root, index=tmp_path / "index.db")
    mx.sync()
    return OpenCortexTools(mx)


def _agenda_runs(files: list[Path]) -> None:
    elisp = ("(progn (require 'org-agenda) (setq org-agenda-files command-line-args-left)"
             " (setq command-line-args-left nil) (org-agenda-list))")
    subprocess.run(["emacs", "-Q", "--batch", "--eval", elisp, *map(str, files)],
                   capture_output=True, timeout=90, check=False)


@pytest.mark.skipif(shutil.which("emacs") is None, reason="needs Emacs")
def test_property_value_cannot_plant_a_diary_sexp(tools: OpenCortexTools,
                                                  tmp_path: Path) -> None:
    """`property` wrote its value verbatim into the drawer: ``<%%(shell-command …)>`` there
    is a sexp timestamp Org's agenda evaluates (no confirmation) the day the person opens
    it."""
    marker = tmp_path / "ran"
    payload = f'<%%(progn (shell-command "touch {marker}") t)>'
    tools.edit("set_property", TAILSCALE, "NOTE", payload)
    gtd = tools.memex.root / "gtd.org"
    assert "%%(" not in gtd.read_text(encoding="utf-8").replace("%% (", "")
    _agenda_runs([gtd])
    assert not marker.exists()
    # the value is still there, as words
    assert "shell-command" in tools.memex.resolve(TAILSCALE).properties["NOTE"]


@pytest.mark.parametrize(("expr", "today"), [
    ("scheduled:+99999999999", None), ("deadline:-800000", None),
    ("closed:+9999999..", None), ("scheduled:future", "9999-12-31"),
    ("deadline:past", "0001-01-01"), ("level:99999999999999999999999", None),
    ("level:\u00b2", None)])
def test_query_off_the_calendar_is_a_clean_error(tools: OpenCortexTools, expr: str,
                                                 today: str | None) -> None:
    """A date span past year 9999 or a level past SQLite's integers was an OverflowError
    (or ValueError) out of the query tool and of `search` filters: an internal error, not
    an error that says what to fix."""
    with pytest.raises(ToolError, match=r"calendar|level: needs a number"):
        tools.query(expr, today=today)
    with pytest.raises(ToolError, match=r"calendar|level: needs a number"):
        tools.search("backup", filters=expr) if today is None else \
            tools.query(expr, today=today)


def test_distinct_openai_users_never_share_a_session() -> None:
    """``user`` named the session after its characters outside [A-Za-z0-9_.-] became ``-``
    and it was cut at 57: every non-ASCII name, names differing only in punctuation, and
    long ids sharing a prefix landed in one session (one record, one history)."""
    from opencortex.server.openai_compat import ChatRequest, Conversations
    from opencortex.sessions.ids import validate_session_id

    convs = Conversations()
    users = ["Jürgen", "Jørgen", "李雷", "韩梅", "ana@example.com", "ana-example.com",
             "ana_example.com", "x" * 57 + "-alice", "x" * 57 + "-bob", "emacs-1", "emacs 1"]
    got = {u: convs.session(ChatRequest("hi", [], False, False, u)) for u in users}
    assert len(set(got.values())) == len(users), got
    for s in got.values():
        assert validate_session_id(s) == s
    # the same user keeps their session, and a plain one stays readable
    assert convs.session(ChatRequest("again", [], False, False, "emacs-1")) == got["emacs-1"]
    assert "emacs-1" in got["emacs-1"]


def test_a_canned_greeting_is_not_a_shared_conversation() -> None:
    """A client that opens every chat with its own assistant greeting (a history with an
    assistant turn but no exchange) put every such chat, of every user, in the one session
    its hash named: the second user continued the first one's (its last answer, /save,
    open recall)."""
    from opencortex.server.openai_compat import ChatRequest, Conversations

    convs = Conversations()
    hello = [("system", "be brief"), ("assistant", "Hi! How can I help?")]
    a = convs.session(ChatRequest("my bank PIN note", hello, False, False, None))
    convs.answered(ChatRequest("my bank PIN note", hello, False, False, None), a, "here")
    b = convs.session(ChatRequest("what's next?", hello, False, False, None))
    assert a != b
    # a real exchange the daemon has not seen (it restarted) still continues stably
    seen = [("user", "hello"), ("assistant", "hi")]
    assert convs.session(ChatRequest("x", seen, False, False, None)) == \
        convs.session(ChatRequest("y", seen, False, False, None))


@pytest.mark.parametrize("kw", [{"start": "2026-01-01", "end": "9999-12-31"},
                                {"now": "9999-12-31"}, {"when": "this week",
                                                        "now": "9999-12-28"}])
def test_review_off_the_calendar_is_a_clean_error(tools: OpenCortexTools,
                                                  kw: dict[str, str]) -> None:
    """The review tool took the day after ``end`` (or the week of ``now``) past 9999-12-31:
    an OverflowError out of the tool, not an error that says what to fix."""
    with pytest.raises(ToolError, match="calendar"):
        tools.review(**kw)


def test_capture_to_a_private_file_is_not_found(tools: OpenCortexTools) -> None:
    """Capture under a private entry was "not found", but capture to a private file by
    name wrote into it and answered with the new entry's line: the file's existence and
    length, to a client that may not see it, and its words in the person's private file."""
    private = tools.memex.root / "notes" / "sleep-and-running.org"
    before = private.read_bytes()
    with pytest.raises(ToolError, match="may see"):
        tools.capture("hello", to="notes/sleep-and-running.org")
    assert private.read_bytes() == before
    # a public file, and a new one, still take captures
    assert tools.capture("hello", to="gtd.org")["file"] == "gtd.org"
    assert tools.capture("hello", to="notes/brand-new.org")["file"] == "notes/brand-new.org"


def _done_in_thread(tools: OpenCortexTools, limit: float) -> tuple[bool, object]:
    """Mark the task done in a worker thread: (finished within ``limit`` s, its result)."""
    import threading

    out: list[object] = []

    def run() -> None:
        try:
            out.append(tools.edit("set_todo", TAILSCALE, "DONE"))
        except Exception as e:  # the test reports what came out
            out.append(e)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(limit)
    return not th.is_alive(), out[0] if out else None


@pytest.mark.parametrize("repeat", ["++0d", "++1h", "++0h"])
def test_a_catch_up_repeater_cannot_hang_the_server(tools: OpenCortexTools,
                                                    repeat: str) -> None:
    """Marking a ``++`` task done stepped its date one repeat at a time until past now,
    holding the memex's one lock: ``++0d`` never got there (every client hung for good)
    and ``++1h`` from year 1 took ~17 million steps (half a minute)."""
    tools.schedule("SCHEDULED", TAILSCALE, "0001-01-01 00:00", repeat)
    finished, res = _done_in_thread(tools, 5.0)
    assert finished, f"DONE on a {repeat} task did not return in 5 s"
    assert isinstance(res, dict), res
    import datetime as dt
    import re

    text = (tools.memex.root / "gtd.org").read_text(encoding="utf-8")
    [day] = re.findall(r"SCHEDULED: <(\d{4}-\d{2}-\d{2}) \w+ \d\d:\d\d " + re.escape(repeat),
                       text)
    assert day >= dt.date.today().isoformat() if repeat == "++1h" else day <= "0001-01-02"


def test_a_repeater_past_year_9999_is_a_clean_error(tools: OpenCortexTools) -> None:
    """``+9999y`` on a task due in 9999 moved its date past the calendar: a ValueError out
    of the todo tool."""
    tools.schedule("DEADLINE", TAILSCALE, "9999-06-01", "+9999y")
    with pytest.raises(ToolError, match="9999"):
        tools.edit("set_todo", TAILSCALE, "DONE")


@pytest.mark.parametrize(("key", "value"), [
    ("EXPORT_FILE_NAME", "~/.bashrc"), ("ARCHIVE", "~/.emacs.d/init.el::"),
    ("DIR", "/etc"), ("header-args", ":eval yes"), ("HEADER-ARGS:sh", ":dir /")])
def test_property_that_steers_org_commands_is_the_persons(tools: OpenCortexTools, key: str,
                                                          value: str) -> None:
    """A client set ``:EXPORT_FILE_NAME: ~/.bashrc`` (or ``:ARCHIVE:``, ``:DIR:``,
    ``:header-args:``) on an entry: the person's next export, archive or attach of it
    wrote where the client chose."""
    gtd = tools.memex.root / "gtd.org"
    before = gtd.read_bytes()
    with pytest.raises(ToolError, match="only you set it"):
        tools.edit("set_property", TAILSCALE, key, value)
    assert gtd.read_bytes() == before
    tools.edit("set_property", TAILSCALE, "EFFORT", "1:00")  # an ordinary one still works
