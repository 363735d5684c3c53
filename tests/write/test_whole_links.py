"""Answers written into notes hold whole Org links or plain text (issue 24): a model's
answer (or a snippet) with a link cut by "…" never lands in the person's file as a broken
link that doctor would count."""

from __future__ import annotations

import shutil
from pathlib import Path

from opencortex.memex import Memex
from opencortex.org.parser import parse
from opencortex.write.neutralise import whole_links

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memex"


def test_cut_links_become_text_and_whole_ones_stay() -> None:
    whole = "See [[id:6d4942f8-dde5-46fc-aa5e-559c341cc2d6][Caching]] and https://example.org/x"
    assert whole_links(whole) == whole
    assert whole_links("see [[id:6d4942f8-dd…][Caching]] now") == "see Caching now"
    assert whole_links("see [[id:6d4942f8-dd…]] now") == "see  now"
    assert whole_links("open [[id:6d4942f8-dde5 and more") == "open id:6d4942f8-dde5 and more"
    assert whole_links("as in id:6d4942f8-dd… said") == "as in  said"
    assert whole_links("a line\n[[file:a.org][A]] ok") == "a line\n[[file:a.org][A]] ok"


def test_an_agent_answer_with_a_cut_link_is_written_without_it(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    shutil.copytree(EXAMPLE, root)
    with Memex(root, tmp_path / "i.sqlite3") as m:
        m.sync()
        m.capture("Question for the agent", to="gtd.org::Inbox")
        node = m.resolve("Question for the agent")
        m.answer_under(node.key, "what is cached?",
                       "Caching is in [[id:6d4942f8-dd…][the caching note]] (id:6d49…).")
        text = (root / node.file).read_text(encoding="utf-8")
    assert "…" not in text.split("Answer: what is cached?", 1)[1]
    assert "the caching note" in text
    doc = parse(text)
    assert not [lk for h in doc.headings for lk in getattr(h, "links", [])
                if "…" in str(lk)]
