"""Two kinds of commit a person names by what they are, not by their words: a release by
its version number ("when it hit its first 1.0" is the subject's "v1.0.0"), and a change
taken back ("they backed out the change that…") by a subject that says it reverts — git's
'Revert "…"' or a hand-written "revert!(scope): …" that names no commit."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from opencortex.recall.cue import read_cue, version_key, versions
from opencortex.recall.engine import _reverts_lead
from opencortex.recall.index import Hit, RecordIndex

from .test_git_history import _commit, _engine, repo  # noqa: F401  (the fixture)

NOW = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


def test_version_numbers_compare_as_releases() -> None:
    assert versions("when it finally hit its first 1.0, weeks after") == ["1.0"]
    assert versions("(release): v1.0.0 (#341)") == ["1.0"] == [version_key("v1.0.0")]
    assert versions("v1.1.0-rc1, 1.0.2, late March 2020 and 2021-08-02") == ["1.1-rc1", "1.0.2"]
    assert "2.0" in read_cue(["the day it reached 2.0 at last"], NOW).terms
    assert not any("." in t for t in read_cue(["a fix on 2021-08-02"], NOW).terms)


def test_a_release_named_by_its_number_is_the_subject_naming_that_version(
        repo: Path, tmp_path: Path) -> None:  # noqa: F811
    rc = _commit(repo, "a.el", "1\n", "(release): v2.0.0-rc1", when="2023-05-01T10:00:00+00:00")
    final = _commit(repo, "a.el", "2\n", "(release): v2.0.0 (#12)",
                    when="2023-05-20T10:00:00+00:00")
    _commit(repo, "a.el", "3\n", "Depend on emacsql 2.0.2", when="2023-06-01T10:00:00+00:00")
    _commit(repo, "a.el", "4\n", "Support Emacs 12.0", when="2023-06-02T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        engine.refresh(embed=False)
        index = RecordIndex.for_memex(m)
        scope, _, _ = index.scope(engine.base_roots, None)
        assert [h.record.session_id for h in index.search(["2.0"], scope)] == [final]
        assert [h.record.session_id for h in index.search(["2.0-rc1"], scope)] == [rc]
        rnd = engine.start("when it finally hit 2.0, a few weeks after the candidate",
                           invoked=True, now=NOW)
        assert rnd.recognizable is not None
        assert rnd.recognizable["members"][0]["locator"].endswith(final)
    finally:
        m.close()


def test_a_cue_about_a_change_taken_back_leads_with_the_commit_saying_it_reverts(
        repo: Path, tmp_path: Path) -> None:  # noqa: F811
    put = _commit(repo, "capture.el", "1\n", "(feat!)capture: put the new id on the heading",
                  when="2023-05-01T10:00:00+00:00")
    back = _commit(repo, "capture.el", "2\n",
                   "revert!(capture): do not generate a heading id for entries",
                   when="2024-05-01T10:00:00+00:00")
    fix = _commit(repo, "db.el", "3\n", "(fix)db: revert buffer before sync",
                  when="2024-06-01T10:00:00+00:00")
    engine, m = _engine(tmp_path, repo)
    try:
        engine.refresh(embed=False)
        index = RecordIndex.for_memex(m)
        scope, _, _ = index.scope(engine.base_roots, None)
        rows = {r.session_id: r for r in index.get(sorted(scope)).values()}
        hits = [Hit(rows[put], 3.0, ["id"]), Hit(rows[fix], 2.0, []), Hit(rows[back], 1.0, [])]
        order = [h.record.session_id for h in _reverts_lead(hits, index, scope)]
        # the hand-written revert leads; "revert buffer" is no revert of a change
        assert order == [back, put, fix]
        assert read_cue(["they backed out the change that put the id on the heading"],
                        NOW).undone
    finally:
        m.close()
