"""Link suggestions in a conversation: ``/links NODE`` lists notes close in meaning to the
node that neither link to it nor are linked from it (``insight.links_suggest``), each with
its passage; ``/link N`` then adds an ``id:`` link to suggestion N through the guarded
writer (undoable: ``opencortex undo``). The person chooses; nothing is linked unasked."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from .base import Action, Context, Proposal, Rejection, Skill

if TYPE_CHECKING:
    from ..memex import Memex

__all__ = ["apply_memex_op", "skill"]

_LIST = re.compile(r"^\s*/links(?:\s+(?P<ref>.+?))?\s*$", re.I | re.S)
_APPLY = re.compile(r"^\s*/link\s+(?P<n>\d+)\s*$", re.I)
_LOCK = threading.Lock()
_LISTED: dict[tuple[str, str], str] = {}  # (memex, conversation) -> node key last listed


def _trigger(ctx: Context) -> bool:
    return ctx.signal.type == "request" and bool(_LIST.match(ctx.text) or
                                                  _APPLY.match(ctx.text))


def _offline(ctx: Context) -> Proposal:
    from ..insight.links_suggest import suggest

    m = ctx.memex
    conv = (str(m.root), str(ctx.signal.meta.get("session") or ""))
    a = _APPLY.match(ctx.text)
    if a:
        with _LOCK:
            key = _LISTED.get(conv)
        if key is None:
            return {"action": "reply", "text": "List suggestions first: /links NODE."}
        try:
            node = m.resolve(key)
        except Exception as e:
            return {"action": "reply", "text": f"Links: {e}"}
        hide = _hide(ctx)
        if hide is not None and hide(node.tags):
            return {"action": "reply", "text": "List suggestions first: /links NODE."}
        return {"action": "memex", "op": "link", "path": node.file, "node": key,
                "n": int(a.group("n"))}
    listed = _LIST.match(ctx.text)  # the trigger: /links or /link N (handled above)
    ref = ((listed.group("ref") if listed else None) or "").strip() or (
        ctx.focus if isinstance(ctx.focus, str) else "")
    if not ref:
        return {"action": "reply", "text": "Suggest links for which note? /links NODE "
                "(an ID, FILE:LINE, or a title)."}
    try:
        node, found = suggest(m, ref, hide=_hide(ctx))
    except Exception as e:  # NodeNotFoundError and friends: say what to fix
        return {"action": "reply", "text": f"Links: {e}"}
    with _LOCK:
        _LISTED[conv] = node.key
    if not found:
        return {"action": "reply", "text": f"No unlinked note is close to “{node.title}”."}
    lines = [f"Notes close to “{node.title}” that do not link with it:"]
    for i, s in enumerate(found, 1):
        lines.append(f"{i}. {s.title} ({s.file}:{s.line})\n   “{s.passage[:160]}” "
                     f"({s.file}:{s.passage_line})")
    lines.append("Link one with /link N.")
    return {"action": "reply", "text": "\n".join(lines),
            "data": {"citations": [f"{s.file}:{s.passage_line}" for s in found],
                     "suggestions": [s.to_dict() for s in found]}}


def _hide(ctx: Context) -> Any:
    """None for a sender who sees private notes, else the test of what is withheld."""
    from ..access import Access

    return Access.for_signal(ctx.memex, ctx.signal.meta).hide


def apply_memex_op(memex: Memex, args: dict[str, Any],
                   hide: Any = None) -> tuple[str, dict[str, Any]]:
    from ..insight.links_suggest import apply

    out = apply(memex, str(args["node"]), int(args["n"]), hide=hide)
    t = out["linked"]
    return (f"Linked to [[id:{t['id']}][{t['title']}]] ({len(out['writes'])} write(s); "
            "undo with `opencortex undo`).", {"linked": out, "saved": None})


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") == "reply":
        text = str(p.get("text") or "").strip()
        return Action("reply", {"text": text, "data": p.get("data")}, origin="links") \
            if text else Rejection("an empty reply")
    if p.get("action") != "memex" or p.get("op") != "link":
        return None
    return Action("memex.write", {k: p[k] for k in ("op", "path", "node", "n")},
                  origin="links")


def skill() -> Skill:
    return Skill("links", 93, trigger=_trigger, offline=_offline, symbolic=_symbolic,
                 tools=["reply", "memex.write"],
                 description="Suggest links for a note (/links NODE: close in meaning, not "
                             "yet linked, with the passage); /link N adds one.")
