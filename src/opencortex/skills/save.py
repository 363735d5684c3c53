"""Answers into notes: ``/save NODE`` or "save that under my RAG note" files the
conversation's last answer as a child entry under the node, its citations as Org links,
through the guarded writer (a ``memex.write`` the guard checks, journaled, undoable with
``/unsave`` or ``opencortex undo``).

The kernel remembers each conversation's last answer (``remember``); the answer is data:
lines that would be Org structure are indented so they stay text."""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..signal import conversation
from .base import Action, Context, Proposal, Rejection, Skill

if TYPE_CHECKING:
    from ..memex import Memex

__all__ = ["TARGET", "answer_entry", "apply_memex_op", "citation_link", "find_node", "last_answer",
           "parse_request", "remember", "skill"]

TARGET = "save"
_SLASH = re.compile(r"^\s*/save(?:\s+(?P<ref>.+?))?\s*$", re.I | re.S)
_UNSAVE = re.compile(r"^\s*/unsave\s*$", re.I)
_NATURAL = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:save|file|put|append|add|keep)\s+"
    r"(?:that|this|it|the (?:last )?answer|your (?:last )?answer)\s+"
    r"(?:under|to|in|into|below|with)\s+(?:my\s+|the\s+|our\s+)?(?P<ref>.+?)"
    r"(?:\s+(?:note|entry|heading|headline|node))?\s*(?:please)?[.!?]?\s*$", re.I)

_LOCK = threading.Lock()
_LAST: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
_SAVED: dict[tuple[str, str], dict[str, Any]] = {}
_MAX = 256


def remember(root: Path | str, session: str | None, question: str, text: str, data: Any) -> None:
    """The kernel's record of a conversation's last answer (what ``/save`` files)."""
    if conversation({"session": session}) is None or not text.strip():
        return
    if (isinstance(data, dict) and data.get("saved") is not None) or \
            parse_request(question) is not None:
        return  # "Saved under …" (or any reply to a save) is not an answer worth saving
    with _LOCK:
        key = (str(root), str(session))
        _LAST[key] = {"question": question, "text": text,
                      "citations": list((data or {}).get("citations") or [])
                      if isinstance(data, dict) else []}
        _LAST.move_to_end(key)
        while len(_LAST) > _MAX:
            _LAST.popitem(last=False)


def last_answer(root: Path | str, session: str | None) -> dict[str, Any] | None:
    with _LOCK:
        return _LAST.get((str(root), str(session or "")))


def parse_request(text: str) -> tuple[str, str | None] | None:
    """("save", NODE-or-None) | ("unsave", None) for a save request, else None."""
    if _UNSAVE.match(text):
        return "unsave", None
    m = _SLASH.match(text) or _NATURAL.match(text)
    if not m:
        return None
    ref = (m.group("ref") or "").strip().strip("\"'“”«»")
    return "save", ref or None


def _acronym(title: str) -> str:
    return "".join(w[0] for w in re.split(r"[\s\-/]+", title) if w and w[0].isalnum()).lower()


def find_node(memex: Memex, ref: str, hide: Any = None) -> list[Any]:
    """The nodes ``ref`` may name: an exact reference (ID, key, FILE:LINE, exact title);
    else a title containing it, its initials ("RAG"), or a ROAM_ALIASES entry. More than
    one means the person must choose.  ``hide(tags)``: True for a node the asking client
    may not see (never named, never written under)."""
    exact = [n for n in memex.store.nodes_by_ref(ref) if hide is None or not hide(n.tags)]
    if exact:
        return exact
    want = ref.casefold()
    hits = []
    for n in memex.store.all_nodes():
        if hide is not None and hide(n.tags):
            continue
        title = n.title.casefold()
        aliases = n.properties.get("ROAM_ALIASES", "").casefold()
        if want == title or want == _acronym(n.title) or (aliases and want in aliases) \
                or re.search(rf"\b{re.escape(want)}\b", title):
            hits.append(n)
    if len(hits) > 1:  # a file's top headline stands for the note
        top = [n for n in hits if n.level == 1]
        hits = top if len(top) == 1 else hits
    return hits


def citation_link(memex: Memex, cite: str, from_file: str) -> str:
    """One citation as an Org link: an ID where the cited node has one, else a file link
    relative to the file the link is written in."""
    cite = cite.strip()
    if re.match(r"^[a-z][a-z0-9+.-]*://", cite):
        return f"[[{cite}]]"
    if cite.startswith("id:"):
        hit = memex.store.nodes_by_ref(cite)
        return f"[[{cite}][{_label(hit[0].title)}]]" if len(hit) == 1 else f"[[{cite}]]"
    m = re.match(r"^(.+?):(\d+)(?:-\d+)?$", cite)
    path, line = (m.group(1), m.group(2)) if m else (cite, None)
    if m and not os.path.isabs(path):
        hit = memex.store.nodes_by_ref(f"{path}:{line}")
        if len(hit) == 1 and hit[0].id:
            return f"[[id:{hit[0].id}][{_label(hit[0].title)}]]"
    target = Path(path) if os.path.isabs(path) else Path(memex.root) / path
    rel = os.path.relpath(target, (Path(memex.root) / from_file).parent)
    link = f"file:{rel}" + (f"::{line}" if line else "")
    return f"[[{link}][{_label(cite)}]]"


def _label(text: str) -> str:
    return re.sub(r"[\[\]]", "", " ".join(text.split()))[:120]


def answer_entry(memex: Any, node: Any, question: str, answer: str,
                 citations: list[Any]) -> str:
    """The entry a saved answer becomes (title line, then body): "Answer: QUESTION", the
    answer's Markdown as Org with no headlines of its own (under the note the person
    chose, only the one entry is added; the writer neutralises it), then its citations as
    Org links.  ``memex``: a Memex or a client's view of one."""
    from ..write.markdown_org import model_text_to_org

    cites = [citation_link(memex, c, node.file) for c in citations]
    q = " ".join(question.split())[:70] or "the last answer"
    body = model_text_to_org(answer, parent_level=None).rstrip()
    if cites:
        body += "\n\nSources:\n" + "\n".join(f"- {c}" for c in dict.fromkeys(cites))
    return f"Answer: {q}\n{body}"


def apply_memex_op(memex: Memex, args: dict[str, Any],
                   hide: Any = None) -> tuple[str, dict[str, Any]]:
    """Run the guarded write: ``op`` "save" (a child entry under args.node) or "unsave"
    (undo args.batch).  ``hide``: as for :func:`find_node` (the node is checked again)."""
    if args.get("op") == "unsave":
        undone = memex.undo_batch(str(args["batch"]))
        return (f"Undid the save ({len(undone)} write(s)) in {args.get('path')}.",
                {"saved": False, "undone": [r.to_dict() for r in undone]})
    node = memex.resolve(str(args["node"]))
    if hide is not None and hide(node.tags):
        from ..errors import NodeNotFoundError

        raise NodeNotFoundError(f"no node matches {args['node']!r} that this client may see")
    text = answer_entry(memex, node, str(args.get("question") or ""), str(args["text"]),
                        list(args.get("citations") or []))
    r = memex.capture(text, to=f"id:{node.id}" if node.id else node.key)
    return (f"Saved the answer under “{node.title}” ({node.file}:{node.line}); "
            "undo with /unsave or `opencortex undo`.",
            {"saved": r.to_dict(), "node": node.key, "citations": [f"{node.file}:{node.line}"]})


def _trigger(ctx: Context) -> bool:
    s = ctx.signal
    if s.sensor == "delegation":
        return s.payload.get("target") == TARGET
    return s.type == "request" and parse_request(ctx.text) is not None


def _offline(ctx: Context) -> Proposal:
    m = ctx.memex
    session = str(ctx.signal.meta.get("session") or "")
    got = parse_request(ctx.text) or ("save", str(ctx.signal.payload.get("node") or "")
                                      or None)
    key = (str(m.root), session)
    if got[0] == "unsave":
        with _LOCK:
            done = _SAVED.get(key)
        if not done:
            return {"action": "reply", "text": "Nothing saved in this conversation to undo."}
        return {"action": "memex", "op": "unsave", "path": done["file"],
                "batch": done["batch"]}
    ref = got[1] or (ctx.focus if isinstance(ctx.focus, str) and ctx.focus else None)
    if not ref:
        return {"action": "reply", "text": "Save under which note? Say /save NODE (an ID, "
                "FILE:LINE, or a title)."}
    last = last_answer(m.root, session)
    if last is None:
        return {"action": "reply", "text": "There is no answer in this conversation yet "
                "to save."}
    from ..access import Access

    hits = find_node(m, ref, hide=Access.for_signal(m, ctx.signal.meta).hide)
    if len(hits) != 1:
        if not hits:
            return {"action": "reply", "text": f"No note matches “{ref}”: use an ID, "
                    "FILE:LINE or its title."}
        return {"action": "reply", "text": f"“{ref}” could be {len(hits)} notes — say "
                "which (/save FILE:LINE):\n" + "\n".join(
                    f"- {n.title} ({n.file}:{n.line})" for n in hits[:8])}
    n = hits[0]
    return {"action": "memex", "op": "save", "path": n.file,
            "node": f"id:{n.id}" if n.id else f"{n.file}:{n.line}", "text": last["text"],
            "question": last["question"], "citations": last["citations"]}


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") == "reply":
        text = str(p.get("text") or "").strip()
        return Action("reply", {"text": text}, origin=TARGET) if text else \
            Rejection("an empty reply")
    if p.get("action") != "memex" or p.get("op") not in ("save", "unsave"):
        return None
    if not str(p.get("path") or "").endswith(".org"):
        return Rejection("a save writes into an .org file of the memex")
    args: dict[str, Any] = {k: p[k] for k in ("op", "path", "node", "text", "question",
                                              "citations", "batch") if k in p}
    return Action("memex.write", args, origin=TARGET)


def note_saved(root: Path | str, session: str | None, batch: str | None, file: str) -> None:
    """The actuator's record of a save, so ``/unsave`` can undo exactly it."""
    if session and batch:
        with _LOCK:
            _SAVED[(str(root), str(session))] = {"batch": batch, "file": file}


def skill() -> Skill:
    # above the router (90): "/save" and "save that under …" are this skill's, not a search
    return Skill("save", 93, trigger=_trigger, offline=_offline, symbolic=_symbolic,
                 tools=["reply", "memex.write"],
                 description="Save the last answer (with its citations as Org links) under a "
                             "note: /save NODE, or \"save that under my RAG note\"; /unsave.")
