"""Skill-creator delegate skill: draft a literate skill (an Org file whose python block
defines ``SKILL = Skill(...)``) from a description, lint it, and — once the person approved
exactly that code — write it to ``skills/<slug>.org`` in the memex (never overwriting),
trust its bytes and load it, showing its trigger fire on an example; or say precisely why
the draft was rejected.

Offline the draft is a template: a keyword trigger built from the description and an
offline proposer replying with a fixed helpful text.  With a model, the lead sends
:func:`draft_prompt` and passes the returned Org text through the same lint
(:func:`validate`).  The lint never runs the code and is not the security boundary: its
screen (imports, dunders, frame attributes, eval/open/…) only adds warnings to the
approval.  The boundary is the approval itself — the guard always asks before anything is
written to ``skills/``, whatever ``guard.tools."memex.write"`` says, and shows the code.

``apply_memex_op`` op: ``skill`` — args ``path`` (``skills/<slug>.org``), ``text`` (the Org
file), ``name`` (the skill's name), ``example`` (a text its trigger should fire on).
The file is written through ``MemexWriter.create_file`` with an empty "before": journaled,
undo deletes it.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..guard.paths import CODE_DIR
from ..guard.trust import python_blocks  # the very blocks the registry runs
from .base import Action, Context, Proposal, Rejection, Skill
from .registry import SkillRegistry

if TYPE_CHECKING:
    from ..guard.trust import TrustStore
    from ..memex import Memex

__all__ = ["RESERVED", "TARGET", "Validation", "apply_memex_op", "draft_org", "draft_prompt",
           "keywords", "skill", "validate"]

TARGET = "skill-creator"
SKILLS_DIR = CODE_DIR
RESERVED = frozenset({"shell", "web", "capture", "agenda", "notes", "chat", "gtd", "foundry",
                      "skill-creator", "websearch"})
"""Names a drafted skill may not take (it would replace that skill in the registry)."""

_STOP = frozenset("""a an and are as at be but by can do does for from how i if in into is it
its of on or so that the their then there these they this to was what when where which who
why will with you your my me we our please skill create make new write draft when whenever
should would could something someone some any all about tell reply answer say says give
want wants need needs just also like tells shows show gives lets
let helps help""".split())
_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:create|make|write|draft|build|add)\s+(?:me\s+)?"
                      r"(?:a\s+)?(?:new\s+)?skill\s*(?:that|which|to|for|:|,|-)?\s*(?P<d>.+)$",
                      re.I | re.S)
_SAFE_BUILTINS = {k: getattr(builtins, k) for k in (
    "abs", "all", "any", "bool", "dict", "enumerate", "filter", "float", "frozenset", "int",
    "isinstance", "len", "list", "map", "max", "min", "range", "repr", "reversed", "round",
    "set", "sorted", "str", "sum", "tuple", "zip", "Exception", "ValueError", "KeyError",
    "TypeError", "True", "False", "None")}
_FORBIDDEN_NAMES = frozenset({"eval", "exec", "compile", "open", "__import__", "globals",
                              "locals", "vars", "getattr", "setattr", "delattr", "input",
                              "breakpoint", "memoryview", "type", "object", "super",
                              "__builtins__", "help", "exit", "quit"})


# -- drafting ------------------------------------------------------------------------
def keywords(description: str, n: int = 5) -> list[str]:
    """The description's most telling words, in order (a keyword trigger's vocabulary)."""
    out: list[str] = []
    for w in re.findall(r"[a-z0-9]+", description.lower()):
        if len(w) >= 3 and w not in _STOP and w not in out:
            out.append(w)
    return out[:n]


def slugify(text: str) -> str:
    from .foundry import slugify as _s

    return _s(text)


def name_for(description: str) -> str:
    """A skill name from the description's keywords (not a reserved one)."""
    base = slugify("-".join(keywords(description, 3))) or "custom-skill"
    return base if base not in RESERVED else f"my-{base}"


def draft_org(description: str, name: str | None = None) -> str:
    """The offline template: a keyword trigger and a fixed helpful reply."""
    description = " ".join(description.split())
    name = name or name_for(description)
    kws = keywords(description) or [name.split("-")[0]]
    reply = (f"This is the {name!r} skill (drafted from: {description}). It has no logic "
             f"yet: edit skills/{name}.org to make it do something.")
    return "\n".join([
        f"#+TITLE: Skill: {name}",
        f"#+DESCRIPTION: {description}",
        "",
        "* What it does",
        description,
        "",
        "Drafted offline by the skill-creator: it triggers on requests containing any of",
        "the keywords below and replies with a fixed text.  Edit the code to do more.",
        "",
        "* Code",
        "#+begin_src python",
        f"NAME = {name!r}",
        f"KEYWORDS = {tuple(kws)!r}",
        f"REPLY = {reply!r}",
        "",
        "",
        "def _words(text):",
        "    return set(''.join(c if c.isalnum() else ' ' for c in text.lower()).split())",
        "",
        "",
        "def _trigger(ctx):",
        "    return ctx.signal.type == 'request' and bool(_words(ctx.text) & set(KEYWORDS))",
        "",
        "",
        "def _offline(ctx):",
        "    return {'action': 'reply', 'text': REPLY}",
        "",
        "",
        "def _symbolic(proposal, ctx):",
        "    if proposal.get('action') != 'reply':",
        "        return None",
        "    text = str(proposal.get('text') or '').strip()",
        "    return Action('reply', {'text': text}, origin=NAME) if text else "
        "Rejection('empty reply')",
        "",
        "",
        "SKILL = Skill(NAME, 30, trigger=_trigger, offline=_offline, symbolic=_symbolic,",
        f"              tools=['reply'], description={description[:200]!r})",
        "#+end_src",
        "",
    ])


def draft_prompt(description: str) -> str:
    """The prompt a model gets to draft the skill (its answer goes through validate())."""
    name = name_for(description)
    return f"""Write an OpenCortex literate skill as a complete Org file.

The skill: {" ".join(description.split())}

Rules:
- Output only the Org file: a #+TITLE line, a short "* What it does" section, and one
  "#+begin_src python" ... "#+end_src" block.
- The code runs with exactly these names available: Skill, Action, Rejection, Context,
  and the builtins {", ".join(sorted(k for k in _SAFE_BUILTINS if k[0].islower()))}.
  No import statements, no names or attributes starting with an underscore pair
  (__x__), no eval/exec/open/getattr/type.  Keep module-level code to definitions.
- It must define SKILL = Skill({name!r}, PRIORITY, trigger=..., offline=..., symbolic=...,
  tools=["reply"], description="...") with PRIORITY an int from 0 to 60.
- trigger(ctx) -> bool: ctx.text is the request text, ctx.signal.type is "request" for
  requests; fire only on requests this skill is for.
- offline(ctx) -> a proposal dict, e.g. {{"action": "reply", "text": "..."}}; it must work
  without a model.
- symbolic(proposal, ctx) -> Action("reply", {{"text": ...}}, origin={name!r}) to accept,
  Rejection("why") to refuse, None if the proposal is not for this skill.

Here is a valid skill to follow:
{draft_org(description, name)}"""


# -- validation (a lint, never run) -----------------------------------------------------
@dataclass(slots=True)
class Validation:
    """What the lint found.  ``errors`` make a draft unusable (no SKILL, a bad name, …);
    ``warnings`` (imports, dunders, eval/open/…) are shown in the approval.  Neither is
    the security boundary: the person's approval of the exact code is."""

    ok: bool
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    name: str = ""
    priority: int = 50
    code: str = ""

    @property
    def reason(self) -> str:
        return "; ".join(self.errors)


def _screen(tree: ast.AST) -> list[str]:
    errs: list[str] = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            errs.append(f"{where}: imports are not allowed in a drafted skill")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            errs.append(f"{where}: global/nonlocal are not allowed")
        elif isinstance(node, ast.Attribute) and (node.attr.startswith("__")
                                                  or node.attr.startswith(("gi_", "f_",
                                                                           "tb_", "cr_"))):
            errs.append(f"{where}: attribute {node.attr!r} is not allowed")
        elif isinstance(node, ast.Name) and (node.id in _FORBIDDEN_NAMES
                                              or node.id.startswith("__")):
            errs.append(f"{where}: {node.id!r} is not allowed")
    return errs


def _constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments (read, never evaluated as code)."""
    out: dict[str, Any] = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = st.value.value
    return out


def _literal(node: ast.expr | None, consts: dict[str, Any], default: Any) -> Any:
    if node is None:
        return default
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    return _Unknown


class _Unknown:
    """A value the lint cannot read without running the code."""


def validate(org_text: str, example: str | None = None, memex: Memex | None = None) -> Validation:
    """Lint a literate skill file WITHOUT running it: its python parses and defines
    ``SKILL = Skill(NAME, PRIORITY, ...)`` with a literal (or module-constant) name and
    priority, no non-callable trigger; the screen's findings are warnings.  ``example`` and
    ``memex`` are accepted for compatibility: the trigger is tried only after approval."""
    blocks = [body for _, body in python_blocks(org_text)]
    code = "\n".join(blocks)
    if not code.strip():
        return Validation(False, ["no #+begin_src python block with code"])
    try:
        tree = ast.parse(code, "<skill>")
    except SyntaxError as e:
        return Validation(False, [f"python syntax error at line {e.lineno}: {e.msg}"],
                          code=code)
    warnings = _screen(tree)
    consts = _constants(tree)
    calls = [st.value for st in tree.body if isinstance(st, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "SKILL" for t in st.targets)]
    if not calls:
        return Validation(False, ["the code does not define SKILL = Skill(...)"], warnings,
                          code=code)
    call = calls[-1]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "Skill"):
        kind = type(call.value).__name__ if isinstance(call, ast.Constant) else \
            type(call).__name__.lower()
        return Validation(False, [f"SKILL is a {kind}, not a Skill(...)"], warnings,
                          code=code)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    pos = list(call.args)
    name = _literal(pos[0] if pos else kw.get("name"), consts, None)
    prio = _literal(pos[1] if len(pos) > 1 else kw.get("priority"), consts, 50)
    errs: list[str] = []
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,59}", name):
        shown = "not a literal" if name is _Unknown else repr(name)
        errs.append(f"SKILL.name ({shown}) must be a short lowercase name (letters, digits, "
                    "- or _) written as a string literal or a module-level NAME = '...'")
    elif name in RESERVED:
        errs.append(f"SKILL.name {name!r} is reserved for a built-in skill")
    if not isinstance(prio, int) or isinstance(prio, bool) or not 0 <= prio <= 100:
        shown = "not a literal" if prio is _Unknown else repr(prio)
        errs.append(f"SKILL.priority {shown} must be an int from 0 to 100")
    for attr in ("trigger", "offline", "symbolic", "neuro"):
        v = kw.get(attr)
        if isinstance(v, ast.Constant) and (attr == "trigger" or v.value is not None):
            errs.append(f"SKILL.{attr} must be callable" + ("" if attr == "trigger" else
                                                             " or None"))
    if errs:
        return Validation(False, errs, warnings, code=code)
    return Validation(True, [], warnings, str(name), int(prio), code)


# -- skill ---------------------------------------------------------------------------
def _description(ctx: Context) -> str | None:
    p = ctx.signal.payload
    if p.get("sensor") == "delegation" and p.get("target") == TARGET:
        args = v if isinstance(v := p.get("args"), dict) else {}
        d = args.get("description") or p.get("description")
        if d:
            return " ".join(str(d).split())
        m = _REQUEST.match(ctx.text)
        return " ".join((m.group("d") if m else ctx.text).split())
    if ctx.signal.type == "request" and (m := _REQUEST.match(ctx.text)):
        return " ".join(m.group("d").split())
    return None


def _trigger(ctx: Context) -> bool:
    return _description(ctx) is not None


def _offline(ctx: Context) -> Proposal:
    desc = _description(ctx) or ""
    base = name = name_for(desc)
    n = 2
    while (ctx.memex.root / SKILLS_DIR / f"{name}.org").exists() and n < 100:
        name, n = f"{base}-{n}", n + 1
    return {"action": "memex", "op": "skill", "name": name, "description": desc,
            "path": f"{SKILLS_DIR}/{name}.org", "text": draft_org(desc, name),
            "example": desc}


def _check_path(memex: Memex, rel: str) -> str | None:
    from ..guard import UnsafePathError, confine

    if not re.fullmatch(rf"{SKILLS_DIR}/[a-z0-9][a-z0-9_-]{{0,59}}\.org", rel):
        return f"a skill file must be {SKILLS_DIR}/<name>.org, not {rel!r}"
    try:
        p = confine(rel, memex.root)
    except UnsafePathError as e:
        return f"refused: {e}"
    if p.exists():
        return f"{rel} already exists; refusing to overwrite it (pick another name)"
    return None


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") != "memex" or p.get("op") != "skill":
        return None
    desc = str(p.get("description") or "")
    if not desc.strip():
        return Rejection("describe the skill to create (what should trigger it, what it does)")
    text = str(p.get("text") or "")
    example = str(p.get("example") or desc)
    v = validate(text)
    if not v.ok:
        return Rejection(f"the drafted skill was rejected: {v.reason}")
    rel = f"{SKILLS_DIR}/{v.name}.org"
    err = _check_path(ctx.memex, rel)
    if err:
        return Rejection(err)
    # the guard always asks for this write and shows the code with the lint's warnings
    return Action("memex.write", {"op": "skill", "path": rel, "name": v.name,
                                  "text": text, "example": example, "lint": v.warnings},
                  origin=TARGET)


def apply_memex_op(memex: Memex, args: dict[str, Any], registry: SkillRegistry | None = None,
                   trust: TrustStore | None = None, by: str = "approval"
                   ) -> tuple[str, dict[str, Any]]:
    """The ``skill`` op of ``memex.write``: lint, create the file (no clobber, journaled).

    ``trust`` is given only when the person approved exactly ``args["text"]`` (the guard
    always asks for this write): then the written bytes are trusted, the folder is loaded
    (into ``registry`` if given, else a scratch one) and the trigger is shown on the
    example.  Without it the file is written but stays disabled until trusted."""
    from ..errors import WriteError
    from ..guard.trust import trust_command
    from ..signal import inject

    if args.get("op") != "skill":
        raise ValueError(f"unknown skill-creator memex op {args.get('op')!r}")
    text = str(args.get("text") or "")
    example = str(args.get("example") or "")
    v = validate(text)
    if not v.ok:
        raise WriteError(f"the drafted skill was rejected: {v.reason}")
    rel = str(args.get("path") or f"{SKILLS_DIR}/{v.name}.org")
    if rel != f"{SKILLS_DIR}/{v.name}.org":
        raise WriteError(f"the file must be named after the skill: {SKILLS_DIR}/"
                         f"{v.name}.org, not {rel}")
    err = _check_path(memex, rel)
    if err:
        raise WriteError(err)
    r = memex.writer.create_file(rel, text, op="new-skill", description=f"new skill {rel}",
                                 code=True)
    stem = rel.rsplit("/", 1)[1][:-4]
    data: dict[str, Any] = {"file": rel, "name": v.name, "write": r.to_dict(),
                            "warnings": v.warnings, "trusted": trust is not None}
    if trust is None:
        data.update(loaded=False, status="untrusted")
        return (f"Wrote {rel} (journal #{r.journal_id}); it is not trusted, so it does not "
                f"run until you approve its code: `{trust_command(stem)}`.", data)
    trust.trust(memex.root, rel, stem, text.encode("utf-8", "surrogateescape"), by)
    reg = registry or SkillRegistry(trust=trust)
    reg.load_literate(memex.root / SKILLS_DIR)
    status = next((s for s in reg.statuses() if s.name in (v.name, stem)), None)
    loaded = reg.get(v.name)
    data.update(loaded=loaded is not None, status=status.status if status else "not found")
    if loaded is None:
        return (f"Wrote {rel} (journal #{r.journal_id}) but it did not load: "
                f"{data['status']}.", data)
    fired = False
    if example:
        try:
            fired = bool(loaded.trigger(Context(inject({"sensor": "user-input",
                                                        "text": example}), memex)))
        except Exception as e:
            data["trigger_error"] = f"{type(e).__name__}: {e}"
    data["fired"] = fired
    shown = f" on {example!r}" if example else ""
    return (f"Created skill {v.name!r} in {rel} (journal #{r.journal_id}; priority "
            f"{loaded.priority}; you approved its code, so it is trusted); it loaded, and "
            f"its trigger {'fires' if fired else 'does NOT fire'}{shown}.", data)


SKILL_SCHEMA = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["memex"]},
                   "op": {"type": "string", "enum": ["skill"]},
                   "name": {"type": "string"}, "description": {"type": "string"},
                   "path": {"type": "string"}, "text": {"type": "string"},
                   "example": {"type": "string"}},
    "required": ["action", "op", "name", "description", "path", "text", "example"],
}


def _neuro(ctx: Context) -> str:
    """With a model: it drafts the file; the same validation decides (retries on rejection)."""
    p = _offline(ctx)  # the name and path the model should use
    return (draft_prompt(p["description"]) + "\n\nAnswer as JSON with keys action='memex', "
            f"op='skill', name={p['name']!r}, path={p['path']!r}, description, example (a "
            "request that should trigger it) and text (the whole Org file).")


def skill() -> Skill:
    return Skill(
        "skill-creator", 67, trigger=_trigger, offline=_offline, symbolic=_symbolic,
        neuro=_neuro, schema=SKILL_SCHEMA,
        tools=["memex.write"],
        description="Draft a literate skill (skills/<name>.org) from a description, "
                    "validate and load it.")
