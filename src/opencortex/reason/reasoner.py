"""Reason: the triggered skill of highest priority proposes (through the model when one is
configured and the skill has a prompt, else its deterministic offline proposer); every
applicable symbolic verifier checks the proposal; a rejection is fed back and retried
(3 tries), then surfaced to the person.  Proposals are parsed as JSON, never evaluated."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from ..errors import OpenCortexError
from ..skills.base import Action, Context, Proposal, Rejection, Skill

__all__ = ["PROPOSAL_SCHEMA", "Decision", "Reasoner"]

log = logging.getLogger("opencortex")
MAX_TRIES = 3
PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["reply", "capture", "shell", "web", "delegate"]},
        "text": {"type": "string"},
        "command": {"type": "string"},
        "url": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["action"],
}


@dataclass(slots=True)
class Decision:
    skill: str | None
    action: Action | None
    rejection: str | None = None
    tries: int = 0
    via: str = "offline"
    """offline | model"""
    notes: list[str] = field(default_factory=list)


def _safe_trigger(skill: Skill, ctx: Context) -> bool:
    try:
        return bool(skill.trigger(ctx))
    except Exception as e:  # a broken trigger is a broken skill, not a broken loop
        log.warning("skill %s trigger raised %s: %s", skill.name, type(e).__name__, e)
        return False


class Reasoner:
    def __init__(self, gateway: Any = None, max_tries: int = MAX_TRIES,
                 context_budget: int = 1500) -> None:
        self.gateway = gateway
        self.max_tries = max_tries
        self.context_budget = context_budget

    @property
    def has_model(self) -> bool:
        return bool(self.gateway is not None and getattr(self.gateway, "configured", False))

    def choose(self, ctx: Context, skills: list[Skill]) -> Skill | None:
        for s in sorted(skills, key=lambda s: -s.priority):
            if _safe_trigger(s, ctx):
                return s
        return None

    def decide(self, ctx: Context, skills: list[Skill]) -> Decision:
        skill = self.choose(ctx, skills)
        if skill is None:
            return Decision(None, None, "no skill handles this signal")
        use_model = self.has_model and skill.neuro is not None
        if use_model:
            ctx.extra["remote_model"] = any(
                not p.local for p in getattr(self.gateway, "providers", []))
        feedback: list[str] = []
        last = "no proposal"
        notes: list[str] = []
        for attempt in range(1, (self.max_tries if use_model else 1) + 1):
            if use_model:
                try:
                    proposal = self._propose(skill, ctx, feedback, skills)
                except OpenCortexError as e:  # every provider failed: answer offline
                    log.warning("model unavailable (%s); using the offline reasoner", e)
                    notes.append(f"model unavailable: {e}")
                    use_model = False
                    proposal = skill.offline(ctx) if skill.offline else None
            else:
                proposal = skill.offline(ctx) if skill.offline else None
            if proposal is None:
                return Decision(skill.name, None, f"skill {skill.name} has no offline mode "
                                "and no model is configured", attempt)
            verdict = self.verify(proposal, ctx, skill, skills)
            if isinstance(verdict, Action):
                return Decision(skill.name, verdict, None, attempt,
                                "model" if use_model else "offline", notes)
            last = verdict.reason if isinstance(verdict, Rejection) else \
                f"no verifier accepted the proposal {proposal.get('action')!r}"
            feedback.append(last)
            log.info("skill %s proposal rejected (try %d): %s", skill.name, attempt, last)
            if not use_model:  # the offline proposer is deterministic: no point retrying
                return Decision(skill.name, None, last, attempt, "offline", notes)
        return Decision(skill.name, None, last, self.max_tries, "model", notes)

    def verify(self, proposal: Proposal, ctx: Context, skill: Skill,
               skills: list[Skill]) -> Action | Rejection | None:
        """The proposing skill's verifier, then every skill that verifies this kind of
        action (by priority); any rejection wins."""
        if not isinstance(proposal, dict) or not isinstance(proposal.get("action"), str):
            return Rejection("a proposal must be a JSON object with an 'action'")
        kind = proposal["action"]
        action: Action | None = None
        checkers = [skill] + [s for s in skills
                              if s is not skill and kind in s.verifies and s.symbolic]
        for s in checkers:
            if s.symbolic is None:
                continue
            try:
                out = s.symbolic(proposal, ctx)
            except Exception as e:
                return Rejection(f"verifier {s.name} failed: {type(e).__name__}: {e}")
            if isinstance(out, Rejection):
                return out
            if isinstance(out, Action) and action is None:
                action = out
        return action

    def _propose(self, skill: Skill, ctx: Context, feedback: list[str],
                 skills: list[Skill] | None = None) -> Proposal | None:
        from ..llm import BadModelOutput, Message

        assert skill.neuro is not None
        prompt = skill.neuro(ctx)
        msgs = [Message("system", "You are OpenCortex, a personal agent living in the "
                        "person's Org files. Propose exactly one action as JSON.\n\n"
                        + self._situation(ctx, skills or [])),
                Message("user", prompt)]
        for f in feedback:
            msgs.append(Message("user", f"Your previous proposal was rejected: {f}. "
                                "Propose again."))
        try:
            c = self.gateway.complete(msgs, tier="fast",
                                      json_schema=skill.schema or PROPOSAL_SCHEMA)
        except BadModelOutput as e:
            feedback.append(e.feedback)
            return {"action": "invalid"}
        out = c.data if c.data is not None else _loads(c.text)
        return out if isinstance(out, dict) else {"action": "invalid"}


    def _situation(self, ctx: Context, skills: list[Skill]) -> str:
        """Peripheral vision for the model: focus, agenda, projects, neighbours, skills,
        recent log lines — private nodes withheld when the model is remote."""
        from ..access import Access
        from ..context import assemble

        try:
            # private notes stay out when the model is remote, and when the answer goes to
            # a client that may not see them (a local model would quote them to it)
            withhold = bool(ctx.extra.get("remote_model")) or not Access.for_signal(
                ctx.memex, getattr(getattr(ctx, "signal", None), "meta", None) or {}
            ).sees_private
            return assemble(ctx.memex, focus=ctx.focus, query=ctx.text or None,
                            budget=self.context_budget, remote=withhold, skills=skills,
                            log_lines=ctx.logs).text
        except Exception as e:  # context is help, not a precondition
            log.warning("context assembly failed: %s", e)
            return ""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None
