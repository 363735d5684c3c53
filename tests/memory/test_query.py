"""The query language and the views, on the example memex (today = 2026-11-30)."""

from __future__ import annotations

import datetime as dt

import pytest

from opencortex.memex import Memex
from opencortex.memory.query import Predicate, QuerySyntaxError, date_range, parse_query

TODAY = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory):
    from ..conftest import EXAMPLE

    mx = Memex(EXAMPLE, index=tmp_path_factory.mktemp("q") / "i.sqlite3")
    mx.sync()
    yield mx
    mx.close()


def test_parse_query() -> None:
    assert parse_query('todo:TODO,NEXT -tags:home "exact phrase" cach*') == [
        Predicate("todo", ("TODO", "NEXT")), Predicate("tags", ("home",), True),
        Predicate("text", ("exact phrase", "cach*"))]
    assert parse_query("done scheduled:-7") == [Predicate("done"),
                                                Predicate("scheduled", ("-7",))]
    with pytest.raises(QuerySyntaxError):
        parse_query('"unclosed')
    with pytest.raises(QuerySyntaxError):
        date_range("yesterday-ish", TODAY)
    assert date_range("+7", TODAY).end == dt.date(2026, 12, 7)


def test_todo_and_done(m: Memex) -> None:
    nxt = m.query("todo:NEXT", today=TODAY)
    assert nxt and all(n.todo == "NEXT" for n in nxt)
    done = m.query("done")
    assert done and all(n.todo_type == "done" for n in done)
    assert {n.todo for n in m.query("todo")} >= {"TODO", "NEXT", "WAITING"}


def test_custom_keywords_per_file(m: Memex) -> None:
    book = m.query("file:projects/book-chapter-local-first.org todo")
    assert {n.todo for n in book} <= {"IDEA", "DRAFT", "REVIEW"} and book
    assert all(n.todo_type == "done" for n in m.query("todo:PUBLISHED"))


def test_tags_inherit_including_filetags(m: Memex) -> None:
    proj = m.query("tags:project")
    assert any(n.level > 1 for n in proj)  # sub-entries inherit :project:
    private = m.query("tags:private")
    assert private and all("private" in n.tags for n in private)


def test_dates(m: Memex) -> None:
    week = m.query("scheduled:+7 todo", today=TODAY)
    assert week and all(TODAY.isoformat() <= n.scheduled[1:11] <= "2026-12-07" for n in week)
    closed = m.query("closed:-7", today=TODAY)
    assert closed and all(n.closed[1:11] >= "2026-11-23" for n in closed)


def test_full_text_and_id_and_prop(m: Memex) -> None:
    hits = m.query("BM25")
    assert hits and any("BM25" in n.title or "bm25" in n.title.lower() for n in hits)
    n0 = next(n for n in m.query("id:" + hits[0].id)) if hits[0].id else None
    if n0:
        assert n0.key == hits[0].key
    assert all(n.properties.get("CATEGORY") for n in m.query("prop:CATEGORY"))


def test_views(m: Memex) -> None:
    projects = m.active_projects()
    files = {p.file for p in projects}
    assert len(projects) >= 4 and "projects/blog-migration.org" not in files
    done = m.recently_done(limit=3)
    assert len(done) == 3 and done[0].closed >= done[1].closed >= done[2].closed
    od = m.overdue(today=TODAY)
    assert od and all(n.todo_type == "todo" for n in od)
    ag = m.agenda(today=TODAY)
    assert ag["scheduled"] and ag["next"]
    nxt = m.next_actions(projects[0].key)
    assert all(n.file == projects[0].file for n in nxt)


def test_negation_keeps_headings_without_the_field(m: Memex) -> None:
    homelab = m.query("tags:homelab")
    kept = m.query("tags:homelab -todo:DONE")
    assert {n.key for n in kept} == {n.key for n in homelab if n.todo != "DONE"}
    assert any(n.todo is None for n in kept)  # plain headings stay, as org-ql's (not …)
    assert {n.key for n in m.query("tags:homelab not todo:DONE")} == {n.key for n in kept}
    either = m.query("tags:homelab or tags:rust")
    assert {n.key for n in either} == {n.key for n in m.query("tags:homelab")} | {
        n.key for n in m.query("tags:rust")}


def test_unknown_fields_keywords_and_priorities_name_the_valid_ones(m: Memex) -> None:
    with pytest.raises(QuerySyntaxError, match="did you mean scheduled"):
        parse_query("sheduled:today")
    with pytest.raises(QuerySyntaxError, match=r"valid keywords: .*NEXT"):
        m.query("todo:NXT", strict=True)
    with pytest.raises(QuerySyntaxError, match="valid priorities: A, B, C"):
        m.query("priority:Z", strict=True)
    with pytest.raises(QuerySyntaxError, match="'or' needs terms"):
        parse_query("tags:a or")
    assert m.query("todo:NXT") == []  # the lenient internal callers are unchanged


def test_query_cli_terms_and_options(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from opencortex.cli import cli

    from ..conftest import EXAMPLE

    def run(*args: str):
        return CliRunner().invoke(cli, ["query", "--memex", str(EXAMPLE), "--index",
                                        str(tmp_path / "i.sqlite3"), "--json", *args])

    full = json.loads(run("tags:homelab", "-todo:DONE").output)["count"]
    assert full > 1
    # a leading "-" term is a term; after "--" options are still options
    r = run("--", "tags:homelab", "-todo:DONE", "--limit", "1")
    assert r.exit_code == 0 and json.loads(r.output)["count"] == 1
    r = run("tags:homelab", "--limt", "1")
    assert r.exit_code != 0 and "--limit" in r.output
    r = run("sheduled:today")
    assert r.exit_code != 0 and "did you mean scheduled" in r.output
