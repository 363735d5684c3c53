"""The router: a request becomes an ordered list of atomic intents, each re-injected as a
``delegation`` signal to its skill (in order, through the same pipeline); the results are
gathered and composed into one reply.  Offline it uses the deterministic decomposer
(``opencortex.router``); with a model, the ``fast`` tier with a JSON schema."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from .base import Action, Context, Proposal, Rejection, Skill
from .gtd import OPS as GTD_OPS

if TYPE_CHECKING:
    from ..llm.gateway import Gateway

__all__ = ["INTENT_SCHEMA", "TARGETS", "WRITE_TARGETS", "skill", "supported"]

TARGETS = ("notes", "shell", "gtd", "review", "web", "foundry", "skill-creator", "recollect",
           "chat")
ENTRY_SENSORS = ("user-input", "chat-message", "user-command")
MAX_INTENTS = 6
INTENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["route"]},
        "intents": {"type": "array", "items": {
            "type": "object",
            "properties": {"target": {"type": "string", "enum": list(TARGETS)},
                           "query": {"type": "string"}, "command": {"type": "string"},
                           "url": {"type": "string"}, "name": {"type": "string"},
                           "task": {"type": "string"}, "op": {"type": "string"},
                           "when": {"type": "string"}, "description": {"type": "string"},
                           "cue": {"type": "string"}, "text": {"type": "string"}},
            "required": ["target"]}},
    },
    "required": ["action", "intents"],
}


def _trigger(ctx: Context) -> bool:
    s = ctx.signal
    return (s.type == "request" and s.sensor in ENTRY_SENSORS and bool(ctx.text.strip())
            and not s.payload.get("no_route"))


@functools.lru_cache(maxsize=64)
def _reading(text: str) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """The deterministic decomposer's intents for ``text`` (cached: the offline proposal
    and the check of a model's proposal read the same text)."""
    from ..router import decompose

    return tuple(tuple((i.to_dict() | {"text": i.text}).items()) for i in decompose(text))


def _gtd_hint(ctx: Context | None) -> Any:
    """The index-backed GTD routing hint for this request (``skills/gtd_route.py``): a
    clause about an existing task that carries a GTD slot goes to gtd.  None without a memex."""
    if ctx is None or getattr(ctx, "memex", None) is None:
        return None
    from .gtd import _seen, now_of
    from .gtd_route import hint

    return hint(_seen(ctx), now_of(ctx))  # a private task's words route like any words


def _intents(text: str, ctx: Context | None) -> list[dict[str, Any]]:
    """The deterministic reading of ``text``, with the memex's GTD hint when there is one;
    read once per request (the offline proposal and the verifier's check of what the
    words ask for are the same reading)."""
    if ctx is None:
        return _read(text, None)
    done = ctx.extra.setdefault("router_readings", {})
    if text not in done:
        done[text] = _read(text, ctx)
    return [dict(i) for i in done[text]]


def _notes_hint(ctx: Context | None) -> Any:
    """Does the person's memex answer this question (``notes_answer``, over the sender's
    view)?  The router's test for sending a question to the notes first.  None without a
    memex."""
    if ctx is None or getattr(ctx, "memex", None) is None:
        return None
    from .notes_answer import answers

    access = _access_of(ctx)
    return lambda clause: answers(access, clause)


def _access_of(ctx: Context) -> Any:
    from ..access import Access

    return Access.for_signal(ctx.memex, ctx.signal.meta)


def _read(text: str, ctx: Context | None) -> list[dict[str, Any]]:
    h = _gtd_hint(ctx)
    if h is None:
        return [dict(i) for i in _reading(text)]
    from ..router import decompose

    # with a model, a question the notes do not answer may go to the web (saying so)
    web = bool(ctx is not None and ctx.extra.get("has_model"))
    return [i.to_dict() | {"text": i.text}
            for i in decompose(text, hint=h, notes=_notes_hint(ctx), web=web)]


def _offline(ctx: Context) -> Proposal:
    return {"action": "route", "intents": _intents(ctx.text, ctx)}


INSTRUCTIONS = (
    "Split the person's request into an ordered list of atomic intents. Targets: "
    "notes (search/read their notes: query), shell (run a command: command), gtd "
    "(tasks/agenda/capture/schedule: op, task, when), review (what was done or how much "
    "time was spent over a period: text), web (url or query), foundry "
    "(new project: name), skill-creator (new skill: description), recollect (vague "
    "recall of past work: cue), chat (anything else: text). gtd ops: "
    f"{', '.join(GTD_OPS)}. Reply as JSON "
    '{"action": "route", "intents": [{"target": ..., ...}]}.')
"""The router's fixed instructions: the system message's stable part (the request comes
after, in the user message)."""


def _neuro(ctx: Context) -> str:
    return f"Request: {ctx.text}"


def _consult(ctx: Context) -> bool:
    """Ask the model to split a request only on a profile that routes with it (``small``:
    the deterministic decomposer, no model call)."""
    return bool(getattr(ctx.extra.get("model_profile"), "route_with_model", True))


_OP_SYNONYMS = {
    "mark": "todo", "done": "todo", "complete": "todo", "completed": "todo", "finish": "todo",
    "finished": "todo", "check": "todo", "close": "todo", "state": "todo", "set_state": "todo",
    "cancel": "todo", "add": "capture", "create": "capture", "new": "capture",
    "remind": "capture", "reminder": "capture", "inbox": "capture", "task": "capture",
    "list": "agenda", "show": "agenda", "view": "agenda", "today": "agenda",
    "due": "deadline", "reschedule": "schedule", "plan": "schedule", "move": "schedule",
    "defer": "schedule", "postpone": "schedule", "wait": "waiting", "weekly_review": "review",
    "next_actions": "next", "next_action": "next",
}
"""Near-misses a model writes for a GTD op, mapped to the op (never a rejection)."""
_DONE_VERBS = frozenset({"mark", "done", "complete", "completed", "finish", "finished",
                         "check", "close"})


def _normal_op(intent: dict[str, Any]) -> dict[str, Any]:
    """A gtd intent's ``op`` as one of the GTD skill's ops: synonyms mapped, an unknown
    one dropped (the GTD skill then reads the clause itself)."""
    if intent.get("target") != "gtd" or not isinstance(intent.get("op"), str):
        return intent
    raw = intent["op"].strip().lower().replace("-", "_").replace(" ", "_")
    op = raw if raw in GTD_OPS else _OP_SYNONYMS.get(raw)
    out = {k: v for k, v in intent.items() if k != "op"}
    if op is None:
        return out
    out["op"] = op
    if raw == "cancel" and not out.get("state"):
        out["state"] = "CANCELLED"
    elif raw in _DONE_VERBS and not out.get("state"):
        out["state"] = "DONE"
    return out


def _symbolic(p: Proposal, ctx: Context | None) -> Action | Rejection | None:
    if p.get("action") != "route":
        return None
    intents = p.get("intents")
    if not isinstance(intents, list) or not intents:
        return Rejection("a route needs at least one intent")
    if len(intents) > MAX_INTENTS:
        return Rejection(f"at most {MAX_INTENTS} intents per request")
    clean = []
    for it in intents:
        if not isinstance(it, dict) or it.get("target") not in TARGETS:
            return Rejection(f"unknown intent target in {it!r}; use one of {', '.join(TARGETS)}")
        clean.append(_normal_op({k: v for k, v in it.items()
                                 if isinstance(v, str | int | float | bool)}))
    if ctx is not None:
        clean = supported(clean, ctx.text, ctx)
    return Action("delegate", {"intents": clean}, origin="router")


WRITE_TARGETS = frozenset({"skill-creator", "foundry", "shell"})
"""Targets whose skills change things (code, files, commands); gtd too, except its views."""
GTD_VIEWS = frozenset({"agenda", "next", "review"})


def _writes(intent: dict[str, Any]) -> bool:
    """Does this intent act (change things, run a command, or go to the web)?  Such an
    intent needs the person's words to ask for it: a question the deterministic reading
    sends to the notes never becomes a command, a capture or a web request."""
    t = intent.get("target")
    return t in WRITE_TARGETS or t == "web" or (t == "gtd" and intent.get("op") not in GTD_VIEWS)


_URLISH = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+")
_PATHISH = re.compile(r"(?:^|(?<=[\s\"'(]))(?:~|\.{1,2})?/[^\s\"')]*")


def grounded(intent: dict[str, Any], text: str) -> bool:
    """Every URL, path and command the intent carries is in the person's own words: a
    model may split a request, never supply a URL (a web fetch whose URL carries other
    text is exfiltration), a repository path (recall of a root nobody named) or a
    command the person did not type."""
    said = " ".join(text.split()).casefold()
    for key, value in intent.items():
        if key == "target" or not isinstance(value, str):
            continue
        v = " ".join(value.split()).casefold()
        if key in ("url", "command") and v and v not in said:
            return False
        for m in (*_URLISH.finditer(value), *_PATHISH.finditer(value)):
            if len(m.group(0)) > 1 and m.group(0).casefold().rstrip(".,;:!?") not in said:
                return False
    return True


def supported(intents: list[dict[str, Any]], text: str,
              ctx: Context | None = None) -> list[dict[str, Any]]:
    """The model's intents minus any write-capable one the person's own words do not ask
    for: a model may split and phrase a request, never add a skill, a project, a command
    or a capture.  Supported = the deterministic decomposer reads the same target (as a
    write) in the text (with ``ctx``: and the memex's GTD hint).  Nothing left: the deterministic reading itself."""
    readings = _intents(text, ctx)
    asked = [{k: v for k, v in i.items() if k != "text"} for i in readings]
    wanted = {i.get("target") for i in asked if _writes(i)}
    kept = [i for i in intents if (not _writes(i) or i.get("target") in wanted)
            and grounded(i, text)]
    # a GTD clause the slot grammar read keeps its reading (dates, times, the entry meant):
    # the model decides where a clause goes, never drops a "friday at 3pm" on the way
    slots = [i for i in readings if i.get("target") == "gtd"]
    kept = [slots.pop(0) if i.get("target") == "gtd" and slots else i for i in kept]
    if len(kept) < len(intents):
        import logging

        dropped = [i.get("target") for i in intents if i not in kept]
        logging.getLogger("opencortex").warning(
            "router: dropped model intent(s) %s the request does not ask for", dropped)
    return kept or asked


def skill() -> Skill:
    return Skill("router", 90, trigger=_trigger, offline=_offline, neuro=_neuro,
                 symbolic=_symbolic, schema=INTENT_SCHEMA, tools=["delegate"],
                 instructions=INSTRUCTIONS, consult=_consult,
                 description="Split a request into intents and delegate each to its skill.")


def route(text: str, gateway: Gateway | None = None) -> list[dict[str, Any]]:
    """The intents for ``text``: the model's (validated) when a gateway is configured and
    answers, else the deterministic decomposer's."""
    if gateway is not None and getattr(gateway, "configured", False) and getattr(
            getattr(gateway, "profile", None), "route_with_model", True):
        from ..llm import Message

        try:
            c = gateway.complete([Message("system", INSTRUCTIONS), Message("user", f"Request: {text}")],
                                 tier="fast", json_schema=INTENT_SCHEMA)
            checked = _symbolic(c.data or {}, None)
            if isinstance(checked, Action):
                return supported(list(checked.args["intents"]), text)
        except Exception:  # the model failed or answered badly: decompose offline
            pass
    from ..router import decompose

    return [i.to_dict() for i in decompose(text)]

