"""Recall over a git history as a person meets one: a repository with a detached HEAD and
no local branch (a fresh clone of a bundle, a CI checkout) is searched through HEAD's
history; commits are ranked by what the cue means, a long body does not win by volume,
and a presented candidate is records, each once, with its best lines."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.recall.engine import Recall, parse_source
from opencortex.recall.index import RecordIndex

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def _git(repo: Path, *args: str, when: str = "2024-01-01T10:00:00+00:00",
         who: str = "Ada Lovelace") -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL="a@x",
               GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL="a@x",
               GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def _commit(repo: Path, path: str, text: str, message: str, **kw: str) -> str:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    _git(repo, "add", path, **kw)
    _git(repo, "commit", "-qm", message, **kw)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    _commit(r, "README.md", "a tool\n", "Add a readme", when="2023-02-01T10:00:00+00:00")
    _commit(r, "src/store.py", "x = 1\n", "Keep the cache in a database file on disk",
            when="2023-03-01T10:00:00+00:00")
    return r


def _engine(tmp_path: Path, repo: Path) -> tuple[Recall, Memex]:
    (tmp_path / "memex").mkdir(exist_ok=True)
    m = Memex(tmp_path / "memex", tmp_path / "index.sqlite3")
    return Recall(m, [parse_source(f"git:{repo}")], defaults=False,
                  state_dir=tmp_path / "state", gateway=False), m


def test_a_detached_head_without_branches_is_searched_through_its_history(
        repo: Path, tmp_path: Path) -> None:
    _git(repo, "checkout", "-q", "--detach")
    _git(repo, "branch", "-q", "-D", "main")
    assert _git(repo, "for-each-ref", "refs/heads") == ""
    engine, m = _engine(tmp_path, repo)
    try:
        assert engine.refresh(embed=False).commits_added == 2
        # a commit made on the detached HEAD is picked up incrementally
        _commit(repo, "NOTES.md", "n\n", "Write down the release steps",
                when="2023-04-01T10:00:00+00:00")
        again = engine.refresh(embed=False)
        assert again.commits_added == 1
        assert RecordIndex.for_memex(m).counts().get("commit") == 3
    finally:
        m.close()


def test_dated_phrases_compose_and_the_leading_one_wins() -> None:
    from opencortex.recall.cue import read_cue, resolve_time

    now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)

    def days(phrase: str) -> tuple[dt.date, dt.date]:
        r = resolve_time(phrase, now)
        assert r is not None, phrase
        return r.start.date(), r.end.date()

    lo, hi = days("it was late March 2020")
    assert lo >= dt.date(2020, 3, 10) and dt.date(2020, 3, 31) <= hi <= dt.date(2020, 4, 10)
    lo, hi = days("leap day 2020")
    assert lo <= dt.date(2020, 2, 29) < hi and (hi - lo).days <= 10
    lo, hi = days("mid-2025")
    assert dt.date(2025, 3, 1) <= lo <= dt.date(2025, 5, 1) and hi <= dt.date(2025, 10, 1)
    lo, hi = days("written in spring 2023, merged in November 2025")
    assert lo.year == 2023 and hi.year == 2023  # the one the person leads with
    lo, hi = days("the end of December 2025")
    assert lo >= dt.date(2025, 12, 1) and hi <= dt.date(2026, 1, 15)
    assert resolve_time("it may be the cache", now) is None  # "may" alone is a verb
    cue = read_cue(["the change in late March 2020, PR number 200"], now)
    assert "#200" in cue.terms and "late" not in cue.terms and "march" not in cue.terms


def test_a_long_body_does_not_win_by_volume(repo: Path, tmp_path: Path) -> None:
    filler = "\n".join(f"* merged change {n}: tweak the parser, docs and tests"
                       for n in range(60))
    short = _commit(repo, "src/db.py", "z = 3\n",
                    "Rebuild incrementally\n\nOnly the cache database of changed files.",
                    when="2023-04-01T10:00:00+00:00")
    # the merge comes later: read first from the log, it would win a tie
    _commit(repo, "src/big.py", "y = 2\n", "Merge the big branch\n\n" + filler +
            "\n* the cache database of changed files", when="2023-05-01T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        engine.refresh(embed=False)
        index = RecordIndex.for_memex(m)
        scope, _, _ = index.scope(engine.base_roots, None)
        hits = index.search(["cache", "database", "changed"], scope)
        assert hits[0].record.session_id == short
    finally:
        m.close()


def test_a_candidate_is_records_each_once_with_its_best_lines(repo: Path,
                                                             tmp_path: Path) -> None:
    body = "\n".join(f"- the release checklist step {n}: tag, build and upload the release"
                     for n in range(12))
    sha = _commit(repo, "RELEASE.md", "steps\n", "Write the release checklist\n\n" + body,
                  when="2023-07-01T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        rnd = engine.start("the commit with the release checklist steps to tag, build and "
                           "upload", now=NOW)
        assert rnd.state == "presented", rnd.to_dict()
        recs = [r["record"] for r in rnd.records]
        assert recs and len(recs) == len(set(recs))
        assert rnd.records[0]["record"].endswith(sha)
        assert len(rnd.records[0]["lines"]) <= 3
        per = [c["cite"]["record"] for c in rnd.story]
        assert all(per.count(r) <= 4 for r in set(per))
        text = rnd.render()
        assert text.count(f"Commit {sha}") == 1, text  # one bullet for the record
        assert len(rnd.recognizable["members"]) <= 8
    finally:
        m.close()


def test_people_and_files_the_cue_names_narrow_the_commits(repo: Path,
                                                           tmp_path: Path) -> None:
    a = _commit(repo, "src/parse.py", "a = 1\n", "Speed up parsing of headlines",
                when="2023-08-01T10:00:00+00:00", who="Grace Hopper")
    b = _commit(repo, "src/parse.py", "a = 2\n", "Speed up parsing of headlines again",
                when="2023-08-02T10:00:00+00:00", who="Alan Turing")
    c = _commit(repo, "README.md", "a tool that parses\n", "Speed up parsing: say so",
                when="2023-08-03T10:00:00+00:00", who="Alan Turing")
    engine, m = _engine(tmp_path, repo)
    try:
        for cue, want, why in (
                ("that speed-up of the headline parsing Grace did", a, "people"),
                ("the parsing speed-up Turing made in the README", c, "files")):
            rnd = engine.start(cue, now=NOW)
            assert rnd.state == "presented", rnd.to_dict()
            lead = rnd.recognizable["members"][0]["locator"]
            assert lead.endswith(want), (cue, lead)
            assert rnd.searched["narrowed"][why], rnd.searched
        assert b
    finally:
        m.close()


def test_a_change_taken_back_presents_its_revert(repo: Path, tmp_path: Path) -> None:
    _commit(repo, "src/hooks.py", "h = 1\n", "Store the last opened time of every file",
            when="2023-09-01T10:00:00+00:00")
    _git(repo, "revert", "--no-edit", "HEAD", when="2023-09-01T18:00:00+00:00")
    revert = _git(repo, "rev-parse", "HEAD").strip()
    engine, m = _engine(tmp_path, repo)
    try:
        rnd = engine.start("they stored the last opened time of every file and took it "
                           "back the same day", now=NOW)
        assert rnd.state == "presented", rnd.to_dict()
        assert rnd.cue["undone"] is True
        assert rnd.recognizable["members"][0]["locator"].endswith(revert)
    finally:
        m.close()
