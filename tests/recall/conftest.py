"""Shared paths for the recall source tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "transcripts"
CLAUDE_SAMPLE = SHARED / "claude-code" / "sample_session.jsonl"
CODEX_SAMPLE = SHARED / "codex" / "sample_codex_session.jsonl"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
