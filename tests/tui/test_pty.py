"""Drive the real chat in a pseudo-terminal, as a person would."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")


def spawn(memex: Path, tmp_path: Path) -> pexpect.spawn:
    env = dict(os.environ, TERM="dumb", PROMPT_TOOLKIT_NO_CPR="1")
    return pexpect.spawn(sys.executable, ["-m", "opencortex.tui", "--memex", str(memex),
                                          "--index", str(tmp_path / "index.db")],
                         env=env, encoding="utf-8", timeout=60, dimensions=(50, 200))


def test_chat_in_a_terminal(memex: Path, tmp_path: Path) -> None:
    c = spawn(memex, tmp_path)
    try:
        c.expect_exact("> ")
        c.sendline("caching strategies")
        c.expect(r"-> notes/caching-strategies\.org:\d+")
        c.expect_exact("> ")
        c.sendline("/search zfs")
        c.expect(r"notes/zfs-snapshots\.org:\d+  ZFS snapshots")
        c.sendline("run echo hi")
        c.expect(r"\[approval (\w+)\]")
        ident = c.match.group(1)
        c.expect(re.escape(f"/deny {ident}"))
        c.sendline(f"/approve {ident}")
        c.expect(r"exited 0\s+hi")
        c.sendline("/exit")
        c.expect(pexpect.EOF, timeout=30)
    finally:
        c.close(force=True)
    assert c.exitstatus == 0
    hist = Path(os.environ["XDG_STATE_HOME"]) / "opencortex" / "chat_history"
    assert "caching strategies" in hist.read_text(encoding="utf-8")


def test_ctrl_d_exits_cleanly(memex: Path, tmp_path: Path) -> None:
    c = spawn(memex, tmp_path)
    try:
        c.expect_exact("> ")
        c.send("\x04")  # Ctrl-D
        c.expect(pexpect.EOF, timeout=30)
    finally:
        c.close(force=True)
    assert c.exitstatus == 0


FAKE = """import sys
from tests.tui.test_chat_app import FakeBackend
from opencortex.tui.app import ChatApp
class B(FakeBackend):
    def chat(self, text, session, on_reply, on_approval, on_delta=None):
        on_reply("GOT " + repr(text), None)
sys.exit(ChatApp(B(), "s").run())
"""


@pytest.mark.parametrize("term", ["dumb", "xterm-256color"])
def test_esc_enter_adds_a_line_and_enter_sends(term: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, TERM=term, PROMPT_TOOLKIT_NO_CPR="1")
    c = pexpect.spawn(sys.executable, ["-c", FAKE], env=env, encoding="utf-8", timeout=30,
                      cwd=str(repo), dimensions=(50, 200))
    try:
        c.expect_exact("/help for commands.")
        c.send("foo")
        c.send("\x1b\r")  # Esc-Enter (what Meta-Enter sends)
        c.send("bar\r")
        c.expect(r"GOT '([^']*)'")
        assert c.match.group(1) == "foo\\nbar"
        c.send("/exit\r")
        c.expect(pexpect.EOF)
    finally:
        c.close(force=True)
    assert c.exitstatus == 0
