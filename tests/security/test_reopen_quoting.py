"""The "reopen" command recall tells the person to paste into a shell quotes every word:
a session id (or path) read from a transcript cannot add a command."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from opencortex.recall.records import shell_handle

EVIL = "gem-1; touch /tmp/opencortex-pwned #"


def test_a_hostile_session_id_stays_one_word(tmp_path: Path) -> None:
    from opencortex.recall.sources import gemini

    chats = tmp_path / "tmp" / "abc123" / "chats"
    chats.mkdir(parents=True)
    f = chats / "session-2026-11-29T12-00-x.json"
    f.write_text(json.dumps({
        "sessionId": EVIL, "projectHash": "abc123", "startTime": "2026-11-29T12:00:00Z",
        "messages": [{"id": "m1", "timestamp": "2026-11-29T12:00:01Z", "type": "user",
                      "content": "Explain the build"}]}))
    [rec] = gemini.read(f)
    words = shlex.split(rec.handle)
    assert EVIL in words and "touch" not in words, rec.handle
    assert ";" not in [w for w in words if w != EVIL]


def test_shell_handle_quotes_every_word(tmp_path: Path) -> None:
    cwd = tmp_path / "a dir; rm -rf ~"
    cwd.mkdir()
    h = shell_handle(["codex", "resume", "$(id)"], str(cwd), {"X": "a b", "BAD;rm": "x"})
    assert shlex.split(h) == ["cd", str(cwd), "&&", "X=a b", "codex", "resume", "$(id)"]
