"""`opencortex query` with Org's match syntax selects exactly the headlines Emacs's
`org-map-entries` selects for the same match string; the field syntax's negation and
`or` select what the equivalent Org match selects (negation keeps headings without a
keyword, as org-ql's `(not …)` does).  Over generated files and the example memex."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path

import pytest

from .agenda_files import stamp
from .conftest import EXAMPLE_MEMEX, read_jsonl, run_elisp

pytestmark = pytest.mark.emacs

TODAY = dt.date(2026, 12, 7)

ORG_MATCHES = [
    "+work", "+work-urgent", "work|urgent", "+work+urgent", "+work-done|urgent",
    'TODO="NEXT"', 'TODO<>"DONE"', '-TODO="DONE"', 'PRIORITY="A"', 'PRIORITY<>"B"',
    'PRIORITY="B"', 'EFFORT>"1:00"', 'EFFORT<"0:30"', 'EFFORT="2:00"', "LEVEL=2",
    "LEVEL>1+work", "LEVEL<=1", "+work/NEXT", "/TODO|NEXT", "+work/!", "/!-NEXT",
    "{^wo}", "+homelab-TODO=\"DONE\"", 'CATEGORY="gtd"', 'CATEGORY<>"gtd"+urgent',
    'SCHEDULED<"<2026-12-10>"', 'DEADLINE>="<today>"', 'SCHEDULED="<2026-12-08>"',
    'SIZE>3', 'SIZE<=3&+work', 'TODO={NEXT\\|WAITING}', "+project+homelab",
    'ITEM={^Task 1}',
]

# the field syntax and the Org match string that must select the same headlines
EQUIVALENT = [
    ("tags:homelab -todo:DONE", '+homelab-TODO="DONE"'),
    ("tags:work or tags:urgent", "work|urgent"),
    ("tags:work not todo:DONE", '+work-TODO="DONE"'),
    ("-todo:DONE,CANCELLED", '-TODO="DONE"-TODO="CANCELLED"'),
    ("tags:work -priority:A", '+work-PRIORITY="A"'),
    ("todo:NEXT or priority:A level:1", 'TODO="NEXT"|PRIORITY="A"+LEVEL=1'),
]


def match_file(seed: int, n: int = 120) -> str:
    rnd = random.Random(seed)
    lines = ["#+TODO: TODO NEXT WAITING | DONE CANCELLED", f"#+CATEGORY: cat{seed}", ""]
    for i in range(n):
        level = rnd.randint(1, 3)
        kw = rnd.choice(["", "", "TODO ", "NEXT ", "WAITING ", "DONE ", "CANCELLED "])
        pri = rnd.choice(["", "", "", "[#A] ", "[#B] ", "[#C] "])
        tags = rnd.sample(["work", "urgent", "home", "done", "homelab", "project"],
                          rnd.randint(0, 2))
        tag_s = f" :{':'.join(tags)}:" if tags else ""
        lines.append(f"{'*' * level} {kw}{pri}Task {i}{tag_s}")
        if rnd.random() < 0.3:
            d = TODAY + dt.timedelta(days=rnd.randint(-5, 8))
            lines.append(f"  {'SCHEDULED' if rnd.random() < .5 else 'DEADLINE'}: {stamp(d)}")
        props = []
        if rnd.random() < 0.4:
            props.append(f":EFFORT: {rnd.choice(['0:15', '0:30', '1:00', '2:00', '10:00'])}")
        if rnd.random() < 0.3:
            props.append(f":SIZE: {rnd.randint(1, 5)}")
        if rnd.random() < 0.1:
            props.append(":CATEGORY: gtd")
        if props:
            lines += ["  :PROPERTIES:", *(f"  {p}" for p in props), "  :END:"]
        lines.append("")
    return "\n".join(lines)


def _memex(tmp_path: Path) -> Path:
    memex = tmp_path / "memex"
    shutil.copytree(EXAMPLE_MEMEX, memex)
    for seed in range(2):
        (memex / f"match{seed}.org").write_text(match_file(seed), encoding="utf-8")
    return memex


def _emacs(memex: Path, tmp_path: Path, matches: list[str]) -> dict[str, set]:
    spec = tmp_path / "matches.json"
    spec.write_text(json.dumps(matches), encoding="utf-8")
    out = tmp_path / "emacs.jsonl"
    files = sorted(str(p) for p in memex.rglob("*.org"))
    run_elisp("match_dump.el", str(memex), TODAY.isoformat(), str(spec), str(out), *files)
    got: dict[str, set] = {m: set() for m in matches}
    for r in read_jsonl(out):
        got[r["match"]].add((r["file"], r["line"]))
    return got


def _ours(opencortex_json, memex: Path, *terms: str) -> set:
    data = opencortex_json("query", "--memex", str(memex), "--today", TODAY.isoformat(),
                           *terms)
    return {(n["file"], n["line"]) for n in data["nodes"]}


def test_org_match_strings_select_what_org_map_entries_selects(tmp_path: Path,
                                                                opencortex_json) -> None:
    memex = _memex(tmp_path)
    theirs = _emacs(memex, tmp_path, ORG_MATCHES)
    assert sum(1 for m in ORG_MATCHES if theirs[m]) >= len(ORG_MATCHES) - 2
    for m in ORG_MATCHES:
        ours = _ours(opencortex_json, memex, m)
        assert ours == theirs[m], (m, sorted(theirs[m] - ours)[:5], sorted(ours - theirs[m])[:5])


def test_field_syntax_negation_and_or_agree_with_org(tmp_path: Path, opencortex_json) -> None:
    memex = _memex(tmp_path)
    theirs = _emacs(memex, tmp_path, [m for _, m in EQUIVALENT])
    for fields, m in EQUIVALENT:
        ours = _ours(opencortex_json, memex, *fields.split())
        assert theirs[m], m
        assert ours == theirs[m], (fields, m, sorted(theirs[m] - ours)[:5],
                                   sorted(ours - theirs[m])[:5])
    # a leading "-" term is a term, not an option; "--" only separates
    assert _ours(opencortex_json, memex, "-todo:DONE", "tags:homelab") == theirs[
        '+homelab-TODO="DONE"']
    assert _ours(opencortex_json, memex, "--", "tags:homelab", "-todo:DONE") == theirs[
        '+homelab-TODO="DONE"']
