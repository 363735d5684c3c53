"""The GTD part of routing, backed by the index: a clause whose subject resolves to an
existing open task (``gtd_refs``) and that carries a GTD slot (a state, tag, priority, effort,
date, repeater, shift, note, or a verb acting on an item — ``gtd_slots``) is a GTD command
on that task, whatever the learned classifier reads in its words; so is a question about
one existing task's dates or state, or about a project's lists ("what is done / next /
waiting in X").  The router asks :func:`hint` before the classifier (never before the rules
for unambiguous syntax); the gtd skill then plans the clause itself (``gtd_plan``).

A hint only decides the *target*: it writes nothing, and the gtd skill still resolves the
reference again, asks "which one" when two are close and writes nothing on a guess."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["GtdHint", "hint", "is_gtd_clause"]

GtdHint = Callable[[str], bool]
"""Clause text -> is it a GTD request about an item the index holds?"""

_ATTRIBUTE_Q = re.compile(
    r"\b(?:done|finish\w*|complet\w*|closed|cancel\w*|scrapped|dropped|wait\w*|next|left|"
    r"remaining|open|outstanding|pending|progress|status|due|deadline|scheduled|overdue|"
    r"priority|tasks?|todos?|to-?dos?|actions?|steps?)\b", re.I)
"""A question about a GTD attribute of its subject (its state, dates, tasks, next step)."""


def _open(n: Node) -> bool:
    return bool(n.todo) and n.todo_type != "done"


def _has_slot(s: object, strict_verbs: frozenset[str]) -> bool:
    from .gtd_slots import Slots

    assert isinstance(s, Slots)
    return s.changes() or s.ref_verb in strict_verbs


def _worth_a_lookup(text: str, now: dt.datetime, week_start: int) -> bool:
    """Could the clause be a GTD request at all (read before the index is): a slot, a verb
    acting on an item, a report, a weak "I need to", or a context word where the memex's
    own tags may stand ("…, it's an errand" / "… for work")?"""
    from .gtd_plan import _STRICT_VERBS
    from .gtd_questions import is_question
    from .gtd_slots import parse_clause

    if is_question(text):
        from .gtd_questions import _ADVICE, _HOW_LONG, _PROGRESS, _REPEAT_Q, _STATUS, _WHEN

        return any(rx.search(text) for rx in (_ATTRIBUTE_Q, _PROGRESS, _STATUS, _WHEN,
                                               _TAG_NAMED, _HOW_LONG, _ADVICE, _REPEAT_Q))
    s = parse_clause(text, now, week_start=week_start)
    from .gtd_slots import past_verb

    reported = any(past_verb(w) for w in re.findall(r"[a-z]+", text.lower()))
    return (not s.capture_cue and bool(s.ref_text)) and (
        _has_slot(s, frozenset(_STRICT_VERBS)) or s.weak_cue or s.past or s.arrived or reported
        or bool(_PARTICIPLE.search(text)) or bool(_TAG_CONTEXT.search(text)))


_PARTICIPLE = re.compile(r"\b(?:is|are|'s|was|were|got|been|now|all)\s+(?:all\s+|now\s+)?"
                         r"(?:\w{3,}ed|paid|sent|bought|made|done|sorted|built|written|sold)\b",
                         re.I)
"""A report in the passive ("the cleaning is booked"): maybe the task's own verb, done."""


_TAG_CONTEXT = re.compile(
    r"\b(?:it'?s|its|it\s+is|this\s+is|that'?s)\s+(?:an?|for|at|on|in|under|as)\s+\w"
    r"|\b(?:an?|for|at|on|to|into|in|under|as)\s+(?:the\s+)?[\w-]+(?:\s*/\s*maybe)?\s*[.!]?\s*$",
    re.I)


def is_gtd_clause(memex: Memex, clause: str, now: dt.datetime, *,
                  nodes: list[Node] | Callable[[], list[Node]] | None = None) -> bool:
    """Is ``clause`` a GTD command on (or question about) an existing entry of ``memex``?
    ``nodes``: the memex's headlines, or a function giving them (read only when needed)."""
    from .gtd_plan import _STRICT_VERBS, _verb_matches, waited_for, week_start_of
    from .gtd_questions import is_question
    from .gtd_refs import MIN_COVER, all_nodes, named, resolve_context, resolve_ref
    from .gtd_slots import base_verbs, parse_clause

    text = " ".join(clause.split())
    if not text or text.startswith(("/", "$", "`", "!")) or "://" in text:
        return False
    week_start = week_start_of(memex.settings)
    if not is_question(text) and dated_label(text, now, week_start):
        return True  # "<when>: <what>": an agenda entry, whatever its words are about
    if not _worth_a_lookup(text, now, week_start):
        return False
    pool = nodes() if callable(nodes) else nodes if nodes is not None else all_nodes(memex)
    if not any(n.todo for n in pool):
        return False
    if is_question(text):
        return (_asks_about_item(memex, text, pool) or _names_task_tag(text, pool)
                or _lists_by_repeat_or_date(text, pool, now, week_start))
    tags = frozenset(t for n in pool for t in n.tags)
    s = parse_clause(text, now, known_tags=tags, week_start=week_start)
    if s.capture_cue:
        return False  # an explicit capture names something new: not an index question
    if not s.ref_text:
        return False
    if s.state is None and not s.changes() and s.arrived and \
            waited_for(memex, s.ref_text, pool) is not None:
        return True  # what a WAITING entry waits for came ("the refund came through")
    r = resolve_ref(memex, base_verbs(s.ref_text), nodes=pool)  # "paid" names "Pay rent"
    by_context = (s.past or _has_slot(s, frozenset(_STRICT_VERBS))) and not s.weak_cue and \
        resolve_context(memex, s.ref_text).node is not None  # its outline context or body
    if r.ambiguous:  # two open tasks fit equally: the gtd skill asks which one
        return (_has_slot(s, frozenset(_STRICT_VERBS)) and named(r)
                and all(_open(n) for n in r.candidates)) or by_context
    n = r.node
    if n is None or not _open(n):
        return by_context
    if s.weak_cue:  # "for X I still need to …": a new task beside an existing one
        return r.q_cover >= MIN_COVER / 2 or r.strong
    if s.state is None and not s.changes():
        # a report of the task's own verb ("watered the plants" / "Water the plants", "the
        # cleaning is booked" / "Book a dental cleaning"), or what a WAITING entry waits for
        # came ("the logs arrived")
        return (named(r) and (_verb_matches(s, n) or (s.arrived and n.todo == "WAITING"))) \
            or (s.past and by_context)
    if not _has_slot(s, frozenset(_STRICT_VERBS)):
        return False
    return named(r)


_LABEL = re.compile(r"^(?P<head>.{3,80}?)\s*:\s+(?P<what>\S.*)$")


def dated_label(text: str, now: dt.datetime, week_start: int = 0) -> bool:
    """"fourth thursday of april, 6pm: book club", "every 5 days from monday: water the
    cactus": a head made of day, time and repeat phrases only, then a colon and what
    happens — an entry for the agenda, said in its own words."""
    from .gtd_slots import parse_clause

    m = _LABEL.match(text)
    if m is None:
        return False
    s = parse_clause(m.group("head"), now, week_start=week_start)
    dated = s.scheduled is not None or s.deadline is not None or s.repeater is not None
    return dated and not s.title and bool(m.group("what").strip(" .!"))


_LISTING = re.compile(r"^(?:(?:so|and|ok(?:ay)?|hey|please)[\s,]+)*(?:what|what's|whats|which|"
                      r"list|show|any|anything|do\s+i\s+have|have\s+i|did\s+i|how\s+many)\b",
                      re.I)
"""How a question that asks for a list of entries starts; where/when/how/why/who ask about
one thing's property, whatever repeat or date words it holds."""


def _lists_by_repeat_or_date(text: str, nodes: list[Node], now: dt.datetime,
                             week_start: int) -> bool:
    """A question listing tasks by how they repeat ("what repeats every week?") or by a
    state or due date over some days ("which tasks did I finish in november?", "what's due
    before the end of the month?"): a question over the GTD lists, answered from them."""
    from .gtd_questions import _REPEAT_Q, _date_span

    if not _LISTING.match(text):  # "where does the nightly job copy to?": about a thing
        return False
    if _REPEAT_Q.search(text):
        from .gtd_questions import _repeater_of

        return any(_repeater_of(n) for n in nodes if n.todo)
    if not re.search(r"\b(?:done|finish\w*|complet\w*|closed|cancel\w*|due|deadlines?|"
                     r"scheduled|overdue|tasks?|todos?)\b", text, re.I):
        return False
    return _date_span(text, now, week_start) is not None


_TAG_NAMED = re.compile(r"\btagged\s+(?:as\s+|with\s+)?[#@]?(?P<t>[\w-]+)|(?<!\w)[#@](?P<u>[\w-]+)",
                        re.I)
"""A tag named in a question ("what have I got tagged homelab?", "anything @phone?")."""


def _names_task_tag(text: str, nodes: list[Node]) -> bool:
    """A question naming a tag the memex's open tasks carry: a list of those tasks, whatever
    topic the tag's word has (the classifier may read "homelab" as a notes topic)."""
    tags = {t.lower().lstrip("@") for n in nodes if _open(n) for t in n.tags}
    return any((m.group("t") or m.group("u") or "").lower().lstrip("@") in tags
               for m in _TAG_NAMED.finditer(text))


def _asks_about_item(memex: Memex, text: str, nodes: list[Node]) -> bool:
    """A question about one existing task's state or dates, or about a project's lists."""
    from .gtd_questions import _ADVICE, _HOW_LONG, _PROGRESS, _STATUS, _WHEN, _progress, _scope_of
    from .gtd_refs import resolve_ref
    from .gtd_slots import DATE_RE

    if (m := _ADVICE.match(text)) is not None:  # "should I drop X?": X as it stands
        r = resolve_ref(memex, m.group("ref"), nodes=[n for n in nodes if n.todo])
        if r.node is not None and (r.strong or r.exact) and _open(r.node):
            return True
    if _HOW_LONG.search(text):  # "how long will X take?": X's Effort, when X is a task
        ref = _HOW_LONG.sub(" ", re.sub(r"\b(?:will|would|does|do|it|take|takes|need|needs|"
                                        r"me|us)\b|\?", " ", text, flags=re.I))
        r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo])
        if r.node is not None and (r.strong or r.exact):
            return True
    if _STATUS.search(text) or _WHEN.search(text):  # "is X fixed yet?", "when is X due?"
        ref = re.sub(r"^\s*(?:when|is|are|was|were|did|have|has)\b|\b(?:due|yet|already)\b|\?",
                     " ", text, flags=re.I)
        r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo])
        if r.node is not None and r.strong:
            return True
    if _PROGRESS.search(text) and _progress(text, nodes) is not None:
        return True  # "how far along is <project>?"
    if not _ATTRIBUTE_Q.search(text):
        return False
    scope, _ = _scope_of(text, nodes)
    if scope is not None and (scope.todo or "project" in scope.tags
                              or any(n.todo for n in nodes if n.file == scope.file)):
        return True
    ref = DATE_RE.sub(" ", _ATTRIBUTE_Q.sub(" ", text))
    r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo])
    return r.node is not None and r.strong and bool(r.node.todo)


def hint(memex: Memex, now: dt.datetime | None = None) -> GtdHint:
    """The router's index-backed GTD test for one request (the index read once, lazily)."""
    from .gtd import now_of

    when = now or now_of(None)
    cache: dict[str, list[Node]] = {}
    seen: dict[str, bool] = {}

    def nodes() -> list[Node]:
        if "nodes" not in cache:
            from .gtd_refs import all_nodes

            cache["nodes"] = all_nodes(memex)
        return cache["nodes"]

    def test(clause: str) -> bool:
        if clause not in seen:
            try:
                seen[clause] = is_gtd_clause(memex, clause, when, nodes=nodes)
            except Exception:  # a hint never breaks routing: the classifier decides
                import logging

                logging.getLogger("opencortex").exception("gtd routing hint failed")
                seen[clause] = False
        return seen[clause]

    return test
