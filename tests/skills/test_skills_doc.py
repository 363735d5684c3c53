"""docs/SKILLS.md's example literate skill, as written there, loads once trusted and
answers (so the documented API is the one the registry gives a skill file)."""

from __future__ import annotations

import re
from pathlib import Path

from opencortex.guard.trust import TrustStore
from opencortex.signal import Signal
from opencortex.skills.base import Context
from opencortex.skills.registry import SkillRegistry

DOC = Path(__file__).resolve().parents[2] / "docs" / "SKILLS.md"


def test_the_documented_skill_loads_and_answers(tmp_path: Path) -> None:
    example = re.search(r"```org\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert example is not None
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "wave.org").write_text(example.group(1), encoding="utf-8")
    (skills / "greetings.org").write_text(
        "#+TITLE: greetings\n#+begin_src python\nGREETING = 'hello'\n"
        "SKILL = Skill('greetings', 1, trigger=lambda c: False)\n#+end_src\n",
        encoding="utf-8")
    store = TrustStore()
    reg = SkillRegistry(trust=store)
    reg.load_literate(skills)
    assert reg.get("wave") is None  # not trusted: never run
    for f in skills.glob("*.org"):
        store.trust(tmp_path, f"skills/{f.name}", f.stem, f.read_bytes(), by="test")
    reg.load_literate(skills)
    wave = reg.get("wave")
    assert wave is not None and wave.priority == 45 and wave.description == "wave back"
    ctx = Context(Signal(type="request", payload={"sensor": "user-input", "text": "Wave"},
                         meta={}),
                  memex=None)  # type: ignore[arg-type]
    assert wave.trigger(ctx)
    assert wave.offline is not None and wave.offline(ctx) == {"action": "reply",
                                                              "text": "hello 👋"}
