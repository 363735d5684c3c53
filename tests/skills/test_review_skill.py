"""The review skill through the Kernel: ``/review WHEN`` and a routed ``review`` intent
(a delegation signal, as the router sends) answer with the items of those days."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.signal import inject
from opencortex.skills import gtd, review
from opencortex.skills.base import Action


def test_review_skill_slash_and_routed(memex: Path, tmp_path: Path, monkeypatch) -> None:
    import datetime as dt

    monkeypatch.setattr(gtd, "clock", lambda: dt.datetime(2026, 12, 1, 9, 0))
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    k = Kernel(m, record_sessions=False)
    try:
        assert "review" in [s.name for s in k.registry.skills()]
        out = k.ask("/review last Tuesday")
        assert out and out[0].startswith("Review of Tue 24 Nov 2026")
        assert "gtd.org:140" in out[0] and "meetings.org:25" in out[0]
        # a routed intent: the router's delegate action with a "review" target
        got: list[tuple[str, Any]] = []
        sig = inject({"payload": {"sensor": "user-input", "text": "what did I do last week?"},
                      "meta": {"source": "test", "record": False,
                               "reply": lambda t, d=None: got.append((t, d))}})
        k.run_action(Action("delegate", {"intents": [
            {"target": review.TARGET, "text": "what did I do last week?"}]}), sig)
        text, data = got[-1]
        assert text.startswith("Review of Mon 23 Nov – Sun 29 Nov 2026"), text
        assert "gtd.org:115" in data["citations"]
    finally:
        k.shutdown(timeout=10)
        m.close()
