"""The recollect skill: vague recall of past work as a dialogue inside a conversation.

``/recollect …`` or the router's ``recollect`` intent starts a recall; while it is open
(a candidate presented, a question asked, a wider search offered) the next request in the
same conversation goes to it — an identification, a stop, or more cue.  A request in no
conversation (an ``@agent`` headline, a gateway that names none) stands alone: its recall is
continued by its session id (``opencortex recall --session ID``). The recall engine
(``opencortex.recall``) is deterministic; this skill only carries rounds in and out."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..signal import conversation
from .base import Action, Context, Proposal, Rejection, Skill

__all__ = ["open_recall", "skill", "story_citations"]

_OPEN_STATES = ("presented", "asked", "offered")


def _engine(ctx: Context) -> Any:
    from ..access import Access

    return Access.for_signal(ctx.memex, ctx.signal.meta).recall()  # the sender's privacy


def _conversation_file(ctx: Context) -> Path | None:
    conv = conversation(ctx.signal.meta)
    if conv is None:
        return None
    digest = hashlib.sha256(conv.encode()).hexdigest()[:20]
    return Path(ctx.memex.settings.state_dir) / "recall" / f"conversation-{digest}"


def open_recall(ctx: Context) -> str | None:
    """The recall session still open in this conversation, if any."""
    conv = _conversation_file(ctx)
    if ctx.signal.type != "request" or conv is None:
        return None
    try:
        return conv.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


MOVE_ON_CONFIDENCE = 0.85
"""How sure the router's classifier must be that a turn asks for another tool before an open
recall lets it go there (an answer to the recall — "no, the one with Sam" — must stay)."""


def _moves_on(text: str) -> bool:
    """A request plainly for something else (an agenda, a command, a web page…): the
    person moved on. The recall holds — moving on is neither an identification nor a
    stop — and the request goes where it belongs.  Plain syntax (a /command, a URL, a
    command line) decides at once; words only when the classifier is confident."""
    from ..router.decompose import verdict
    from ..router.rules import rule_target

    target = rule_target(text)
    if target is not None:
        return target not in ("recollect", "chat")
    if len(text.split()) < 3:
        return False
    try:
        v = verdict(text)
    except Exception:  # no embedder: only syntax can tell that the person moved on
        return False
    return v.target not in ("recollect", "chat") and v.p >= MOVE_ON_CONFIDENCE


def _trigger(ctx: Context) -> bool:
    s = ctx.signal
    if s.sensor == "delegation" and s.payload.get("target") == "recollect":
        return True
    return bool(ctx.text.strip()) and open_recall(ctx) is not None and \
        not _moves_on(ctx.text)


def _offline(ctx: Context) -> Proposal:
    from ..recall.engine import RecallError

    engine = _engine(ctx)
    conv = _conversation_file(ctx)
    session = open_recall(ctx) if ctx.signal.sensor != "delegation" else None
    try:
        if session:
            rnd = engine.reply(session, ctx.text)
        else:
            # the router's recollect intent is the person's invocation; a slash command keeps
            # its own text so binding can fall back to the previous turn when it is bare
            slash = ctx.text.lstrip().lower().startswith(("/recollect", "/recall"))
            cue = ctx.text if slash else str(ctx.signal.payload.get("cue") or ctx.text)
            rnd = engine.start(cue, invoked=True,
                               conversation=conversation(ctx.signal.meta) or "")
    except RecallError as e:
        if conv is not None:
            conv.unlink(missing_ok=True)
        return {"action": "reply", "text": f"Recall: {e}"}
    if conv is None:
        pass
    elif rnd.state in _OPEN_STATES:
        conv.parent.mkdir(parents=True, exist_ok=True)
        conv.write_text(rnd.session, encoding="utf-8")
    elif rnd.state != "holding":
        conv.unlink(missing_ok=True)
    text = rnd.render()
    if rnd.state == "not_activated":
        text += "\nFor notes, try a search with a few words you remember."
    return {"action": "reply", "text": text,
            "data": {"recall": rnd.to_dict(), "citations": story_citations(ctx, rnd.story)}}


_QUOTED_ID = re.compile(r"\bid:([0-9A-Za-z][\w-]{3,})")
_QUOTED_LINE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.org):(\d+)\b")


def story_citations(ctx: Context, story: list[dict[str, Any]]) -> list[str]:
    """What a recall story quotes, as ``ask --json`` lists it: a claim from a memex note
    cites that note (``id:``, else ``file::outline``); a claim from a session record cites
    the record, and each note the quoted turn itself cites (an earlier answer's ``file:line``
    or ``id:``) that this sender may see — so the notes behind a story are named, whichever
    skill answered."""
    from ..access import Access
    from ..errors import OpenCortexError

    access = Access.for_signal(ctx.memex, ctx.signal.meta)
    out: list[str] = []
    for claim in story:
        cite = claim.get("cite") or {}
        if cite.get("note"):
            out.append(str(cite["note"]))
            continue
        out.append(str(cite.get("locator", "")))
        excerpt = str(cite.get("excerpt", ""))
        for ref in _QUOTED_ID.findall(excerpt):
            try:
                node = access.resolve(f"id:{ref}")
            except (OpenCortexError, ValueError):
                continue
            out.append(f"id:{node.id}")
        for file, line in _QUOTED_LINE.findall(excerpt):
            try:
                n = access.node_at(file, int(line))
            except (OpenCortexError, ValueError):
                continue
            if n is not None:
                out.append(f"id:{n.id}" if n.id else n.key)
    return [c for c in dict.fromkeys(out) if c]


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") != "reply":
        return None
    text = str(p.get("text") or "").strip()
    if not text:
        return Rejection("an empty reply")
    return Action("reply", {"text": text, "data": p.get("data")}, origin="recollect")


def skill() -> Skill:
    # above the router (90): an open recall takes the conversation's next utterance
    return Skill("recollect", 95, trigger=_trigger, offline=_offline, symbolic=_symbolic,
                 tools=["reply"],
                 description="Vague recall of past work: a story citing opened records "
                             "(sessions, transcripts, git, notes); you identify it.")
