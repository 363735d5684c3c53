"""A review's summary from a real OpenAI-compatible server on loopback: sentences citing
review items are kept (with the items' file:line), the rest dropped; the prompt carries
the items; a failing model leaves the review without a summary, never without items."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from opencortex.insight.review import review
from opencortex.insight.review_summary import summarise
from opencortex.llm import Gateway
from opencortex.memex import Memex

from ..conftest import EXAMPLE
from .conftest import Reply, completion, provider


def test_summary_keeps_cited_sentences(server, tmp_path: Path) -> None:
    memex = tmp_path / "memex"
    shutil.copytree(EXAMPLE, memex)
    with Memex(memex, tmp_path / "i.sqlite3") as m:
        m.sync()
        rv = review(m, dt.date(2026, 11, 23), dt.date(2026, 11, 30), "week")
        n = len(rv.items)
        server.push(Reply(body=completion(
            "You renewed the library card and filed the expense report [1, 3]. "
            "It was a productive week. The 1:1 with Priya set priorities "
            f"[{n}]. You also went to Mars [{n + 5}].")))
        summarise(rv, m.settings, Gateway([provider(server)]))
        prompt = server.last.body["messages"][-1]["content"]
        assert "[1] done: Renew library card" in prompt
        assert [s["cites"] for s in rv.summary] == [[1, 3], [n]]
        assert rv.summary[0]["items"] == [rv.items[0].where, rv.items[2].where]
        assert "Summary:" in rv.render_text() and "Mars" not in rv.render_text()
        server.push(Reply(status=500, body={"error": "down"}), Reply(status=500),
                    Reply(status=500))
        rv2 = summarise(review(m, dt.date(2026, 11, 23), dt.date(2026, 11, 30)), m.settings,
                        Gateway([provider(server)]))
        assert rv2.summary is None and rv2.done
