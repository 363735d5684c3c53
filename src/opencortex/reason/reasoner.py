"""Reason: the triggered skill of highest priority proposes (through the model when one is
configured and the skill has a prompt, else its deterministic offline proposer); every
applicable symbolic verifier checks the proposal.  Proposals are parsed as JSON, never
evaluated.

Never worse than offline: a model failure — no answer within the request's time budget,
a provider error, invalid JSON, a schema violation, a verifier's rejection, a refusal — is
retried at most once with the reason fed back; then the skill's offline proposer answers
and the reply says the model's answer was not used.  A late model answer is dropped: the
model call runs on its own thread and touches no memex, so nothing closed is used after.

The prompt puts what never changes first (the preamble and the skill's instructions in the
system message; the gateway adds the output schema there) and what changes last (the
time, the situation, the request, retrieved passages in the user message), so a local
server's KV cache serves the common prefix across calls."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import OpenCortexError
from ..locking import slow_work
from ..skills.base import Action, Context, Proposal, Rejection, Skill

__all__ = ["PREAMBLE", "PROPOSAL_SCHEMA", "Decision", "ModelCall", "Reasoner", "ReplyText",
           "is_refusal"]

log = logging.getLogger("opencortex")
MAX_TRIES = 2
"""Model tries per request: one, and one retry with the reason fed back."""
PREAMBLE = ("You are OpenCortex, a personal agent living in the person's Org files. "
            "Propose exactly one action as JSON.")
NOT_USED = "the model's answer was not used"
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
_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+(?:very\s+|so\s+)?sorry|sorry|unfortunately|apologies)\b[^.!?\n]{0,60}?"
    r"\b(?:can(?:no|['’])?t|unable|not able|won['’]?t|not allowed|am not permitted)\b"
    r"|^\W*i\s+can(?:no|['’])?t\s+(?:assist|help|comply)\b|^\W*as an ai\b", re.I)


def is_refusal(text: str) -> bool:
    """A model's refusal ("I'm sorry, but I can't assist with that."): not an answer."""
    return bool(_REFUSAL.search(text or ""))


@dataclass(slots=True)
class ModelCall:
    """One call to the model, for the bench and the logs: what it cost and how it ended."""

    skill: str
    seconds: float
    prompt_tokens: int | None
    ok: bool
    reason: str = ""


@dataclass(slots=True)
class Decision:
    skill: str | None
    action: Action | None
    rejection: str | None = None
    tries: int = 0
    via: str = "offline"
    """offline | model"""
    notes: list[str] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    fallback: str | None = None
    """Why the model's answer was not used (the offline one was), if it was asked."""


class _ModelFailed(Exception):
    """The model gave nothing usable; ``final``: do not ask it again for this request."""

    def __init__(self, reason: str, final: bool = False) -> None:
        super().__init__(reason)
        self.final = final


def _safe_trigger(skill: Skill, ctx: Context) -> bool:
    try:
        return bool(skill.trigger(ctx))
    except Exception as e:  # a broken trigger is a broken skill, not a broken loop
        log.warning("skill %s trigger raised %s: %s", skill.name, type(e).__name__, e)
        return False


class Reasoner:
    def __init__(self, gateway: Any = None, max_tries: int = MAX_TRIES,
                 context_budget: int = 1500,
                 observer: Callable[[Decision], None] | None = None) -> None:
        self.gateway = gateway
        self.max_tries = max_tries
        self.context_budget = context_budget
        self.observer = observer
        """Called with every decision (the bench counts calls, tokens and fallbacks)."""

    @property
    def has_model(self) -> bool:
        return bool(self.gateway is not None and getattr(self.gateway, "configured", False))

    def choose(self, ctx: Context, skills: list[Skill]) -> Skill | None:
        for s in sorted(skills, key=lambda s: -s.priority):
            if _safe_trigger(s, ctx):
                return s
        return None

    def decide(self, ctx: Context, skills: list[Skill]) -> Decision:
        d = self._decide(ctx, skills)
        if self.observer is not None:
            self.observer(d)
        return d

    def _decide(self, ctx: Context, skills: list[Skill]) -> Decision:
        ctx.extra["has_model"] = self.has_model  # e.g. the router: may the web be asked?
        skill = self.choose(ctx, skills)
        if skill is None:
            return Decision(None, None, "no skill handles this signal")
        deadline = self._deadline(ctx) if self.has_model else None
        use_model = self.has_model and skill.neuro is not None
        if use_model:
            ctx.extra["remote_model"] = any(
                not p.local for p in getattr(self.gateway, "providers", []))
            ctx.extra["model_profile"] = getattr(self.gateway, "profile", None)
            if skill.consult is not None and not skill.consult(ctx):
                use_model = False
        if not use_model:
            return self._offline(skill, ctx, skills, None, [], [])
        feedback: list[str] = []
        calls: list[ModelCall] = []
        reason = "no proposal"
        for attempt in range(1, max(1, self.max_tries) + 1):
            try:
                proposal = self._propose(skill, ctx, feedback, skills, deadline, calls)
            except _ModelFailed as e:
                reason = str(e)
                log.info("skill %s: model try %d failed: %s", skill.name, attempt, reason)
                if e.final:
                    break
                feedback.append(reason)
                continue
            verdict = self.verify(proposal, ctx, skill, skills)
            if isinstance(verdict, Action):
                text = verdict.args.get("text") if verdict.tool == "reply" else None
                if isinstance(text, str) and is_refusal(text):
                    reason = f"the model refused ({text[:80]!r})"
                    feedback.append("that was a refusal; answer the person's request "
                                    "(it is theirs, about their own notes and tasks)")
                    continue
                return Decision(skill.name, verdict, None, attempt, "model", [], calls)
            reason = verdict.reason if isinstance(verdict, Rejection) else \
                f"no verifier accepted the proposal {proposal.get('action')!r}"
            feedback.append(reason)
            log.info("skill %s proposal rejected (try %d): %s", skill.name, attempt, reason)
        log.warning("skill %s: %s (%s); answering offline", skill.name, NOT_USED, reason)
        return self._offline(skill, ctx, skills, reason, [f"{NOT_USED}: {reason}"], calls)

    def _deadline(self, ctx: Context) -> float | None:
        """When the request's model budget runs out: set by its first decision and kept in
        the signal's meta, which the signals it delegates to copy — so the budget is the
        whole request's, however many intents it has."""
        meta = ctx.signal.meta
        if "model_deadline" not in meta:
            budget = float(getattr(self.gateway, "budget", 0) or 0)
            meta["model_deadline"] = time.monotonic() + budget if budget > 0 else None
        value = meta["model_deadline"]
        return value if isinstance(value, float) else None

    def _offline(self, skill: Skill, ctx: Context, skills: list[Skill], failure: str | None,
                 notes: list[str], calls: list[ModelCall]) -> Decision:
        """The skill's deterministic proposer, verified like any proposal; after a model
        failure (``failure``) a reply says the model's answer was not used."""
        if failure is not None:
            ctx.extra["model_failure"] = failure
        proposal = skill.offline(ctx) if skill.offline else None
        if proposal is None:
            why = failure or "no model is configured"
            return Decision(skill.name, None, f"skill {skill.name} has no offline mode "
                            f"and {why}", 1, "offline", notes, calls, failure)
        verdict = self.verify(proposal, ctx, skill, skills)
        if isinstance(verdict, Action):
            if failure is not None and verdict.tool == "reply":
                text = str(verdict.args.get("text") or "")
                if NOT_USED not in text:
                    verdict = verdict.with_args(
                        text=f"{text}\n\n({NOT_USED[0].upper()}{NOT_USED[1:]}: {failure}; "
                        "this is the offline answer.)")
            return Decision(skill.name, verdict, None, 1, "offline", notes, calls, failure)
        last = verdict.reason if isinstance(verdict, Rejection) else \
            f"no verifier accepted the proposal {proposal.get('action')!r}"
        return Decision(skill.name, None, last, 1, "offline", notes, calls, failure)

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

    def messages(self, skill: Skill, ctx: Context, skills: list[Skill] | None = None,
                 feedback: list[str] | None = None) -> list[Any]:
        """The chat for one proposal: the stable system message (preamble + the skill's
        instructions), then the volatile user message (time, situation, the skill's prompt),
        then any rejection fed back."""
        from ..llm import Message

        assert skill.neuro is not None
        prompt = skill.neuro(ctx)
        system = PREAMBLE + (f"\n\n{skill.instructions}" if skill.instructions else "")
        situation = self._situation(ctx, skills or [])
        msgs = [Message("system", system),
                Message("user", f"{situation}\n\n{prompt}" if situation else prompt)]
        for f in feedback or []:
            msgs.append(Message("user", f"Your previous proposal was rejected: {f}. "
                                "Propose again."))
        return msgs

    def _propose(self, skill: Skill, ctx: Context, feedback: list[str],
                 skills: list[Skill] | None, deadline: float | None,
                 calls: list[ModelCall]) -> Proposal:
        from ..llm import BadModelOutput

        msgs = self.messages(skill, ctx, skills, feedback)
        profile = getattr(self.gateway, "profile", None)
        max_tokens = getattr(profile, "max_output", None)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise _ModelFailed("no time left in the request's model budget", final=True)
        partial = ctx.signal.meta.get("partial") if "reply" in skill.tools else None
        t0 = time.monotonic()
        try:
            c = self._call(msgs, skill.schema or PROPOSAL_SCHEMA, max_tokens, left,
                           partial if callable(partial) else None)
        except BadModelOutput as e:
            calls.append(ModelCall(skill.name, time.monotonic() - t0, None, False, e.reason))
            raise _ModelFailed(e.reason) from None
        except TimeoutError:
            calls.append(ModelCall(skill.name, time.monotonic() - t0, None, False, "late"))
            budget = getattr(self.gateway, "budget", 0)
            raise _ModelFailed(f"the model did not answer within the {budget:g}s budget "
                               "(its late answer is dropped)", final=True) from None
        except OpenCortexError as e:  # every provider failed (the gateway retried already)
            calls.append(ModelCall(skill.name, time.monotonic() - t0, None, False, str(e)))
            raise _ModelFailed(f"model unavailable: {e}", final=True) from None
        tokens = (c.usage or {}).get("prompt_tokens")
        calls.append(ModelCall(skill.name, time.monotonic() - t0,
                               tokens if isinstance(tokens, int) else None, True))
        out = c.data if c.data is not None else _loads(c.text)
        if not isinstance(out, dict):
            raise _ModelFailed("the answer is not a JSON object")
        return out

    def _call(self, msgs: list[Any], schema: dict[str, Any], max_tokens: int | None,
              left: float | None, partial: Callable[[str], None] | None = None) -> Any:
        """``gateway.stream`` on its own thread, waited for at most ``left`` seconds with
        the memex lock released; ``TimeoutError`` after that (the thread closes the stream
        at the next piece, so the server stops; it holds no store and no lock).  With
        ``partial`` the reply's text is handed to it as it comes (provisional: the reply
        that follows, once verified, is the answer)."""
        box: dict[str, Any] = {}
        done = threading.Event()
        late = threading.Event()

        def run() -> None:
            # always streamed: a server stops generating when the stream is closed (llama.cpp
            # servers finish a non-streamed request even after the client gave up, and the
            # next request waits behind it)
            from ..llm import Completion, TextDelta

            events = self.gateway.stream(msgs, tier="fast", json_schema=schema,
                                         max_tokens=max_tokens)
            text = ReplyText()
            try:
                for ev in events:
                    if late.is_set():
                        break  # closing the stream below tells the server to stop
                    if isinstance(ev, TextDelta) and partial is not None:
                        piece = text.feed(ev.text)
                        if piece:
                            partial(piece)
                    elif isinstance(ev, Completion):
                        box["out"] = ev
            except BaseException as e:  # handed to the waiting thread
                box["err"] = e
            finally:
                events.close()
                done.set()

        threading.Thread(target=run, name="opencortex-model", daemon=True).start()
        with slow_work():
            finished = done.wait(left)
        if not finished:
            late.set()  # a late answer's pieces are not shown either
            raise TimeoutError
        if "out" not in box and "err" not in box:
            from ..llm import ProviderError

            raise ProviderError("stream", "the stream ended without an answer")
        if "err" in box:
            raise box["err"]
        return box["out"]

    def _situation(self, ctx: Context, skills: list[Skill]) -> str:
        """Peripheral vision for the model: focus, agenda, projects, neighbours, skills,
        recent log lines — private nodes withheld when the model is remote.  On the small
        profile only the current time (the rest costs a small model seconds per call)."""
        from ..access import Access
        from ..context import assemble

        profile = getattr(self.gateway, "profile", None)
        budget = getattr(profile, "situation_tokens", self.context_budget)
        if not budget:
            now = ctx.extra.get("now")
            if not isinstance(now, dt.datetime):
                now = dt.datetime.now().astimezone()
            return f"Now: {now:%Y-%m-%d %a %H:%M}"
        try:
            # private notes stay out when the model is remote, and when the answer goes to
            # a client that may not see them (a local model would quote them to it)
            withhold = bool(ctx.extra.get("remote_model")) or not Access.for_signal(
                ctx.memex, getattr(getattr(ctx, "signal", None), "meta", None) or {}
            ).sees_private
            return assemble(ctx.memex, focus=ctx.focus, query=ctx.text or None,
                            budget=min(budget, self.context_budget), remote=withhold,
                            skills=skills, log_lines=ctx.logs).text
        except Exception as e:  # context is help, not a precondition
            log.warning("context assembly failed: %s", e)
            return ""


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


class ReplyText:
    """The decoded characters of a streamed JSON object's ``"text"`` string, as they come
    (``{"action": "reply", "text": "Hel`` → ``Hel``): what a person sees of a structured
    answer while the model still writes it."""

    _KEY = re.compile(r'"text"\s*:\s*"')
    _NAME = '"text"'
    _BETWEEN = re.compile(r"[\s:]*")

    def __init__(self) -> None:
        self.buf = ""
        """What is not decoded yet: before the key, only what may still begin it; after
        it, an escape cut between pieces.  Kept short, so a long answer sent a character
        at a time is neither copied nor searched again per piece (that was quadratic)."""
        self.pos: int | None = None
        self.done = False

    def _undecided(self, buf: str) -> str:
        """The end of ``buf`` (where the key was not found) that a later piece could still
        complete into the key: a ``"text"`` followed only by blanks and colons (kept with
        its blanks dropped: they match the same), else a cut-off start of the name."""
        k = buf.rfind(self._NAME)
        if k >= 0:
            rest = buf[k + len(self._NAME):]
            if self._BETWEEN.fullmatch(rest):
                return self._NAME + "".join(rest.split())
        return buf[-(len(self._NAME) - 1):]

    def feed(self, piece: str) -> str:
        if self.done:
            return ""
        buf = self.buf + piece
        if self.pos is None:
            m = self._KEY.search(buf)
            if m is None:
                self.buf = self._undecided(buf)
                return ""
            buf = buf[m.end():]
            self.pos = 0
        out: list[str] = []
        i = 0
        while i < len(buf):
            c = buf[i]
            if c == '"':
                self.done = True
                break
            if c == "\\":
                if i + 1 >= len(buf):
                    break
                e = buf[i + 1]
                if e == "u":
                    if i + 6 > len(buf):
                        break
                    try:
                        out.append(chr(int(buf[i + 2:i + 6], 16)))
                    except ValueError:
                        pass
                    i += 6
                    continue
                out.append(_ESCAPES.get(e, e))
                i += 2
                continue
            out.append(c)
            i += 1
        self.buf = "" if self.done else buf[i:]
        return "".join(out)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None
