"""Foundry scaffolds a confined, journaled, never-clobbering project; skill-creator drafts,
validates, writes and loads a literate skill, or says why it was rejected."""

from __future__ import annotations

import pytest

from opencortex.errors import WriteError
from opencortex.guard.trust import TrustStore
from opencortex.memex import Memex
from opencortex.org.parser import parse
from opencortex.skills import foundry
from opencortex.skills import skill_creator as sc
from opencortex.skills.base import Action, Rejection
from opencortex.skills.registry import SkillRegistry

from .conftest import NOW, ctx_for, run

FOUNDRY = foundry.skill()
CREATOR = sc.skill()


def test_scaffold_project(mx: Memex) -> None:
    _p, a = run(FOUNDRY, ctx_for(mx, "create a new project called Garden Shed Rebuild"))
    assert a == Action("memex.write", {"op": "project",
                                       "path": "projects/garden-shed-rebuild/index.org",
                                       "name": "Garden Shed Rebuild",
                                       "slug": "garden-shed-rebuild"}, origin="foundry")
    text, data = foundry.apply_memex_op(mx, {**a.args, "now": NOW})
    folder = mx.root / "projects" / "garden-shed-rebuild"
    assert sorted(x.name for x in folder.iterdir()) == ["README.org", "index.org", "notes.org"]
    top = parse((folder / "index.org").read_text()).headings[0]
    assert top.title == "Garden Shed Rebuild" and top.tags == ["project"]
    assert top.id == data["id"] and top.get("CREATED") == "[2026-11-30 Mon 10:00]"
    assert f"id:{data['id']}" in text and "projects/garden-shed-rebuild/index.org:4" in text
    assert any(n.id == data["id"] for n in mx.active_projects())  # indexed
    # never overwrite
    _p, again = run(FOUNDRY, ctx_for(mx, target="foundry", name="Garden shed rebuild"))
    assert isinstance(again, Rejection) and "already exists" in again.reason
    with pytest.raises(WriteError, match="already exists"):
        foundry.apply_memex_op(mx, a.args)
    # journaled: undo removes the three files; the empty folder may be reused
    assert len(mx.undo(3)) == 3
    assert not any(folder.iterdir())
    foundry.apply_memex_op(mx, a.args)
    assert (folder / "index.org").exists()


def test_scaffold_is_confined_and_atomic(mx: Memex, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (mx.root / "projects" / "escape").symlink_to(outside)
    _p, a = run(FOUNDRY, ctx_for(mx, target="foundry", name="Escape"))
    assert isinstance(a, Rejection) and "outside the memex" in a.reason
    assert foundry.slugify("../../etc/passwd") == "etc-passwd"
    # a file that appears between check and create is not clobbered; nothing is left
    folder = mx.root / "projects" / "race"
    folder.mkdir()
    orig = foundry._check_folder
    foundry._check_folder = lambda m, s: (f"projects/{s}", None)  # type: ignore[assignment]
    try:
        (folder / "notes.org").write_text("mine\n")
        with pytest.raises(WriteError, match="appeared meanwhile"):
            foundry.scaffold(mx, "Race")
    finally:
        foundry._check_folder = orig  # type: ignore[assignment]
    assert sorted(x.name for x in folder.iterdir()) == ["notes.org"]
    assert (folder / "notes.org").read_text() == "mine\n"


def test_skill_creator_writes_and_loads(mx: Memex, tmp_path) -> None:
    desc = "tell me the weather forecast for cycling"
    _p, a = run(CREATOR, ctx_for(mx, target="skill-creator", description=desc))
    assert isinstance(a, Action), a
    assert a.args["path"] == "skills/weather-forecast-cycling.org"
    store = TrustStore()  # the XDG state dir of this test
    reg = SkillRegistry(trust=store)
    # passing the trust store = the person approved exactly this text (the actuator does
    # so only with an approved Pending): the written bytes become trusted
    text, data = sc.apply_memex_op(mx, a.args, registry=reg, trust=store)
    assert data["loaded"] and data["fired"] and data["status"] == "ok"
    assert store.is_trusted(mx.root, a.args["path"], (mx.root / a.args["path"]).read_bytes())
    assert "its trigger fires on" in text
    s = reg.get("weather-forecast-cycling")
    assert s is not None and s.source.startswith("literate:")
    assert s.offline is not None and "weather" in s.offline(ctx_for(mx, "x"))["text"]
    assert not s.trigger(ctx_for(mx, "caching strategies"))
    # never overwrite; the next draft picks another name
    with pytest.raises(WriteError, match="already exists"):
        sc.apply_memex_op(mx, a.args)
    _p2, a2 = run(CREATOR, ctx_for(mx, "create a skill that " + desc))
    assert a2.args["path"] == "skills/weather-forecast-cycling-2.org"


@pytest.mark.parametrize(("code", "why"), [
    ("def f(:\n  pass", "python syntax error at line 1"),
    ("Y = 1", "does not define SKILL"),
    ("SKILL = 3", "SKILL is a int, not a Skill"),
    ("SKILL = Skill('x', trigger=3)", "trigger must be callable"),
    ("SKILL = Skill('Bad Name!')", "must be a short lowercase name"),
    ("SKILL = Skill(make_name())", "not a literal"),
    ("SKILL = Skill('shell')", "reserved"),
    ("SKILL = Skill('x', priority=500)", "priority 500"),
])
def test_validation_says_why(mx: Memex, code: str, why: str) -> None:
    v = sc.validate(f"#+TITLE: t\n#+begin_src python\n{code}\n#+end_src\n", "hello", mx)
    assert not v.ok and why in v.reason, v.reason


@pytest.mark.parametrize(("code", "warn"), [
    ("import os", "imports are not allowed"),
    ("X = ().__class__", "attribute '__class__'"),
    ("X = open('/etc/passwd')", "'open' is not allowed"),
    ("def _g():\n    yield\nX = _g().gi_frame.f_builtins", "attribute 'gi_frame'"),
])
def test_lint_warnings_are_not_the_boundary(mx: Memex, code: str, warn: str,
                                            tmp_path) -> None:
    """The lint never runs the code: its findings are warnings for the approval."""
    marker = tmp_path / "ran"
    org = (f"#+begin_src python\n{code}\nopen({str(marker)!r}, 'w')\n"
           "SKILL = Skill('x')\n#+end_src\n")
    v = sc.validate(org, "hello", mx)
    assert v.ok and v.name == "x" and any(warn in w for w in v.warnings), v
    assert not marker.exists()


def test_bad_model_draft_is_rejected_not_written(mx: Memex) -> None:
    bad = {"action": "memex", "op": "skill", "description": "x",
           "text": "#+begin_src python\nimport subprocess\n#+end_src\n"}
    out = CREATOR.symbolic(bad, ctx_for(mx, "x"))  # type: ignore[misc]
    assert isinstance(out, Rejection) and "does not define SKILL" in out.reason
    assert not (mx.root / "skills").exists()
    prompt = sc.draft_prompt("summarise my sourdough notes")
    assert "SKILL = Skill(" in prompt and "No import statements" in prompt
    assert sc.validate(sc.draft_org("summarise my sourdough notes"), "sourdough").ok
