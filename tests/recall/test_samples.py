"""Two hand-written transcripts in the real on-disk formats (tests/recall/fixtures/samples/)
parse as the formats say: the person's turns apart from tool results, command envelopes and
injected instructions; titles, working directory, branch, resume handle and receipts."""

from __future__ import annotations

from opencortex.recall.sources import claude_code, codex

from .conftest import CLAUDE_SAMPLE, CODEX_SAMPLE


def test_claude_sample():
    [rec] = claude_code.read(CLAUDE_SAMPLE)
    assert rec.source == "claude-code"
    assert rec.session_id == "c1a0de00-1111-4222-8333-944455556666"
    assert rec.title == "Rename the backup script and add a dry run"  # the summary line
    assert rec.cwd == "/nonexistent/backup-tools" and rec.branch == "dry-run"
    # a string content and a text block are both the person; the isMeta command is not
    assert [t.text for t in rec.person_turns] == [
        "Rename backup.sh to snapshot.sh and keep the old name working",
        "Now add a --dry-run flag that only prints the rsync command"]
    # tool results arrive as type=user but are not the person; tool calls are tools too
    assert [t.origin for t in rec.turns].count("tool") == 4
    assert "injected" in [t.origin for t in rec.turns]
    assert rec.turns[-1].origin == "assistant"
    assert rec.handle == "claude --resume c1a0de00-1111-4222-8333-944455556666"  # cwd is gone
    assert rec.started is not None and rec.ended is not None and rec.started < rec.ended
    r = rec.receipt
    assert r.state == "succeeded" and r.skipped_lines == 0
    assert r.unverified_person_turns is None  # Claude Code has no mirror to check against
    assert len(r.sha256 or "") == 64 and r.revision and r.revision.size > 0
    assert rec.turns[0].locator == f"{CLAUDE_SAMPLE}:2"


def test_codex_sample():
    [rec] = codex.read(CODEX_SAMPLE)
    assert rec.session_id == "01a2b3c4-d5e6-4f70-8a9b-0c1d2e3f4a5b"
    assert rec.cwd == "/nonexistent/garden-planner"
    assert [t.origin for t in rec.turns[:3]] == ["injected", "injected", "person"]
    assert [t.text for t in rec.person_turns] == [
        "which beds get too little sun in March according to beds.csv?"]
    assert rec.turns[-1].origin == "assistant"
    assert rec.handle == "codex resume 01a2b3c4-d5e6-4f70-8a9b-0c1d2e3f4a5b"
    assert rec.extra["cli_version"] == "0.81.2"
    assert rec.receipt.state == "succeeded"
    assert rec.receipt.unverified_person_turns == 0  # the event_msg mirror confirms it
    assert rec.receipt.skipped_lines == 0


def test_handle_keeps_cd_when_directory_exists(tmp_path):
    line = (CLAUDE_SAMPLE.read_text().splitlines()[1]
            .replace('"cwd":"/nonexistent/backup-tools"', f'"cwd":"{tmp_path}"'))
    f = tmp_path / "s.jsonl"
    f.write_text(line + "\n")
    [rec] = claude_code.read(f)
    assert rec.handle == f"cd {tmp_path} && claude --resume c1a0de00-1111-4222-8333-944455556666"
