"""Markdown -> Org: a corpus of model answers rendered, then read back by Emacs's
org-element (one Emacs run for all of them): headings are sub-headlines (or bold lines),
code blocks keep their language and exact code, links are links, tables are tables, and
no Markdown syntax and no unintended structure is left."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from opencortex.write.markdown_org import _parser, looks_like_org, model_text_to_org
from opencortex.write.neutralise import neutralise_body, neutralise_title, normalise_lines

FIXTURES = Path(__file__).parent / "fixtures" / "markdown_answers"
MD_DUMP = Path(__file__).parent / "md_dump.el"
SAFE = ("http", "https", "mailto", "ftp", "file", "id", "doi")


def _answers() -> list[tuple[str, str]]:
    out = []
    for f in sorted(FIXTURES.glob("*.md")):
        with open(f, encoding="utf-8", newline="") as fh:
            out.append((f.stem, fh.read()))
    return out


def _org_dump(paths: list[Path], out: Path) -> dict[str, dict]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed")
    subprocess.run([emacs, "-Q", "--batch", "-l", str(MD_DUMP), "--", str(out),
                    *map(str, paths)], check=True, capture_output=True, timeout=600)
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    for r in recs:
        assert "error" not in r, r
    return {Path(r["file"]).name: r for r in recs}


def _expected(md: str) -> dict:
    """What the Markdown means, by markdown-it (the reference Markdown parser)."""
    text = normalise_lines(md)
    toks = _parser().parse(text)
    exp: dict = {"headings": 0, "fences": [], "links": [], "tables": 0, "rows": 0,
                 "quotes": 0, "unsafe": 0}
    for t in toks:
        if t.type == "heading_open" and t.level == 0:
            exp["headings"] += 1
        elif t.type in ("fence", "code_block"):
            lang = (t.info or "").split()[:1]
            exp["fences"].append((lang[0] if lang else None, t.content))
        elif t.type == "table_open":
            exp["tables"] += 1
        elif t.type == "tr_open":
            exp["rows"] += 1
        elif t.type == "blockquote_open":
            exp["quotes"] += 1
        for c in t.children or []:
            url = c.attrs.get("href") if c.type == "link_open" else \
                c.attrs.get("src") if c.type == "image" else None
            if url is not None:
                scheme = str(url).split(":", 1)[0].lower() if ":" in str(url) else ""
                if scheme in SAFE:
                    exp["links"].append(str(url))
                else:
                    exp["unsafe"] += 1
    return exp


_MD_LEFT = [re.compile(r"\*\*\S|\S\*\*"), re.compile(r"^[ \t]*(?:```|~~~)", re.M),
            re.compile(r"\[[^\]\n]+\]\((?:https?|mailto|ftp):[^)\s]*\)"),
            re.compile(r"^#{1,6}[ \t]", re.M), re.compile(r"(?:^|\s)__\S")]


def _outside_blocks(org: str) -> str:
    """The text outside src/example blocks, headline stars dropped."""
    org = re.sub(r"^[ \t]*#\+begin_(src|example)\b.*?^[ \t]*#\+end_\1[ \t]*$", "", org,
                 flags=re.M | re.S | re.I)
    return re.sub(r"^\*+ ", "", org, flags=re.M)


def test_corpus_renders_as_intended_in_emacs(tmp_path: Path) -> None:
    answers = _answers()
    assert len(answers) >= 50
    files, rendered = [], {}
    for name, md in answers:
        for mode, level in (("sub", 1), ("flat", None)):
            org = model_text_to_org(md, parent_level=level)
            rendered[(name, mode)] = org
            f = tmp_path / f"{mode}-{name}.org"
            f.write_text("* Answer\n" + org + "\n", encoding="utf-8")
            files.append(f)
    dumps = _org_dump(files, tmp_path / "dump.jsonl")
    for name, md in answers:
        org_input = looks_like_org(normalise_lines(md))
        exp = _expected(md)
        for mode in ("sub", "flat"):
            org = rendered[(name, mode)]
            d = dumps[f"{mode}-{name}.org"]
            label = f"{name} ({mode})"
            heads = d["headlines"]
            assert heads[0][:2] == [1, "Answer"], label
            assert d["structure"] == [], (label, d["structure"])  # no keyword, drawer, ...
            for level, title, todo, tags in heads[1:]:
                assert level >= 2 and todo is None and tags == [], (label, title)
                assert not re.search(r"(?:^|\s)@agent\b", title), label
            if mode == "flat":
                assert len(heads) == 1, (label, heads)
            elif not org_input:
                assert len(heads) - 1 == exp["headings"], (label, heads)
            for lang, code in exp["fences"]:
                if lang:
                    src = [[la, textwrap.dedent(v)] for la, v in d["src"]]
                    assert [lang, textwrap.dedent(code)] in src, (label, lang, code, src)
                else:
                    assert code in d["example"], (label, code, d["example"])
            raws = [raw for _, raw in d["links"]]
            for url in exp["links"]:
                assert url in raws, (label, url, raws)
            assert not any(t in ("javascript", "elisp", "shell") for t, _ in d["links"]), label
            if not org_input:
                assert d["tables"] == exp["tables"] and d["table_rows"] == exp["rows"], label
                assert d["quotes"] == exp["quotes"], label
            rest = _outside_blocks(org)
            for pat in _MD_LEFT:
                assert not pat.search(rest), (label, pat.pattern, rest)


def test_specific_constructs() -> None:
    r = model_text_to_org
    assert r("**b** *i* `c` ~~s~~", parent_level=None) == "*b* /i/ ~c~ +s+"
    assert r("[t](https://x.org/a)", parent_level=None) == "[[https://x.org/a][t]]"
    assert r("# H\ntext", parent_level=None) == "*H*\n\ntext"
    assert r("# H\n## I", parent_level=2) == "*** H\n\n**** I"
    assert r("# H\n## I", parent_level=1, odd=True) == "*** H\n\n***** I"
    assert r("- [x] a\n- [ ] b", parent_level=None) == "- [X] a\n- [ ] b"
    assert r("1. a\n   - b\n     1. c", parent_level=None) == "1. a\n   - b\n     1. c"
    assert r("```py\n* x\n#+end_src\n```", parent_level=None) == \
        "#+begin_src py\n,* x\n,#+end_src\n#+end_src"
    assert r("> # q\n> text", parent_level=1) == "#+begin_quote\n*q*\n\ntext\n#+end_quote"
    assert r("a  \nb", parent_level=None) == "a\\\\\nb"
    # already Org passes through (headlines re-levelled under the answer)
    org = "#+begin_src python\nx = 1\n#+end_src\nSee [[https://o.org][o]] and /this/."
    assert r(org, parent_level=None) == org
    assert r("* A\nsee [[id:x][x]]\n** B", parent_level=3) == "**** A\nsee [[id:x][x]]\n***** B"
    assert r("* a\n* b", parent_level=3) == "- a\n- b"  # without Org syntax: Markdown bullets


def test_neutraliser_is_idempotent_and_keeps_words() -> None:
    samples = ["* a\n#+TODO: x\n:END:\nSCHEDULED: <2026-01-01>\n  #+begin_src py\n* c\n"
               "  #+end_src\n#+begin_quote\n* q\n", "plain text\n- list\n| t | a |",
               "x\r\ny\rz\u2028w\x85v\x00u"]
    for s in samples:
        once = neutralise_body(s)
        assert neutralise_body(once) == once
        assert re.sub(r"[,\s]", "", once).replace("\ufffd", "") == \
            re.sub(r"[,\s]", "", normalise_lines(s)).replace("\ufffd", "").replace(
                "#+begin_srcpy", "#+begin_srcpy")
    t = neutralise_title("Plan @agent now\n* TODO x :private:")
    assert "\n" not in t and "=@agent=" in t and t.endswith("\u00a0:private:")
    assert neutralise_title(t) == t


def test_agent_answer_from_a_markdown_model_reply_is_org(memex: Path, tmp_path: Path) -> None:
    """An @agent request answered by a model (local OpenAI-compatible test server) that
    replies in Markdown: the answer under the headline is Org, with no Markdown left."""
    from opencortex.memex import Memex
    from opencortex.pipeline.kernel import Kernel
    from opencortex.reason.reasoner import Reasoner

    from ..llm.conftest import FakeLLM, Reply, completion
    from ..pipeline.test_kernel_more import ROUTE_NOTES, _gateway
    from .emacs_batch import emacs_dump_many

    # it cites a numbered passage, as the notes skill asks (an uncited answer is replaced
    # by the extractive one)
    reply = ("## BM25 saturation\n\nThe **k1** parameter caps term frequency [1]; see "
             "[the paper](https://example.org/bm25).\n\n```python\nscore = tf * (k1 + 1)\n"
             "# * not a headline\n```\n\n| k1 | effect |\n|---|---|\n| 1.2 | default |\n")
    server = FakeLLM()
    try:
        server.push(ROUTE_NOTES, Reply(body=completion(json.dumps(
            {"action": "reply", "text": reply, "citations": []}))))
        f = memex / "notes" / "bm25.org"
        text = f.read_text().rstrip("\n") + "\n* @agent explain BM25 saturation\n"
        f.write_text(text)
        m = Memex(memex, index=tmp_path / "i.sqlite3")
        m.sync()
        k = Kernel(m, reasoner=Reasoner(_gateway(server)), record_sessions=False)
        k.submit({"sensor": "buffer-update", "file": "notes/bm25.org", "text": text}).result(30)
        deadline = time.time() + 30
        while "Answer:" not in f.read_text():
            assert time.time() < deadline, k.ring.tail(20)
            time.sleep(0.05)
        time.sleep(0.3)
        k.shutdown()
        m.close()
    finally:
        server.close()
    out = f.read_text()
    answer = out[out.index("Answer: explain BM25 saturation"):]
    for pat in _MD_LEFT:
        assert not pat.search(_outside_blocks(answer)), (pat.pattern, answer)
    assert "#+begin_src python\nscore = tf * (k1 + 1)\n# * not a headline\n#+end_src" in answer
    assert "[[https://example.org/bm25][the paper]]" in answer and "*k1*" in answer
    heads = emacs_dump_many([f], memex)["notes/bm25.org"]["headlines"]
    req = next(h for h in heads if "@agent" in h["title"])
    i = heads.index(req)
    assert heads[i + 1]["title"] == "Answer: explain BM25 saturation"
    assert heads[i + 1]["level"] == req["level"] + 1
    assert heads[i + 2]["title"] == "BM25 saturation" and heads[i + 2]["level"] == req["level"] + 2
    assert len(heads) == i + 3
