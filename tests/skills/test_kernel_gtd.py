"""The GTD skill through the Kernel: reply-only ops need no extra wiring."""

from __future__ import annotations

from pathlib import Path

from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.skills import gtd
from opencortex.skills.registry import SkillRegistry


def test_weekly_review_through_kernel(memex: Path, tmp_path: Path) -> None:
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    reg = SkillRegistry()
    reg.load_builtins()
    reg.register(gtd.skill())
    k = Kernel(m, registry=reg, record_sessions=False)
    try:
        out = k.ask("weekly review")
        assert out and out[0].startswith("Weekly review") and "Waiting for:" in out[0]
        assert "Next actions" in k.ask("what's next on my agenda")[0]
    finally:
        k.shutdown(timeout=10)
        m.close()
