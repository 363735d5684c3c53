"""Where skills come from: built-ins, Python entry points (group ``opencortex.skills``),
and literate skills — ``.org`` files in the memex's ``skills/`` folder whose
``#+begin_src python`` blocks define a skill, loaded in ``#+DEPENDS_ON:`` order and
reloaded when the file changes — and only when the person trusted exactly the file's
bytes (``guard.trust``: ``opencortex skills trust NAME``).  A skill that fails to load is
reported and skipped; it never breaks start-up."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..act.registry import Actuator, ActuatorTable, WriteOp
from ..guard.paths import is_inside
from ..guard.trust import SkillFile, TrustStore, inspect_skill
from .base import Action, Context, Rejection, Skill

__all__ = ["Registrar", "SkillRegistry", "SkillStatus"]

log = logging.getLogger("opencortex")
ENTRY_POINT_GROUP = "opencortex.skills"
_DEPENDS = re.compile(r"^[ \t]*#\+DEPENDS_ON:[ \t]*(.*)$", re.I | re.M)


@dataclass(slots=True)
class SkillStatus:
    name: str
    source: str
    priority: int | None
    status: str
    """"ok" or the error that kept it out."""
    trust: str = ""
    """Literate skills only: ``trusted``, ``untrusted`` or ``changed``."""
    description: str = ""


class Registrar:
    """The hook a plugin's entry point (``register(r)``), a literate skill's
    ``register(r)`` and the built-ins are all called with.  ``r(skill)`` or
    ``r.skill(skill)`` adds a skill; ``r.actuator(tool, fn)`` the function that runs an
    approved action with that tool (``fn(action, signal, env) -> Signal | Delegation |
    None``); ``r.write_op(op, fn)`` a ``memex.write`` op (``fn(action, signal, env) ->
    (text, data)``).  A tool still runs only where the guard's policy names it
    (``[guard.tools]``: unknown tools are refused)."""

    def __init__(self, registry: SkillRegistry, source: str) -> None:
        self._registry = registry
        self.source = source
        self.added: list[str] = []

    def __call__(self, skill: Skill) -> None:
        self.skill(skill)

    def skill(self, skill: Skill) -> None:
        if not isinstance(skill, Skill):
            raise TypeError(f"not a Skill: {skill!r}")
        skill.source = self.source
        self._registry.register(skill)
        self.added.append(skill.name)

    def actuator(self, tool: str, fn: Actuator) -> None:
        self._code_only("actuator")
        self._registry.actuators.add_actuator(tool, fn, self.source)

    def write_op(self, op: str, fn: WriteOp) -> None:
        self._code_only("memex write op")
        self._registry.actuators.add_write_op(op, fn, self.source)

    def _code_only(self, what: str) -> None:
        # a literate skill is reloaded, edited and untrusted at run time: what it adds must
        # go with it, so it may add skills only (its skills use the installed tools)
        if self.source.startswith("literate:"):
            raise ValueError(f"a literate skill cannot add an {what}; install a plugin "
                             "(entry point group opencortex.skills) for that")


class SkillRegistry:
    def __init__(self, trust: TrustStore | None = None) -> None:
        self.actuators = ActuatorTable()
        """Tools and memex write ops, filled through the same registrar as skills."""
        self._skills: dict[str, Skill] = {}
        self._status: dict[str, SkillStatus] = {}
        self._literate: dict[str, tuple[str, list[str]]] = {}
        """file -> (sha256 of the bytes that ran, skill names they registered)."""
        self._literate_ns: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self.trust = trust if trust is not None else TrustStore()

    # -- registering ----------------------------------------------------------------
    def register(self, skill: Skill) -> None:
        if not isinstance(skill, Skill):
            raise TypeError(f"not a Skill: {skill!r}")
        with self._lock:
            self._skills[skill.name] = skill
            self._status[skill.name] = SkillStatus(
                skill.name, skill.source, skill.priority, "ok",
                trust="trusted" if skill.source.startswith("literate:") else "",
                description=skill.description)

    def _failed(self, name: str, source: str, error: BaseException | str,
                key: str | None = None) -> None:
        """Report ``name`` as not loaded.  Only a skill that ``source`` itself registered is
        dropped, and a file's row has its own ``key``: a planted file named like a
        built-in (``skills/router.org``) cannot unload or hide that built-in."""
        msg = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        log.warning("skill %s (%s) not loaded: %s", name, source, msg)
        with self._lock:
            if (old := self._skills.get(name)) is not None and old.source == source:
                self._skills.pop(name, None)
            self._status[key or name] = SkillStatus(name, source, None, msg)

    def load_builtins(self) -> None:
        """The built-ins, by the very path an entry point takes (``builtin.register``)."""
        from . import builtin

        self._register_object(builtin.register, "builtin")

    def load_entry_points(self, memex: Path | None = None) -> None:
        """Installed plugins.  One whose distribution or module would come from the memex
        (``memex`` on sys.path by a PYTHONPATH, a ``.pth`` or the working directory) is
        code nobody approved: it is reported and never imported."""
        from ..config import env

        allow = env("OPENCORTEX_LOAD_PLUGINS")
        if allow == "" or not may_declare(ENTRY_POINT_GROUP):
            return
        from importlib.metadata import entry_points

        names = set(allow.split(",")) if allow else None
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if names is not None and ep.name not in names:
                continue
            src = f"entry-point:{ep.value}"
            where = _from_memex(ep, memex) if memex is not None else None
            if where is not None:
                self._failed(ep.name, src, f"refused: {where} lies in the memex {memex}; "
                             "code there runs only as a trusted literate skill")
                continue
            try:
                obj = ep.load()
                self._register_object(obj, src)
            except Exception as e:  # a broken plugin is reported, never fatal
                self.actuators.drop_source(src)  # nothing half-registered stays
                self._failed(ep.name, src, e)

    def _register_object(self, obj: Any, source: str) -> list[str]:
        r = Registrar(self, source)
        if isinstance(obj, Skill):
            r.skill(obj)
        elif callable(obj):
            obj(r)
        else:
            raise TypeError("an entry point must be a Skill or a register(r) function")
        return r.added

    # -- literate skills ---------------------------------------------------------
    def load_literate(self, folder: Path) -> None:
        """Load every trusted ``folder/*.org`` (dependencies first); reload changed files.

        A file runs only if the sha256 of its current bytes is in the trust store; an
        untrusted or changed file is never compiled (its name and description come from
        the Org text alone) and any skill it defined before is unloaded."""
        root = folder.parent.resolve()
        files = {p.stem: p for p in sorted(folder.glob("*.org"))} if folder.is_dir() else {}
        known = {k.removeprefix("literate:") for k in self._status if k.startswith("literate:")}
        for gone in sorted(known | set(self._literate)):
            if Path(gone).parent != folder or Path(gone).stem in files:
                continue
            self._unload(gone)
            self._status.pop(f"literate:{gone}", None)
        for stem, p in list(files.items()):
            if not p.is_file():  # a FIFO or device would block the read: never opened
                del files[stem]
                self._unload(str(p))
                self._failed(stem, f"literate:{p}", "not a regular file; skipped",
                             key=f"literate:{p}")
        read: dict[str, SkillFile] = {}
        deps: dict[str, list[str]] = {}
        for stem, p in files.items():
            try:
                read[stem] = inspect_skill(p, root)
            except OSError as e:
                self._unload(str(p))
                self._failed(stem, f"literate:{p}", e, key=f"literate:{p}")
                continue
            deps[stem] = [d for m in _DEPENDS.finditer(read[stem].text)
                          for d in m.group(1).split()]
        order = _topo(deps, self, files)
        for stem in order:
            sf, p = read[stem], files[stem]
            src = f"literate:{p}"
            state = self.trust.state(root, sf.rel, sf.data)
            if state != "trusted":
                self._unload(str(p))
                self._untrusted(sf, src, state)
                continue
            missing = [d for d in deps.get(stem, []) if d not in self._literate_ns]
            if missing:
                self._unload(str(p))
                self._failed(stem, src, "depends on missing, untrusted or failed skill(s): "
                             f"{missing}", key=src)
                continue
            if self._literate.get(str(p), ("",))[0] == sf.sha256 and all(
                    n in self._skills for n in self._literate[str(p)][1]):
                continue
            self._unload(str(p))
            try:
                code = sf.code
                if not code.strip():
                    raise ValueError("no #+begin_src python block")
                ns: dict[str, Any] = {"Skill": Skill, "Action": Action, "Rejection": Rejection,
                                      "Context": Context, "__name__": f"literate_{stem}"}
                for d in deps.get(stem, []):
                    ns.update({k: v for k, v in self._literate_ns.get(d, {}).items()
                               if not k.startswith("__")})
                # exactly the bytes whose sha256 the person approved (read once, above)
                exec(compile(code, str(p), "exec"), ns)
                obj = ns.get("SKILL") or ns.get("register")
                if obj is None:
                    raise ValueError("define SKILL = Skill(...) or register(register)")
                names = self._register_object(obj, src)
                with self._lock:  # the file's own row (untrusted, failed) is stale now
                    self._status.pop(src, None)
                self._literate[str(p)] = (sf.sha256, names)
                self._literate_ns[stem] = ns
            except Exception as e:
                self._failed(stem, src, e, key=src)

    def _unload(self, path: str) -> None:
        """Forget what the file at ``path`` registered (it changed, vanished or lost trust)."""
        with self._lock:
            _sha, names = self._literate.pop(path, ("", []))
            self._literate_ns.pop(Path(path).stem, None)
            for n in names:
                self._skills.pop(n, None)
                self._status.pop(n, None)

    def _untrusted(self, sf: SkillFile, source: str, state: str) -> None:
        why = ("edited since you trusted it: disabled until you approve the new code"
               if state == "changed" else "never approved, so it has never run")
        old = self._status.get(source)
        if old is None or old.trust != state:  # said once per change, not every heartbeat
            log.warning("skill %s (%s) is %s and does not run: read it, then run "
                        "`opencortex skills trust %s`", sf.name, sf.rel, state, sf.name)
        with self._lock:
            self._status[source] = SkillStatus(
                sf.name, source, None, f"{state}: {why}", trust=state,
                description=sf.description or sf.title)

    # -- reading ----------------------------------------------------------------
    def skills(self) -> list[Skill]:
        with self._lock:
            return sorted(self._skills.values(), key=lambda s: -s.priority)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def statuses(self) -> list[SkillStatus]:
        with self._lock:
            return sorted(self._status.values(), key=lambda s: (-(s.priority or -1), s.name))


def may_declare(group: str) -> bool:
    """Whether an installed distribution may declare entry points in ``group``: the
    ``*.dist-info`` / ``*.egg-info`` folders on ``sys.path`` (where importlib.metadata looks)
    are read for the group's name.  False lets a process without plugins skip importing
    importlib.metadata (email, zipfile, csv: ~60 ms of every ``ask``).  What this scan
    cannot read — an egg or a zip on the path, a folder it cannot list, another
    distribution finder on ``sys.meta_path`` — answers True (the full lookup decides)."""
    import os
    import sys
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return True  # a zip file on the path
        except OSError:
            if os.path.exists(root):
                return True  # there but unreadable here: let importlib.metadata judge
            continue
        for name in children:
            low = name.lower()
            if low.endswith(".egg"):
                return True
            if low.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(root, name, "entry_points.txt"), "rb") as f:
                        if group.encode() in f.read():
                            return True
                except (NotADirectoryError, FileNotFoundError):
                    continue  # an egg-info file (PKG-INFO only), or no entry points
                except OSError:
                    return True
    return False


def _from_memex(ep: Any, memex: Path) -> str | None:
    """Where ``ep``'s distribution or top-level module lies inside ``memex`` (without
    importing it), else None; a location that cannot be told counts as inside."""
    import importlib.util

    root = memex.resolve()
    places: list[str] = []
    dist = getattr(ep, "dist", None)
    if dist is not None:
        places.append(str(dist.locate_file("")))
    try:
        spec = importlib.util.find_spec(ep.module.split(".", 1)[0])
    except (ImportError, ValueError) as e:
        return f"its module ({e})"
    if spec is not None:
        places += [p for p in (spec.origin, *(spec.submodule_search_locations or []))
                   if p and p not in ("built-in", "frozen")]
    for p in places:
        try:
            if is_inside(Path(p).resolve(), root):
                return p
        except (OSError, RuntimeError):
            return p
    return None


def _topo(deps: dict[str, list[str]], reg: SkillRegistry,
          files: dict[str, Path]) -> list[str]:
    """Dependency order; files in a cycle are reported and left out."""
    order: list[str] = []
    state: dict[str, int] = {}
    reported: set[str] = set()

    def report(n: str, msg: str) -> None:
        if n not in reported:
            reported.add(n)
            reg._failed(n, f"literate:{files[n]}", msg, key=f"literate:{files[n]}")

    def visit(n: str, stack: list[str]) -> bool:
        if state.get(n) == 2:
            return True
        if state.get(n) == 1:
            report(n, f"dependency cycle: {' -> '.join([*stack, n])}")
            return False
        state[n] = 1
        ok = all(visit(d, [*stack, n]) for d in deps.get(n, []) if d in deps)
        state[n] = 2
        if ok:
            order.append(n)
        else:
            report(n, "in or depends on a dependency cycle")
        return ok

    for n in sorted(deps):
        visit(n, [])
    return order
