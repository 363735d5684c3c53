"""Tricky snippets parsed by Emacs itself (when installed) and by us: must agree.

Also scores a slice of the shared corpus with compare.py against the stored
Emacs reference.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opencortex.org import parse
from opencortex.org.orgfid import records

from . import test_links
from .conftest import CORPUS, ORGFID, REFERENCE

EXTRA = [
    "- item\ncontinued at col 0 [[a]]\n  - deeper =x\n  y= [[b]]",
    "1. [@3] [X] ordered :: tag stays body [[o]]",
    "  - a\n\n\n  - after two blank lines [[c]]",
    "#+begin_center\n#+begin_src\n[[no]]\n#+end_src\n[[yes]]\n#+end_center",
    "#+CAPTION: x\n# not a comment now [[p]]",
    ":drawer:\n:end:\n[[after]]",
    "\\begin{equation}\n[[no]]\n\\end{equation}\n[[yes]]",
    "+------+\n| [[t]] |\n+------+",
    "*bold\nacross* [[x]] *a\nb\nc* [[y]]",
    "_{[[sub]]} x^{[[sup]]} a_b",
    "call_f([[no]]) [[yes]] src_sh[:x 1]{[[no2]]}",
    "@@html:[[no]]@@ [[yes]] <<target [[no3]]>>",
    "[[https://a.b][multi\nline]] [[target\n  spread]]",
    "ftp://host/path; news:comp.emacs HTTPS://UPPER.case/x)",
    "<2026-01-01 Thu>--<2026-01-02 Fri> [2026-02-01 Sun 10:00-11:00] [1/3] [50%]",
    "[fn:label] inline [fn:2:with [[fnlink]]]",
    "\\\\ line break https://a.org\\\\",
    "#+BEGIN: clocktable\n[[dyn]]\n#+END:",
    "%%(diary-float t 4 2) [[no]]",
    "----- [[no]]\n-----",
    "#+RESULTS[abc]: x\n[[r]]",
    "[[file:x.org::#cid][d]] [[file:///abs/x]] [[docview:a.pdf::3]]",
]


def _snippets() -> list[str]:
    out = [case[0] for case in test_links.test_link_forms.pytestmark[0].args[1]]
    out += list(test_links.test_no_links_where_org_parses_no_objects.pytestmark[0].args[1])
    out += [case[0] for case in test_links.test_links_where_org_parses_objects.pytestmark[0].args[1]]
    return out + EXTRA


def _strip(recs: list[dict]) -> list[dict]:
    keep = ("line", "level", "title", "todo", "priority", "tags", "comment", "properties",
            "body", "links", "scheduled", "deadline", "closed")
    out = []
    for r in recs:
        if r.get("type") != "headline":
            continue
        d = {k: r.get(k) for k in keep}
        d["links"] = [list(x[:2]) for x in d["links"] or []]
        d["properties"] = [list(x) for x in d["properties"] or []]
        out.append(d)
    return out


@pytest.mark.emacs
def test_snippets_agree_with_emacs(emacs_dump) -> None:
    text = "".join(f"* case {i}\n{s}\n" for i, s in enumerate(_snippets()))
    theirs = _strip(emacs_dump(text))
    ours = _strip(records(parse(text)))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b, f"disagree on {b['title']}"


@pytest.mark.slow
def test_corpus_score(tmp_path) -> None:
    if not (ORGFID / "compare.py").exists() or not REFERENCE.exists():
        pytest.skip("orgfid harness not available")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(ORGFID / "compare.py"), "--parser", "opencortex.org.orgfid:dump",
         "--corpus", str(CORPUS), "--reference", str(REFERENCE), "--out-dir", str(out)],
        capture_output=True, text=True, timeout=600, check=True)
    summary = json.loads((out / "summary.json").read_text())
    full = summary["fully_agreeing_headlines"] / summary["emacs_headlines"]
    assert full >= 0.995, proc.stdout[-3000:]
    for name, row in summary["fields"].items():
        if row["rate"] is not None:
            assert row["rate"] >= 0.99, name
