"""One GTD clause -> one proposal: a read-only answer, a question back ("which one: …?"),
or a list of write steps (capture and/or changes to one existing entry).

The decision, in order: a question never writes; an explicit capture ("remind me to…")
captures; a command that acts on an item (mark, move, push, cancel, a note, a state word)
must resolve the item or writes nothing; a report ("watered the plants", "waiting on…",
"X will take an hour", "<what was waited for> arrived") changes the entry it clearly names, and otherwise a new task is
captured — except that nothing already on the list is captured twice."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from ..config import GtdSettings
from .gtd_questions import answer, is_question
from .gtd_refs import (
    MIN_COVER,
    TITLE_COVER,
    Resolution,
    all_nodes,
    cite,
    named,
    resolve_context,
    resolve_meaning,
    resolve_ref,
)
from .gtd_slots import _DEFER, Slots, base_verbs, parse_clause, past_verb, stem, words

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["STEP_OPS", "capture_target", "file_keywords", "plan", "waited_for",
           "week_start_of"]

STEP_OPS = ("capture", "todo", "schedule", "deadline", "priority", "tag", "set-property",
            "append")
MIN_REF_COVER = 0.25
"""An explicit command acts on its best match only if that covers this share of its words."""
_STRICT_VERBS = {"mark", "move", "reschedule", "postpone", "push", "delay", "bump", "tag",
                 "untag", "cancel", "scrap", "ditch", "reopen", "append", "note", "prioritise",
                 "prioritize", "deprioritise", "deprioritize", "shift", "defer", "snooze", "effort"}
_PRONOUN_MOVE = re.compile(r"\b(?:move|push|shift|postpone|bump|delay|reschedule|mark|tag|put)\s+"
                           r"(?:it|that|this|them|that\s+one|this\s+one)\b", re.I)


def week_start_of(settings: Any) -> int:
    """The day a week begins on (0 Monday … 6 Sunday): ``Settings.gtd`` (``[gtd]
    week_start``, ``OPENCORTEX_WEEK_START``); for a settings-like object without typed
    sections, its raw ``data`` parsed the same way."""
    typed = getattr(settings, "gtd", None)
    if isinstance(typed, GtdSettings):
        return typed.week_start
    table = (getattr(settings, "data", None) or {}).get("gtd") or {}
    return GtdSettings.parse(table, {}).week_start


def file_keywords(memex: Memex, rel: str) -> tuple[list[str], list[str]]:
    """The TODO and done keywords of a file (its #+TODO lines; Org's default without)."""
    from ..org.parser import parse

    p = memex.root / rel
    if not p.is_file():
        return ["TODO"], ["DONE"]
    doc = parse(p.read_text(encoding="utf-8", errors="replace"))
    return list(doc.todo_keywords), list(doc.done_keywords)


def capture_target(memex: Memex, keyword: str, nodes: list[Node]) -> tuple[str, str]:
    """Where a new entry goes, and the keyword it gets there: a WAITING entry to the memex's
    waiting-for heading; otherwise the one inbox (:meth:`Memex.inbox`); the first of those
    whose file allows ``keyword`` (else the keyword falls back to TODO)."""
    targets: list[str] = []
    if keyword == "WAITING":  # a waiting-for list, when the memex keeps one, holds it
        targets += [n.key for n in nodes if n.level == 1 and not n.todo
                    and re.fullmatch(r"waiting(?:[- ]for)?(?: list)?", n.title.strip(), re.I)]
    targets.append(memex.inbox())  # the one inbox (Memex.inbox)
    for t in targets:
        todo, done = file_keywords(memex, t.split("::")[0])
        if keyword in todo or keyword in done:
            return t, keyword
    return targets[0], "TODO"


def _iso(w: dt.date | dt.datetime) -> str:
    return w.isoformat(timespec="minutes") if isinstance(w, dt.datetime) else w.isoformat()


def _ref(n: Node) -> str:
    return f"id:{n.id}" if n.id else n.key


def _reply(text: str) -> dict[str, Any]:
    return {"action": "reply", "text": text}


def _which(r: Resolution, what: str) -> dict[str, Any]:
    rows = "\n".join(f"- {' '.join(x for x in (n.todo, n.title) if x)} ({cite(n)})"
                     for n in r.candidates[:6])
    return _reply(f"Which one do you mean{what}:\n{rows}\nSay it with more of the title, or "
                  "its id / file:line. Nothing was changed.")


def _not_found(r: Resolution, text: str) -> dict[str, Any]:
    looked = " ".join(r.searched) or text
    return _reply(f"I found no task matching {text.strip()!r} (searched titles for: {looked}); "
                  "nothing was changed and nothing captured.")


def _capture(memex: Memex, s: Slots, nodes: list[Node]) -> dict[str, Any]:
    title = s.title.strip()
    if not title or not words(title):
        return _reply("What should I capture? I found no words for the task's title.")
    kw = s.state if s.state in ("WAITING", "NEXT") else "TODO"
    to, kw = capture_target(memex, kw, nodes)
    steps: list[dict[str, Any]] = [{"op": "capture", "to": to, "text": title, "todo": kw,
                                    "tags": list(s.tags)}]
    steps += [st for st in _slot_steps("@new", None, s) if st["op"] != "tag"]
    return {"action": "memex", "op": "gtd", "path": to.split("::")[0], "steps": steps,
            "summary": f"capture {title!r}"}


def _ts(raw: str | None):
    from ..org.timestamps import parse_timestamp

    return parse_timestamp(raw) if raw else None


def _cookie(ts: Any, new_rep: str | None) -> str | None:
    """The repeater + warning to write: the old repeater kept unless a different interval
    was asked for (so ``.+1w`` stays ``.+1w``), the old warning delay always kept."""
    rep = new_rep
    if ts is not None and ts.repeater:
        old = re.sub(r"^[.+]+", "", ts.repeater)
        if new_rep is None or re.sub(r"^[.+]+", "", new_rep) == old:
            rep = ts.repeater
    parts = [p for p in (rep, ts.warning if ts is not None else None) if p]
    return " ".join(parts) or None


def _with_time(new: dt.date | dt.datetime, ts: Any) -> dt.date | dt.datetime:
    if isinstance(new, dt.datetime) or ts is None or not ts.has_time:
        return new
    return dt.datetime.combine(new, ts.start.time())


def _slot_steps(ref: str, node: Node | None, s: Slots) -> list[dict[str, Any]]:
    """The write steps for every slot but the state (dates, priority, tags, effort, note)."""
    steps: list[dict[str, Any]] = []
    sched_ts = _ts(node.scheduled) if node else None
    dl_ts = _ts(node.deadline) if node else None
    sched, dl = s.scheduled, s.deadline
    if node is not None and sched is not None and dl is None and (
            s.wants_deadline or (node.deadline and not node.scheduled and not s.repeater
                                 and (not isinstance(sched, dt.datetime)
                                      or (s.ref_verb or "").lower() in _DEFER))):
        # "move it to friday" on a task that only has a deadline moves the deadline; a time
        # of day said for doing it ("saturday at 10 I'm shopping for X") is when it is done
        sched, dl = None, sched
    if sched is not None:
        rep = s.repeater if s.repeat_on != "deadline" else None
        steps.append({"op": "schedule", "ref": ref, "when": _iso(_with_time(sched, sched_ts)),
                      "repeater": _cookie(sched_ts, rep)})
    if dl is not None:
        rep = s.repeater if s.repeat_on == "deadline" else None
        steps.append({"op": "deadline", "ref": ref, "when": _iso(_with_time(dl, dl_ts)),
                      "repeater": _cookie(dl_ts, rep)})
    if node is not None and s.repeater and sched is None and dl is None:
        ts, kind = (sched_ts, "schedule") if sched_ts else (dl_ts, "deadline")
        if ts is not None:
            base = ts.start if ts.has_time else ts.start.date()
            steps.append({"op": kind, "ref": ref, "when": _iso(base), "repeater":
                          " ".join(p for p in (s.repeater, ts.warning) if p)})
    if s.priority:
        steps.append({"op": "priority", "ref": ref,
                      "priority": None if s.priority == "none" else s.priority})
    if s.tags:
        steps.append({"op": "tag", "ref": ref, "changes": [f"+{t}" for t in s.tags]})
    if s.effort:
        steps.append({"op": "set-property", "ref": ref, "key": "Effort", "value": s.effort})
    return steps


def _shift_step(node: Node, s: Slots) -> dict[str, Any] | str:
    from .gtd_dates import shift_date

    assert s.shift is not None
    use_dl = s.wants_deadline or (node.deadline is not None and node.scheduled is None)
    raw = node.deadline if use_dl else node.scheduled
    kind = "deadline" if use_dl else "schedule"
    ts = _ts(raw)
    if ts is None:
        return (f"{node.title} ({cite(node)}) has no "
                f"{'deadline' if use_dl else 'scheduled date'} to move; nothing was changed.")
    n, unit = s.shift
    day = shift_date(ts.start.date(), n, unit)
    when: dt.date | dt.datetime = dt.datetime.combine(day, ts.start.time()) if ts.has_time \
        else day
    return {"op": kind, "ref": _ref(node), "when": _iso(when), "repeater": _cookie(ts, None)}


def _modify(memex: Memex, node: Node, s: Slots, *, state: str | None,
            explicit: bool = False) -> dict[str, Any]:
    ref = _ref(node)
    steps = _slot_steps(ref, node, s)
    if s.shift is not None:
        st = _shift_step(node, s)
        if isinstance(st, str):
            return _reply(st)
        steps = [x for x in steps if x["op"] != st["op"]] + [st]
    if s.note:
        clock = getattr(memex, "clock", None) or memex.writer.clock
        stamp = clock().strftime("[%Y-%m-%d %a %H:%M]")
        steps.append({"op": "append", "ref": ref, "text": f"- {stamp} {s.note}"})
    if state and state != node.todo:
        todo, done = file_keywords(memex, node.file)
        if state not in todo + done:
            alt = next((k for k in todo + done if k.upper().startswith(state[:5])), None)
            if alt is None:
                return _reply(f"{node.file} has no {state} keyword (it allows "
                              f"{', '.join(todo + done)}); nothing was changed.")
            state = alt
        steps.append({"op": "todo", "ref": ref, "state": state})
    if not steps and state and state == node.todo:
        return _reply(f"{node.title} is already {state} ({cite(node)}). Nothing was changed.")
    if not steps and explicit:
        return _reply(f"What should change on {node.title} ({cite(node)})? I read no date, "
                      "state, tag, priority, effort or note in that. Nothing was changed.")
    if not steps:
        return _reply(f"That is already on your list: {' '.join(x for x in (node.todo, node.title) if x)}"
                      f" ({cite(node)}). Nothing was changed.")
    return {"action": "memex", "op": "gtd", "path": node.file, "steps": steps,
            "summary": f"update {node.title!r}"}


def _verb_matches(s: Slots, node: Node) -> bool:
    """A report in the past tense of the task's own verb ("watered" / "Water the plants",
    "rent is paid" / "Pay rent")."""
    lead = re.match(r"\s*([a-z]+)", node.title, re.I)
    if not lead or s.obliged:  # "has to be bought": still to do, not done
        return False
    verb = stem(lead.group(1))
    return any(past_verb(w) == verb for w in re.findall(r"[a-z]+", s.title.lower()))


def plan(memex: Memex, text: str, now: dt.datetime) -> dict[str, Any]:
    """The proposal for one GTD clause."""
    text = re.sub(r"^\s*/gtd\b\s*", "", text)
    if is_question(text):
        return _reply(answer(memex, text, now))
    nodes = all_nodes(memex)
    tags = frozenset(t for n in nodes for t in n.tags)
    s = parse_clause(text, now, known_tags=tags, week_start=week_start_of(memex.settings))
    if s.capture_cue:
        return _capture(memex, s, nodes)
    if s.subject:  # "the X task is waiting on P": X, if it names an open entry
        rs = _resolve(memex, s.subject, nodes, tasks=True)
        if rs.ambiguous:
            return _which(rs, "")
        if rs.node is not None and named(rs) and rs.node.todo_type != "done":
            return _modify(memex, rs.node, s, state=s.state)
    r = _resolve(memex, s.ref_text, nodes, tasks=bool(
        s.state or re.search(r"\b(?:task|todo|to-do)s?\b", text, re.I)))
    explicit = bool(s.note or s.shift or s.ref_verb in _STRICT_VERBS
                    or s.state in ("DONE", "CANCELLED", "TODO", "NEXT")
                    or (s.state is not None and s.ref_verb is not None)  # "put X on hold"
                    or _pronoun_refers_back(text))
    good = r.node is not None and (r.exact or _cover(r, s) >= MIN_REF_COVER)
    if explicit:  # a state or a change said outright: only on an entry the words name
        if r.ambiguous:
            return _which(r, "")
        if not (good and named(r)):
            if (c := resolve_context(memex, s.ref_text or text)).node is not None:
                return _modify(memex, c.node, s, state=s.state, explicit=True)
            return _not_found(r, s.ref_text or text)
        return _modify(memex, r.node, s, state=s.state, explicit=True)  # type: ignore[arg-type]
    if (s.state is None and s.arrived and r.node is not None and r.node.todo == "WAITING"
            and named(r)):
        return _modify(memex, r.node, s, state="DONE")  # what was waited for came
    if s.state is None and s.arrived and (w := waited_for(memex, s.ref_text, nodes)) is not None:
        return _modify(memex, w, s, state="DONE")  # named among what is waited for
    strong = good and bool(r.node.todo) and r.node.todo_type != "done" and (  # type: ignore[union-attr]
        r.strong or _verb_matches(s, r.node))  # type: ignore[arg-type]
    if s.obliged and strong and s.changes() and s.state is None:
        return _modify(memex, r.node, s, state=None)  # type: ignore[arg-type]
    if s.state is None and strong and _verb_matches(s, r.node):  # type: ignore[arg-type]
        return _modify(memex, r.node, s, state="DONE")  # type: ignore[arg-type]
    if s.past and s.state is None and _reports_other(s):
        s.past = False  # "noticed the tap washer drips again": no news of it done
    if s.past and s.state is None:
        if strong:
            return _modify(memex, r.node, s, state="DONE")  # type: ignore[arg-type]
        if (done := _reported_done(memex, s, r)) is not None:
            return _modify(memex, done, s, state="DONE")
        if r.ambiguous:
            return _which(r, " (to mark done)")
        if not s.changes():
            return _not_found(r, s.ref_text or text)
    if strong and (s.changes() or not (s.weak_cue or s.ref_verb)):
        return _modify(memex, r.node, s, state=s.state)  # type: ignore[arg-type]
    if s.changes() and s.state is None:  # a statement about an entry: that entry, first
        alt = _named_elsewhere(memex, s, nodes)
        if isinstance(alt, Resolution):
            return _which(alt, "")
        if alt is not None:
            return _modify(memex, alt, s, state=None)
    if s.changes() and r.ambiguous and r.strong and r.q_cover >= MIN_COVER and all(
            c.todo and c.todo_type != "done" for c in r.candidates):
        return _which(r, "")  # its words name two open tasks alike: never a third entry
    if s.changes() and s.state is None and not s.weak_cue and \
            (c := resolve_context(memex, s.ref_text)).node is not None:
        return _modify(memex, c.node, s, state=None)  # "the promo-packet write-up: 25 min"
    return _capture(memex, s, nodes)


_NOT_DONE = frozenset(stem(w) for w in (
    "noticed saw seen found forgot forgotten missed realised realized heard thought wondered "
    "tried started began wanted needed failed skipped postponed broke broken lost "
    "delayed moved pushed reopened added".split()))
"""Past-tense verbs that report something other than the task's completion ("noticed the
tap washer is leaking", "started the outline"): never read as done."""


def _reports_other(s: Slots) -> bool:
    """The clause's leading past verb reports something other than a completion."""
    lead = re.match(r"\s*(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+|already\s+)?"
                    r"([a-z]+)", s.title, re.I)
    return lead is not None and (past_verb(lead.group(1)) or "") in _NOT_DONE


def _reported_done(memex: Memex, s: Slots, r: Resolution) -> Node | None:
    """The open task a past-tense statement reports finished in words of its own ("fitted
    the new washer, the kitchen tap has stopped dripping" / "Fix the kitchen tap washer";
    "bought the gift for Jonas, the Ottolenghi book he kept borrowing" / "Buy a Christmas
    present for Jonas", whose body names that book): the statement names most of the title's
    words and is near it in meaning, or the task's context (outline, body) holds most of the
    statement's words.  None when the leading verb reports something else ("noticed …")."""
    if _reports_other(s):
        return None
    node = r.node
    if node is not None and node.todo and node.todo_type != "done" and \
            r.t_cover >= TITLE_COVER and r.q_cover >= MIN_COVER / 2 and \
            resolve_meaning(memex, s.ref_text, [node]).node is not None:
        return node
    return resolve_context(memex, s.ref_text).node


def waited_for(memex: Memex, text: str, nodes: list[Node]) -> Node | None:
    """The WAITING entry a report of arrival names ("the hetzner money came back" / "Refund
    from Hetzner …"): looked up among the waited-for entries only, so a rarer word of the
    title is enough; None when none or two fit."""
    pool = [n for n in nodes if n.todo == "WAITING"]
    if not pool or not text.strip():
        return None
    r = resolve_ref(memex, base_verbs(text), nodes=pool)
    if r.node is None or r.ambiguous or not (named(r) or r.q_cover >= MIN_COVER / 2):
        return None
    return r.node


def _named_elsewhere(memex: Memex, s: Slots, nodes: list[Node]) -> Node | Resolution | None:
    """The open task a statement's other phrases name (its subject, what time is set aside
    for: :attr:`Slots.refs`), or the close candidates when they name two equally; None when
    they name none (then the clause is a new entry)."""
    for ref in s.refs:
        r = resolve_ref(memex, base_verbs(ref), nodes=nodes, open_only=True)
        if r.ambiguous and r.q_cover >= MIN_COVER and r.strong:
            return r
        if r.node is not None and (r.strong or r.exact) and r.q_cover >= MIN_COVER:
            return r.node
    for ref in [*s.refs, s.ref_text]:  # the words differ in form: what they mean
        if (m := resolve_meaning(memex, base_verbs(ref), nodes)).node is not None:
            return m.node
    return None


def _pronoun_refers_back(text: str) -> bool:
    """"move it to friday", "the restic thing, tag it work": the pronoun is an existing
    entry — unless the clause opens with an imperative of its own ("pick up stamps, tag it
    errand"), whose new entry the pronoun means."""
    m = _PRONOUN_MOVE.search(text)
    if not m:
        return False
    lead = text[:m.start()].strip(" ,;:-")
    if not lead or re.match(r"(?:the|my|that|this|those|these|our|i|we|he|she|they|it)\b",
                            lead, re.I):
        return True  # a noun phrase or a statement before it names the entry
    return bool(re.search(r"\b(?:is|are|was|were|has|have|had|will|can|'s|'re)\b|\w's\b",
                          lead, re.I))  # "Priya is reworking the rfc, so mark that one …"


def _resolve(memex: Memex, text: str, nodes: list[Node], *, tasks: bool) -> Resolution:
    """The entry ``text`` names; among tasks first when the request acts on a task (a state
    change, "the … task"), so a note sharing the words is no rival ("cancel the Lena task")."""
    ref = base_verbs(text)
    if tasks:
        r = resolve_ref(memex, ref, nodes=nodes, tasks_only=True)
        if r.node is not None or r.candidates:
            return _tie_broken(memex, ref, r)
    return _tie_broken(memex, ref, resolve_ref(memex, ref, nodes=nodes))


def _tie_broken(memex: Memex, ref: str, r: Resolution) -> Resolution:
    """Two titles share the same words with ``ref`` ("the dentist booking": "Book a dental
    cleaning" and "… for the book repository"): the one clearly nearest in meaning, if any;
    else still the question which."""
    if not r.ambiguous:
        return r
    m = resolve_meaning(memex, ref, r.candidates)
    if m.node is None:
        return r
    return Resolution(m.node, [m.node], r.searched, strong=True,
                      q_cover=max(r.q_cover, m.q_cover), t_cover=max(r.t_cover, m.t_cover),
                      why=m.why)


def _cover(r: Resolution, s: Slots) -> float:
    return r.q_cover if r.node is not None else 0.0
