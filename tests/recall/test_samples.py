"""The two real transcripts from the shared samples parse as FORMATS.md says."""

from __future__ import annotations

import pytest

from opencortex.recall.sources import claude_code, codex

from .conftest import CLAUDE_SAMPLE, CODEX_SAMPLE

pytestmark = pytest.mark.skipif(not CLAUDE_SAMPLE.exists() or not CODEX_SAMPLE.exists(),
                                reason="shared samples not present")


def test_claude_sample():
    [rec] = claude_code.read(CLAUDE_SAMPLE)
    assert rec.source == "claude-code"
    assert rec.session_id == "test-session-id"
    assert rec.title == "Test session for JSONL parsing"
    assert rec.cwd == "/project" and rec.branch == "main"
    assert [t.text for t in rec.person_turns] == ["Create a hello world function",
                                                  "Now add a goodbye function"]
    # tool results arrive as type=user but are not the person
    assert sum(t.origin == "tool" for t in rec.turns) == 4
    assert rec.turns[-1].origin == "assistant"
    assert rec.handle == "claude --resume test-session-id"  # /project does not exist
    assert rec.started is not None and rec.ended is not None and rec.started < rec.ended
    r = rec.receipt
    assert r.state == "succeeded" and r.skipped_lines == 0
    assert r.unverified_person_turns is None
    assert len(r.sha256 or "") == 64 and r.revision and r.revision.size > 0
    assert rec.turns[0].locator == f"{CLAUDE_SAMPLE}:2"


def test_codex_sample():
    [rec] = codex.read(CODEX_SAMPLE)
    assert rec.session_id == "019b64e5-57fa-7463-b644-fba7e456f905"
    assert rec.cwd == "/Users/macmini/Code/homelab-migration"
    assert [t.origin for t in rec.turns] == ["injected", "injected", "person"]
    assert rec.person_turns[0].text.startswith("can you analyse the MD files")
    assert rec.handle == "codex resume 019b64e5-57fa-7463-b644-fba7e456f905"
    assert rec.extra["cli_version"] == "0.77.0"
    assert rec.receipt.state == "succeeded"
    assert rec.receipt.unverified_person_turns == 0  # the event_msg mirror confirms it
    assert rec.receipt.skipped_lines == 0


def test_handle_keeps_cd_when_directory_exists(tmp_path):
    line = (CLAUDE_SAMPLE.read_text().splitlines()[1]
            .replace('"cwd":"/project"', f'"cwd":"{tmp_path}"'))
    f = tmp_path / "s.jsonl"
    f.write_text(line + "\n")
    [rec] = claude_code.read(f)
    assert rec.handle == f"cd {tmp_path} && claude --resume test-session-id"
