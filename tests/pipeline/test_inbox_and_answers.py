"""One inbox for every gateway; property keys as Org spells them; blank lines kept; answers
written into notes carry no diagnostics and no cut links; doctor names broken links."""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.retrieval.hybrid import snippet


def _config(text: str) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)


def _run(*args: str) -> dict:
    r = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_every_gateway_files_into_the_memex_inbox_heading(memex: Path, tmp_path: Path) -> None:
    """The example memex has ``* Inbox`` in gtd.org and no inbox.org: ask, capture and the
    MCP/HTTP facade (Access) all file there, and keep doing so."""
    from opencortex.access import Access

    idx = ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]
    _run("capture", "buy lamp oil", *idx)
    _run("ask", "add a task to renew the passport", *idx)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        Access(m, "mcp").capture("call the plumber")
        Access(m, "http").capture("water the ferns")
        m.sync()
        assert m.inbox() == "gtd.org::Inbox"
        for title in ("buy lamp oil", "Renew the passport", "call the plumber",
                      "water the ferns"):
            [n] = [n for n in m.query(f'"{title.split()[-1]}"') if title in n.title]
            assert n.file == "gtd.org" and n.outline == ["Inbox"], (title, n.file, n.outline)
    finally:
        m.close()
    assert not (memex / "inbox.org").exists()


def test_configured_file_heading_target_is_the_one_inbox(memex: Path, tmp_path: Path) -> None:
    (memex / "inbox.org").write_text("#+TITLE: Inbox\n\n* Stray\n")
    _config('[capture]\ntarget = "gtd.org::Inbox"\n')
    idx = ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]
    _run("capture", "first thing", *idx)
    _run("ask", "add a task to file the taxes", *idx)
    text = (memex / "gtd.org").read_text()
    assert "first thing" in text and "File the taxes" in text
    assert (memex / "inbox.org").read_text() == "#+TITLE: Inbox\n\n* Stray\n"
    _config('[capture]\ntarget = "inbox.org"\n')
    _run("capture", "second thing", *idx)
    assert "second thing" in (memex / "inbox.org").read_text()


def test_effort_is_spelled_as_org_set_effort_writes_it(memex: Path, tmp_path: Path) -> None:
    idx = ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]
    _run("capture", "TODO sharpen the saw", *idx)
    _run("set-property", "sharpen the saw", "EFFORT", "1:00", *idx)
    _run("ask", "sharpen the saw will take 2 hours", *idx)
    text = (memex / "gtd.org").read_text()
    entry = text[text.index("sharpen the saw"):]
    entry = entry[:entry.index(":END:")]
    assert re.findall(r"^:(effort):", entry, re.I | re.M) == ["Effort"], entry


def test_capture_keeps_the_blank_line_before_the_next_heading(tmp_path: Path) -> None:
    mx = tmp_path / "mx"
    mx.mkdir()
    (mx / "gtd.org").write_text("* Inbox\n** old\nbody\n\n* Projects\n** p\n")
    m = Memex(mx, index=tmp_path / "i.sqlite3")
    try:
        m.sync()
        m.capture("new thing")
        text = (mx / "gtd.org").read_text()
    finally:
        m.close()
    assert "** new thing\n" in text and ":END:\n\n* Projects\n" in text
    assert text.index("body\n** new thing") >= 0


@pytest.mark.parametrize("query", ["plan", "alpha", "omega", "zeta"])
def test_snippets_never_cut_a_link(query: str) -> None:
    ident = str(uuid.uuid4())
    body = ("alpha " * 25 + f"see [[id:{ident}][the plan]] and id:{ident} and "
            "[[https://example.org/a/long/path][a page]] " + "omega " * 30 + "zeta")
    for width in (20, 40, 60, 90, 160):
        s = snippet(body, query, width)
        assert s.count("[[") == s.count("]]"), s
        for m in re.finditer(r"id:([\w-]+)", s):
            assert m.group(1) == ident, s


def test_agent_answer_has_no_diagnostics_or_cut_links(memex: Path, tmp_path: Path) -> None:
    target = str(uuid.uuid4())
    note = memex / "notes" / "lanterns.org"
    note.write_text(f"* Lantern maintenance\n:PROPERTIES:\n:ID: {target}\n:END:\n"
                    + "wick " * 40 + f"trim the lantern wick, see [[id:{target}][lanterns]] "
                    + "glass " * 40 + "\n")
    f = memex / "gtd.org"
    text = f.read_text() + "* @agent what do my notes say about the lantern wick?\n"
    f.write_text(text)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    before = _broken(memex, tmp_path)
    k = Kernel(m)
    try:
        k.submit({"sensor": "buffer-update", "file": "gtd.org", "text": text}).result(30)
        deadline = time.time() + 60
        while "Answer:" not in f.read_text():
            assert time.time() < deadline, k.ring.tail(20)
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        k.shutdown()
        m.close()
    answer = f.read_text()[len(text):]
    assert "lantern" in answer.lower()
    assert "vectors" not in answer and "sparse search" not in answer, answer
    assert answer.count("[[") == answer.count("]]"), answer
    assert "…" not in "".join(re.findall(r"id:\S*", answer)), answer
    assert _broken(memex, tmp_path) == before


def _broken(memex: Path, tmp_path: Path) -> list[dict]:
    # doctor exits 1 when any check fails (a model, a daemon): read its JSON regardless
    r = CliRunner().invoke(cli, ["doctor", "--memex", str(memex), "--index",
                                 str(tmp_path / "d.sqlite3"), "--json"])
    d = json.loads(r.output)
    links = next(c for c in d["checks"] if c["check"] == "links")
    return links.get("items", [])


def test_doctor_names_each_broken_link(memex: Path, tmp_path: Path) -> None:
    gone = str(uuid.uuid4())
    (memex / "notes" / "dangling.org").write_text(
        f"* A note\nsome text\n\nsee [[id:{gone}][the lost one]] here\n* Another\n")
    items = _broken(memex, tmp_path)
    assert {"file": "notes/dangling.org", "line": 4, "target": gone} in items
    r = CliRunner().invoke(cli, ["doctor", "--memex", str(memex), "--index",
                                 str(tmp_path / "d.sqlite3")])
    assert f"notes/dangling.org:4: id:{gone}" in r.output
