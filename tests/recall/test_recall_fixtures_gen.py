"""The recall benchmark corpus (bench/recall_fixtures.py) parses with the real readers and
its cases point at records that exist, at the times the cases say."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from opencortex.recall.sources import aider, claude_code, codex, gemini
from opencortex.recall.sources import opencortex_sessions as ocs

BENCH = Path(__file__).resolve().parents[2] / "bench" / "recall_fixtures.py"
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _load():
    spec = importlib.util.spec_from_file_location("recall_fixtures", BENCH)
    if "recall_fixtures" in sys.modules:
        return sys.modules["recall_fixtures"]
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["recall_fixtures"] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("recall") / "corpus"
    cases_path = _load().generate(out, seed=0, now=NOW, distractors=10)
    cases = [json.loads(line) for line in cases_path.read_text().splitlines()]
    meta = json.loads((out / "corpus.json").read_text())
    modules = {"claude-code": (claude_code, out / "claude"), "codex": (codex, out / "codex"),
               "gemini": (gemini, out / "gemini"), "aider": (aider, out / "aider"),
               "opencortex": (ocs, out / "memex")}
    records = {src: [r for p in m.discover([root]) for r in m.read(p)]
               for src, (m, root) in modules.items()}
    return out, cases, meta, records


def _aware(t: dt.datetime) -> dt.datetime:
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)  # aider/opencortex: local = UTC here


def test_every_file_parses_cleanly(corpus):
    out, _, meta, records = corpus
    broken = {str(out / k): v for k, v in meta["deliberately_skipped_lines"].items()}
    assert broken, "one file should carry a deliberately truncated line"
    for src, recs in records.items():
        assert recs, src
        for r in recs:
            assert r.receipt.state == "succeeded", (src, r.locator, r.receipt)
            path = r.locator.split(":")[0] if src == "aider" else r.locator
            path = re.sub(r":\d+-\d+$", "", path)
            assert (r.receipt.skipped_lines or 0) == broken.get(path, 0), (src, r.locator)
            assert r.person_turns, (src, r.locator)
            if src == "codex":
                assert r.receipt.unverified_person_turns == 0
    counts = Counter(r.source for recs in records.values() for r in recs)
    for src in records:
        assert counts[src] == meta["counts"][src], src


def test_case_shape_and_spread(corpus):
    _, cases, _, _ = corpus
    assert 20 <= len(cases) <= 30
    assert len({c["id"] for c in cases}) == len(cases)
    by = Counter(c["target"]["source"] for c in cases)
    mins = {"claude-code": 3, "codex": 3, "gemini": 2, "aider": 2, "opencortex": 2, "git": 4,
            "notes": 3}
    for src, n in mins.items():
        assert by[src] >= n, (src, by)
    assert {"session", "line", "topic", "concept"} <= {c["whole"] for c in cases}
    for c in cases:
        assert c["cue"] and c["added_cue"] and c["kind"]
        assert dt.datetime.fromisoformat(c["now"]) == NOW
        assert len(c["near_misses"]) >= 2, c["id"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_targets_exist_at_their_times(corpus):
    out, cases, _, records = corpus
    repo = out / "repo"
    by_id = {(r.source, r.session_id): r for recs in records.values() for r in recs}
    for c in cases:
        t = c["target"]
        when = dt.datetime.fromisoformat(t["time"])
        if c["time_range"]:
            lo, hi = (dt.datetime.fromisoformat(x) for x in c["time_range"])
            assert lo <= when <= hi, c["id"]
        assert when < NOW, c["id"]
        if t["source"] == "git":
            assert re.fullmatch(r"[0-9a-f]{40}", t["id"])
            subprocess.run(["git", "-C", str(repo), "cat-file", "-e", t["id"]], check=True)
            assert t["locator_contains"] == t["id"]
            assert dt.datetime.fromisoformat(_git(repo, "log", "-1", "--format=%aI",
                                                  t["id"])) == when, c["id"]
        elif t["source"] == "notes":
            rel, title = t["id"].split("::", 1)
            text = (out / "memex" / rel).read_text()
            m = re.search(rf"^\*+ (?:(?:TODO|DONE) )?{re.escape(title)}(?:\s+:[\w:]+:)?$\n"
                          r"(?:CLOSED: .*\n)?:PROPERTIES:\n:ID: .+\n:CREATED: \[(\S+) \w+ "
                          r"(\d\d:\d\d)\]", text, re.M)
            assert m, c["id"]
            assert dt.datetime.fromisoformat(f"{m[1]}T{m[2]}+00:00") == when, c["id"]
            assert t["locator_contains"] == f"memex/{rel}"
        else:
            rec = by_id.get((t["source"], t["id"]))
            assert rec is not None, c["id"]
            assert t["locator_contains"] in rec.locator, (c["id"], rec.locator)
            assert rec.started is not None
            assert abs(_aware(rec.started) - when) < dt.timedelta(minutes=1), c["id"]
            if t.get("turn_contains"):
                assert any(t["turn_contains"] in turn.text for turn in rec.turns), c["id"]
        for near in c["near_misses"]:
            if near["source"] == "git":
                subprocess.run(["git", "-C", str(repo), "cat-file", "-e", near["id"]],
                               check=True)
            elif near["source"] == "notes":
                rel, title = near["id"].split("::", 1)
                assert title in (out / "memex" / rel).read_text()
            else:
                assert (near["source"], near["id"]) in by_id, (c["id"], near)


def test_sessions_join_commits_by_cwd_branch_and_time(corpus):
    out, cases, meta, records = corpus
    repo = out / "repo"
    assert meta["repo"] == str(repo)
    sessions = {r.session_id: r for r in records["claude-code"] + records["codex"]}
    by_key = {c["id"]: c for c in cases}
    for sess_case, commit_case in (("cc-flaky-login", "git-retry-removed"),
                                   ("cc-cache-ttl", "git-ttl")):
        rec = sessions[by_key[sess_case]["target"]["id"]]
        sha = by_key[commit_case]["target"]["id"]
        assert rec.cwd == str(repo)
        assert _git(repo, "rev-parse", rec.branch) == sha  # the branch names the commit
        committed = dt.datetime.fromisoformat(_git(repo, "log", "-1", "--format=%cI", sha))
        assert rec.started < committed < rec.started + dt.timedelta(hours=2)
        assert any(sha[:7] in t.text for t in rec.turns)  # the commit output quotes it
    # every author date in the repository is in the past year, before now
    dates = [dt.datetime.fromisoformat(x) for x in _git(repo, "log", "--format=%aI").split()]
    assert all(NOW - dt.timedelta(days=400) < d < NOW for d in dates)
    assert len(dates) == meta["counts"]["git"]


def test_deterministic(tmp_path):
    mod = _load()
    a = mod.generate(tmp_path / "a", seed=3, now=NOW, distractors=4)
    b = mod.generate(tmp_path / "b", seed=3, now=NOW, distractors=4)

    def strip(p: Path) -> str:  # paths differ, and so do ids hashed from them
        text = p.read_text().replace(str(p.parent), "OUT")
        text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(p.parent)), "SLUG")
        text = re.sub(r"/tmp/[0-9a-f]{64}/", "/tmp/HASH/", text)  # gemini: sha256 of cwd
        return re.sub(r'"[0-9a-f]{12}-\d+"', '"AIDER"', text)

    assert strip(a) == strip(b)
