"""Shared paths for the recall source tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_SAMPLE = FIXTURES / "samples" / "claude_session.jsonl"
CODEX_SAMPLE = FIXTURES / "samples" / "codex_session.jsonl"
"""Hand-written whole sessions in the Claude Code and Codex formats."""


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
