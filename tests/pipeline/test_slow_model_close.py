"""A slow model's answer arriving after ``ask`` gave up and closed its Runtime: the late
work must find its store open (no "Cannot operate on a closed database" reply, no failed
signal), and the store closes once it is done."""

from __future__ import annotations

import os
import time
from pathlib import Path

from opencortex.retrieval.hybrid import Retriever
from opencortex.runtime import Runtime

from ..llm.conftest import FakeLLM, Reply, completion
from ..retrieval.conftest import HashingEmbedder


def _config(url: str) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(f'[llm.providers.local]\nbase_url = "{url}"\nkey_required = false\n'
                   'models = { fast = "m", smart = "m" }\ntimeout = 10\nmax_retries = 0\n',
                   encoding="utf-8")


def test_a_late_model_answer_after_close_reaches_no_closed_store(memex: Path,
                                                                   tmp_path: Path) -> None:
    server = FakeLLM()
    # the router's answer comes after `ask` gave up: everything after it (the router's check
    # of the intents, the notes search, the answer) runs on a Runtime already closed
    server.push(Reply(delay=2.0, body=completion('{"action": "route", "intents": '
                                                 '[{"target": "notes", "query": "caching"}]}')),
                Reply(body=completion('{"action": "reply", "text": "Cache-aside [1]."}')))
    try:
        _config(server.url)
        rt = Runtime.open(memex, tmp_path / "i.db")
        assert rt.via == "model"
        m = rt.memex
        m.sync()
        m.derived("retriever", lambda: Retriever(m, embedder=HashingEmbedder())).sync(
            embed=True)  # vectors loaded: the dense search reads the store it opened
        k = rt.kernel(approval_timeout=0)
        replies = k.ask_full("what cache pattern do I use for the blog?", timeout=1.0)
        assert "no answer within" in replies[0][0]
        rt.close(timeout=0.1)  # what `ask` does when it gives up
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(replies) < 2:
            time.sleep(0.05)
        texts = [t for t, _ in replies]
        assert not any("closed database" in t or "that failed" in t for t in texts), texts
        assert k.stats.failed == 0
        assert len(texts) == 2  # the late answer was still given (to nobody waiting)
        assert texts[1].startswith("Cache-aside [1].")  # answered, from the open store
    finally:
        server.close()
