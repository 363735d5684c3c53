"""Where skills come from: built-ins, Python entry points (group ``opencortex.skills``),
and literate skills — ``.org`` files in the memex's ``skills/`` folder whose
``#+begin_src python`` blocks define a skill, loaded in ``#+DEPENDS_ON:`` order and
reloaded when the file changes.  A skill that fails to load is reported and skipped;
it never breaks start-up."""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import Action, Context, Rejection, Skill

__all__ = ["SkillRegistry", "SkillStatus"]

log = logging.getLogger("opencortex")
ENTRY_POINT_GROUP = "opencortex.skills"
_SRC_BLOCK = re.compile(
    r"^[ \t]*#\+begin_src[ \t]+python\b[^\n]*\n(.*?)^[ \t]*#\+end_src", re.I | re.M | re.S)
_DEPENDS = re.compile(r"^[ \t]*#\+DEPENDS_ON:[ \t]*(.*)$", re.I | re.M)


@dataclass(slots=True)
class SkillStatus:
    name: str
    source: str
    priority: int | None
    status: str
    """"ok" or the error that kept it out."""


class SkillRegistry:
    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._status: dict[str, SkillStatus] = {}
        self._literate_mtimes: dict[str, float] = {}
        self._lock = threading.RLock()

    # -- registering ----------------------------------------------------------------
    def register(self, skill: Skill) -> None:
        if not isinstance(skill, Skill):
            raise TypeError(f"not a Skill: {skill!r}")
        with self._lock:
            self._skills[skill.name] = skill
            self._status[skill.name] = SkillStatus(skill.name, skill.source, skill.priority,
                                                   "ok")

    def _failed(self, name: str, source: str, error: BaseException | str) -> None:
        msg = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        log.warning("skill %s (%s) not loaded: %s", name, source, msg)
        with self._lock:
            self._skills.pop(name, None)
            self._status[name] = SkillStatus(name, source, None, msg)

    def load_builtins(self) -> None:
        from . import builtin

        for skill in builtin.skills():
            self.register(skill)

    def load_entry_points(self) -> None:
        if os.environ.get("OPENCORTEX_LOAD_PLUGINS") == "":
            return
        from importlib.metadata import entry_points

        allow = os.environ.get("OPENCORTEX_LOAD_PLUGINS")
        names = set(allow.split(",")) if allow else None
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if names is not None and ep.name not in names:
                continue
            src = f"entry-point:{ep.value}"
            try:
                obj = ep.load()
                self._register_object(obj, src)
            except Exception as e:  # a broken plugin is reported, never fatal
                self._failed(ep.name, src, e)

    def _register_object(self, obj: Any, source: str) -> list[str]:
        added: list[str] = []

        def reg(skill: Skill) -> None:
            skill.source = source
            self.register(skill)
            added.append(skill.name)

        if isinstance(obj, Skill):
            reg(obj)
        elif callable(obj):
            obj(reg)
        else:
            raise TypeError("an entry point must be a Skill or a register(register) function")
        return added

    # -- literate skills ---------------------------------------------------------
    def load_literate(self, folder: Path) -> None:
        """Load every ``folder/*.org`` (dependencies first); reload changed files."""
        if not folder.is_dir():
            return
        files = {p.stem: p for p in sorted(folder.glob("*.org"))}
        deps: dict[str, list[str]] = {}
        for stem, p in files.items():
            try:
                text = p.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                self._failed(stem, f"literate:{p}", e)
                continue
            deps[stem] = [d for m in _DEPENDS.finditer(text) for d in m.group(1).split()]
        order = _topo(deps, self)
        loaded_ns: dict[str, dict[str, Any]] = {}
        for stem in order:
            p = files[stem]
            mtime = p.stat().st_mtime
            src = f"literate:{p}"
            missing = [d for d in deps.get(stem, []) if d not in loaded_ns and d in files]
            if missing or any(d not in files for d in deps.get(stem, [])):
                gone = [d for d in deps.get(stem, []) if d not in files] or missing
                self._failed(stem, src, f"depends on missing or failed skill(s): {gone}")
                continue
            if self._literate_mtimes.get(str(p)) == mtime and stem in self._skills_by_file():
                loaded_ns[stem] = {}
                continue
            try:
                code = "\n".join(m.group(1) for m in _SRC_BLOCK.finditer(
                    p.read_text(encoding="utf-8", errors="replace")))
                if not code.strip():
                    raise ValueError("no #+begin_src python block")
                ns: dict[str, Any] = {"Skill": Skill, "Action": Action, "Rejection": Rejection,
                                      "Context": Context, "__name__": f"literate_{stem}"}
                for d in deps.get(stem, []):
                    ns.update({k: v for k, v in loaded_ns.get(d, {}).items()
                               if not k.startswith("__")})
                exec(compile(code, str(p), "exec"), ns)  # the memex's own skill code
                obj = ns.get("SKILL") or ns.get("register")
                if obj is None:
                    raise ValueError("define SKILL = Skill(...) or register(register)")
                self._register_object(obj, src)
                self._literate_mtimes[str(p)] = mtime
                loaded_ns[stem] = ns
            except Exception as e:
                self._failed(stem, src, e)

    def _skills_by_file(self) -> set[str]:
        return {Path(s.source.split(":", 1)[1]).stem for s in self._skills.values()
                if s.source.startswith("literate:")}

    # -- reading ----------------------------------------------------------------
    def skills(self) -> list[Skill]:
        with self._lock:
            return sorted(self._skills.values(), key=lambda s: -s.priority)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def statuses(self) -> list[SkillStatus]:
        with self._lock:
            return sorted(self._status.values(), key=lambda s: (-(s.priority or -1), s.name))


def _topo(deps: dict[str, list[str]], reg: SkillRegistry) -> list[str]:
    """Dependency order; files in a cycle are reported and left out."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str, stack: list[str]) -> bool:
        if state.get(n) == 2:
            return True
        if state.get(n) == 1:
            reg._failed(n, "literate", f"dependency cycle: {' -> '.join([*stack, n])}")
            return False
        state[n] = 1
        ok = all(visit(d, [*stack, n]) for d in deps.get(n, []) if d in deps)
        state[n] = 2
        if ok:
            order.append(n)
        return ok

    for n in sorted(deps):
        visit(n, [])
    return order
