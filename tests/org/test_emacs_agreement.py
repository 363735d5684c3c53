"""Tricky snippets and the repository's own Org files, parsed by Emacs itself and by us: must
agree field by field.

Emacs's side is ``org_element_dump.el`` beside this file (the project's own script, run with
the emacs-nox that scripts/setup.sh installs). The score over the large dev corpus outside
the repository is an opt-in bench: ``bench/org_fidelity.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from opencortex.org import parse
from opencortex.org.orgfid import dump, records

from ..conftest import DUMP_EL, EXAMPLE
from . import test_links

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


FIXTURES = Path(__file__).parent / "fixtures"
DUMPED_KEYWORDS = ("TITLE", "FILETAGS", "TODO", "SEQ_TODO", "TYP_TODO", "STARTUP", "SETUPFILE",
                   "LINK")
"""The in-buffer keywords the dump reports (ours reports every keyword)."""


def _repository_org_files() -> list[Path]:
    files = sorted(EXAMPLE.rglob("*.org")) + sorted(FIXTURES.rglob("*.org"))
    assert len(files) >= 20, files  # the example memex and the parser fixtures are here
    return files


@pytest.mark.emacs
def test_repository_org_files_agree_with_emacs(tmp_path: Path) -> None:
    """Every Org file of the repository: every field of every record the same as Emacs's."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (scripts/setup.sh installs emacs-nox)")
    files = _repository_org_files()
    lst, out = tmp_path / "files.txt", tmp_path / "emacs.jsonl"
    lst.write_text("\n".join(str(f) for f in files) + "\n", encoding="utf-8")
    subprocess.run([emacs, "-Q", "--batch", "-l", str(DUMP_EL), "--", "--root", "/",
                    "--out", str(out), "--list", str(lst)],
                   check=True, capture_output=True, timeout=300)
    theirs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    ours: list[dict] = []
    for f in files:
        for r in dump(str(f)):
            if r["type"] == "file":
                r["keywords"] = {k: v for k, v in r["keywords"].items() if k in DUMPED_KEYWORDS}
            ours.append(dict(r, file=str(f.relative_to("/"))))
    assert sum(r["type"] == "headline" for r in theirs) > 200
    assert [r.get("error") for r in theirs if r["type"] == "file"] == [None] * len(files)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        b = {k: v for k, v in b.items() if k != "error"}
        assert json.loads(json.dumps(a)) == b, f"{b['file']}: disagree on {b.get('title')!r}"
