"""The router: a request becomes an ordered list of atomic intents, each re-injected as a
``delegation`` signal to its skill (in order, through the same pipeline); the results are
gathered and composed into one reply.  Offline it uses the deterministic decomposer
(``opencortex.router``); with a model, the ``fast`` tier with a JSON schema."""

from __future__ import annotations

from typing import Any

from .base import Action, Context, Proposal, Rejection, Skill

__all__ = ["INTENT_SCHEMA", "TARGETS", "skill"]

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


def _offline(ctx: Context) -> Proposal:
    from ..router import decompose

    return {"action": "route", "intents": [i.to_dict() | {"text": i.text}
                                           for i in decompose(ctx.text)]}


def _prompt(text: str) -> str:
    return ("Split the person's request into an ordered list of atomic intents. Targets: "
            "notes (search/read their notes: query), shell (run a command: command), gtd "
            "(tasks/agenda/capture/schedule: op, task, when), review (what was done or how much "
            "time was spent over a period: text), web (url or query), foundry "
            "(new project: name), skill-creator (new skill: description), recollect (vague "
            "recall of past work: cue), chat (anything else: text). Reply as JSON "
            '{"action": "route", "intents": [{"target": ..., ...}]}.\n'
            f"Request: {text}")


def _neuro(ctx: Context) -> str:
    return _prompt(ctx.text)


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
        clean.append({k: v for k, v in it.items() if isinstance(v, str | int | float | bool)})
    return Action("delegate", {"intents": clean}, origin="router")


def skill() -> Skill:
    return Skill("router", 90, trigger=_trigger, offline=_offline, neuro=_neuro,
                 symbolic=_symbolic, schema=INTENT_SCHEMA, tools=["delegate"],
                 description="Split a request into intents and delegate each to its skill.")


def route(text: str, gateway: Any = None) -> list[dict[str, Any]]:
    """The intents for ``text``: the model's (validated) when a gateway is configured and
    answers, else the deterministic decomposer's."""
    if gateway is not None and getattr(gateway, "configured", False):
        from ..llm import Message

        try:
            c = gateway.complete([Message("user", _prompt(text))], tier="fast",
                                 json_schema=INTENT_SCHEMA)
            checked = _symbolic(c.data or {}, None)
            if isinstance(checked, Action):
                return list(checked.args["intents"])
        except Exception:  # the model failed or answered badly: decompose offline
            pass
    from ..router import decompose

    return [i.to_dict() for i in decompose(text)]

