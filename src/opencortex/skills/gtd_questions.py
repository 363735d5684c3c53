"""Questions over the GTD lists, answered read-only from the index.

First the sentence form: a question (interrogative word, auxiliary-first, "show/list…",
question mark) never writes.  Then its slots: a state (waiting, done, cancelled, open), a
priority, the memex's own tags named in it (errands, work, home, someday…), a scope (a
project or heading: "in the flaky test project"), a kind (when is X due, the next step on
X).  The answer names every item with its file:line."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from .. import regex_cache
from ..router.rules import CAPTURE_LABEL
from .gtd_refs import Resolution, all_nodes, cite, resolve_ref, score_nodes
from .gtd_slots import STOP, place_tag, stem, words

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["answer", "is_question"]

MAX_ROWS = 25

_WH = regex_cache.compile(r"^(?:what|what's|whats|which|when|where|who|how|why|whose|wat)\b", re.I)
_AUX = regex_cache.compile(r"^(?:did\s+(?:i|you|we|they|he|she|it|the|anything|any|someone|anyone)\b|"
                  r"do|does|is|are|was|were|(?:have|has|had)(?!\s+(?:to|got\s+to)\b)|am|any|"
                  r"anything|got\s+any|"
                  r"have\s+i\s+got|is\s+there|are\s+there|can\s+i|should\s+i)\b", re.I)
_SHOW = regex_cache.compile(r"^(?:please\s+)?(?:show|list|give\s+me|tell\s+me|display|find|see|"
                   r"let\s+me\s+see|what\s+about|remind\s+me\s+(?:what|which|when|how)|"
                   r"i\s+(?:want|need|'d\s+like)\s+to\s+(?:see|know))\b", re.I)
_POLITE = regex_cache.compile(r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?!tell|show|list|"
                     r"find|remind\s+me\s+(?:what|which|when))", re.I)


def is_question(text: str) -> bool:
    """True when the clause asks rather than tells (its form, not its topic); a labelled
    capture ("capture: …") never is one."""
    t = " ".join(text.replace("’", "'").split()).strip()
    low = t.lower()
    if not t or CAPTURE_LABEL.match(t):
        return False
    if _POLITE.match(low):
        return t.endswith("?") and not re.search(
            r"\b(?:add|put|remind|mark|move|set|tag|schedule|cancel|capture)\b", low)
    if t.endswith("?"):
        return True
    return bool(_WH.match(low) or _SHOW.match(low) or _AUX.match(low))


# -- the question's slots -----------------------------------------------------------------
_WAITING = regex_cache.compile(r"\bwait(?:ing)?\b|\bhear(?:d)?\s+back\b|\bblocked\b|\bdelegated\b|"
                      r"\bchase\b|\bowe[sd]?\s+me\b", re.I)
_CANCEL = regex_cache.compile(r"\bcancel\w*|\bdropped\b|\bscrapped\b|\babandoned\b|\bgave\s+up\b|"
                     r"\bditched\b", re.I)
_DONE = regex_cache.compile(r"\b(?:done|finished|completed?|accomplished|closed|close\s+out|"
                   r"wrapped\s+up|wrap\s+up|got\s+through|ticked\s+off|"
                   r"did\s+i\s+(?:do|finish|complete|get))\b", re.I)
_PRIO = regex_cache.compile(r"\bpriority\s+(?P<a>[abc])\b|\b(?P<b>[abc])[- ]priorit(?:y|ies)\b|\[#(?P<c>[abc])\]|"
                   r"\b(?P<d>high(?:est)?|top|urgent|important|low(?:est)?|medium)[- ]priority\b|"
                   r"\b(?P<e>urgent)\b", re.I)
_PRIO_WORD = {"high": "A", "highest": "A", "top": "A", "urgent": "A", "important": "A",
              "low": "C", "lowest": "C", "medium": "B"}
_NEXT = regex_cache.compile(r"\bnext\s+(?:step|action|thing|task|move)s?\b|"
                   r"\bwhat(?:'s|\s+is|\s+comes|\s+are)\s+(?:up\s+)?next\b|"
                   r"\b(?:do|work\s+on|tackle|start)\s+next\b", re.I)
_PROJECTS = regex_cache.compile(r"\b(?:which|what|list|show|my|active|open|current)\b.*\bprojects\b",
                       re.I)
_WHEN = regex_cache.compile(r"^\s*(?:when|by\s+when|what\s+(?:day|date|time))\b|\bwhat(?:'s|\s+is)\s+"
                   r"the\s+(?:deadline|due\s+date)\b|\bhow\s+long\s+(?:until|till|do\s+i\s+have)\b",
                   re.I)
_SCOPE = regex_cache.compile(r"\b(?:in|on|for|of|under|from|about|within)\s+(?:the\s+|my\s+|our\s+)?"
                    r"(?P<s>[^?.!,]+?)(?:\s+(?:project|list|file|heading|area))?\s*"
                    r"(?:that\b.*|which\b.*|still\b.*|left\b.*)?[?.!]*$", re.I)
_QWORDS = frozenset("""what whats which when where who how why show list give tell display find
see let know any anything got left open remaining outstanding pending sitting there here
things thing stuff items item tasks task todo todos next step steps action actions end up
ended end did get got do i me my mine have has are is was the a an in on for of about
right now currently still yet more all every sitting lying hanging around up
""".split())


def _known_tags(nodes: list[Node]) -> dict[str, str]:
    """stem -> tag, for every tag the memex uses."""
    out: dict[str, str] = {}
    for n in nodes:
        for t in n.tags:
            out.setdefault(stem(t.lstrip("@")), t)
    return out


def _is_open(n: Node) -> bool:
    return bool(n.todo) and n.todo_type != "done"


def _containers(nodes: list[Node]) -> list[Node]:
    """Nodes that hold others (projects, headings with children)."""
    parents = {(n.file, tuple(n.outline[:k])) for n in nodes for k in range(1, len(n.outline) + 1)}
    return [n for n in nodes if (n.file, (*n.outline, n.title)) in parents
            or "project" in n.tags]


def _under(nodes: list[Node], scope: Node) -> list[Node]:
    path = [*scope.outline, scope.title]
    return [n for n in nodes if n.file == scope.file and n.outline[:len(path)] == path]


def _scope_of(text: str, nodes: list[Node]) -> tuple[Node | None, set[str]]:
    """The project or heading a question is about, and the words that named it (never the
    words that name a state or a kind of entry: "in the WAITING state" is no heading)."""
    from .gtd_slots import DATE_RE

    m = _SCOPE.search(_REPEAT_Q.sub(" ", DATE_RE.sub(" ", text)))
    if not m:
        return None, set()
    phrase = m.group("s")
    kinds = {stem(x) for x in _QWORDS | _KIND_WORDS} | {stem(k) for k in _keywords(nodes)}
    ws = [w for w in words(phrase) if w not in kinds]
    if not ws:
        return None, set()
    wants_project = bool(re.search(r"project", text, re.I))
    with_tasks = {(n.file, tuple(n.outline[:k])) for n in nodes if n.todo
                  for k in range(1, len(n.outline) + 1)}
    q = set(ws)
    best: tuple[tuple, Node] | None = None
    for n in _containers(nodes):
        # a container's file name counts as its title words (projects/blog-migration.org)
        base = re.sub(r"[-_/]", " ", n.file.rsplit("/", 1)[-1].removesuffix(".org"))
        hay = set(words(n.title)) | (set(words(base)) if n.level == 1 else set())
        cover = len(q & hay) / len(q)
        holds = (n.file, (*n.outline, n.title)) in with_tasks
        key = (cover, wants_project and "project" in n.tags, holds, -n.level, -len(hay))
        if cover >= 0.5 and holds and (best is None or key > best[0]):
            best = (key, n)
    return (best[1], q) if best else (None, set())


_KIND_WORDS = frozenset("""state states status keyword keywords marked mark labelled labeled
flagged set entries entry repeat repeats repeating recurring recur recurrence""".split())
"""Words that name what kind of entry a question lists, never where it is."""
_REPEAT_Q = regex_cache.compile(
    r"\b(?:repeat\w*|recurr?\w*|routines?|habits?|regular(?:ly)?|periodic\w*|"
    r"(?:come|comes|coming|came|keeps?\s+coming)\s+(?:back|a?round)(?:\s+again)?|"
    r"(?:again\s+and\s+again|over\s+and\s+over)|"
    r"(?:every|each)\s+(?P<u>day|week|month|year|morning|evening|night|weekday|fortnight)|"
    r"(?P<ly>daily|weekly|monthly|yearly|annual(?:ly)?|fortnightly|nightly))\b", re.I)
"""A question about repeating entries ("what are my recurring tasks", "what repeats every
week", "which chores are weekly", "what keeps coming back")."""
_REPEAT_UNIT = {"day": "d", "morning": "d", "evening": "d", "night": "d", "weekday": "d",
                "daily": "d", "nightly": "d", "week": "w", "weekly": "w", "fortnight": "2w",
                "fortnightly": "2w", "month": "m", "monthly": "m", "year": "y", "yearly": "y",
                "annual": "y", "annually": "y"}


def _repeater_of(n: Node) -> str | None:
    """The repeater cookie of an entry's SCHEDULED or DEADLINE (``+1w``, ``.+1d``…)."""
    from ..org.timestamps import parse_timestamp

    for raw in (n.scheduled, n.deadline):
        ts = parse_timestamp(raw) if raw else None
        if ts is not None and ts.repeater:
            return ts.repeater
    return None


def _repeats(text: str, nodes: list[Node]) -> tuple[list[Node], str] | None:
    """The entries a repeat question asks for, every one that repeats (at the interval it
    names, if any) and the words for the answer's head; None when it asks no such thing."""
    found = list(_REPEAT_Q.finditer(text))
    if not found:
        return None
    said = next((m.group("u") or m.group("ly") for m in found
                 if m.group("u") or m.group("ly")), "").lower()
    unit = _REPEAT_UNIT.get(said)
    out = []
    for n in nodes:
        rep = _repeater_of(n)
        if rep is None:
            continue
        got = re.fullmatch(r"[.+]*\+?(\d+)([hdwmy])", rep.split("/")[0])
        if unit and got and f"{'' if got.group(1) == '1' else got.group(1)}{got.group(2)}" != unit:
            if not (unit == "d" and got.group(2) == "h"):
                continue
        out.append(n)
    if said in ("day", "week", "month", "year", "morning", "evening", "night", "weekday",
                "fortnight"):
        said = f"every {said}"
    return out, f"repeating {said}".strip()


def _keywords(nodes: list[Node]) -> set[str]:
    """The TODO keywords the memex's entries use."""
    return {n.todo for n in nodes if n.todo}


_STATE_SAID = regex_cache.compile(
    r"\b(?:marked|flagged|labell?ed|set|tagged)\s+(?:as\s+|to\s+)?(?P<a>[a-z]+)\b"
    r"|\b(?:in|as|with)\s+(?:the\s+|a\s+)?(?P<b>[a-z]+)\s+(?:state|status|keyword|column)\b"
    r"|\b(?:state|status|keyword)\s+(?:is\s+|of\s+)?(?P<c>[a-z]+)\b", re.I)


def _named_states(text: str, nodes: list[Node]) -> list[str]:
    """The TODO keywords a question names: written as Org writes them ("NEXT", "DRAFT"), or
    said as a state ("marked next", "in the review state")."""
    kws = _keywords(nodes)
    out = [w for w in re.findall(r"\b[A-Z][A-Z-]+\b", text) if w in kws]
    for m in _STATE_SAID.finditer(text):
        w = (m.group("a") or m.group("b") or m.group("c")).upper()
        if w in kws:
            out.append(w)
    return list(dict.fromkeys(out))


def _dates(n: Node) -> str:
    parts = [f"{k} {v}" for k, v in (("scheduled", n.scheduled), ("deadline", n.deadline),
                                     ("closed", n.closed)) if v]
    return f" — {', '.join(parts)}" if parts else ""


def _row(n: Node) -> str:
    head = " ".join(x for x in (n.todo, f"[#{n.priority}]" if n.priority else None, n.title) if x)
    tags = f" :{':'.join(n.local_tags)}:" if n.local_tags else ""
    return f"- {head}{tags}{_dates(n)} ({cite(n)})"


def _rows(title: str, items: list[Node], empty: str) -> str:
    if not items:
        return empty
    lines = [f"{title} ({len(items)}):", *(_row(n) for n in items[:MAX_ROWS])]
    if len(items) > MAX_ROWS:
        lines.append(f"- … and {len(items) - MAX_ROWS} more")
    return "\n".join(lines)


def _candidates(r: Resolution) -> str:
    return "\n".join(_row(n) for n in r.candidates[:6])


def _status(memex: Memex, text: str, nodes: list[Node]) -> str:
    """Where one item stands ("did I finish X?", "is X done?")."""
    ref = re.sub(r"^\s*(?:did|have|has|is|are|was|were)\s+(?:i|we|you|they|he|she)?\s*"
                 r"(?:already|ever|actually)?\s*|\b(?:finish(?:ed)?|complete[d]?|done|closed?|"
                 r"cancell?ed|sorted|paid|sent|bought|yet|already|status\s+of|where\s+am\s+i\s+"
                 r"with)\b|\?", " ", text,
                 flags=re.I)
    r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo] or nodes)
    if r.node is None and not r.candidates:
        return _no_task(ref, r.searched)
    items = [r.node] if r.node else r.candidates
    out = []
    for n in items:
        if n.todo_type == "done":
            what = f"{n.todo}" + (f", closed {n.closed}" if n.closed else "")
        else:
            what = f"still {n.todo or 'open'}" + _dates(n)
        out.append(f"{n.title}: {what} ({cite(n)})")
    return ("" if r.node else "Several tasks match; which one:\n") + "\n".join(out)


def _progress(text: str, nodes: list[Node]) -> str | None:
    """A project's (or heading's) progress: its done and its open tasks.  None when the
    question names no container of tasks (then it is one task's status)."""
    scope, _ = _scope_of(text, nodes)
    if scope is None:
        skip = {stem(x) for x in _QWORDS | _PROGRESS_WORDS}
        rest = " ".join(w for w in words(text) if w not in skip)
        boxes = [n for n in _containers(nodes) if any(x.todo for x in _under(nodes, n))]
        hits = score_nodes(boxes, rest) if rest else []
        if hits and hits[0].q_cover >= 0.5:
            scope = hits[0].node
    if scope is None:
        return None
    inside = [n for n in _under(nodes, scope) if n.todo and n.key != scope.key]
    done = sorted((n for n in inside if n.todo_type == "done"
                   and not (n.todo or "").upper().startswith("CANCEL")),
                  key=lambda n: n.closed or "", reverse=True)
    open_ = [n for n in inside if _is_open(n)]
    head = f"{scope.title} ({cite(scope)}): {len(done)} done, {len(open_)} open."
    return "\n".join(x for x in (head, _rows("Done", done, ""), _rows("Still open", open_, ""))
                     if x)


_HOW_LONG = regex_cache.compile(
    r"^\s*(?:and\s+|so\s+)?(?:how\s+(?:long|much\s+(?:time|work|effort))|what(?:'s|\s+is)\s+"
    r"(?:the\s+)?(?:effort|estimate|time\s+estimate)|(?:is|are)\s+there\s+(?:an?\s+)?"
    r"(?:effort|estimate))\b", re.I)
"""A question about how long a task takes ("how long will X take?", "how much time does X
need", "what's the estimate on X"): its Effort, read, never written."""


def _effort_of(n: Node) -> str | None:
    return next((v for k, v in n.properties.items() if k.lower() == "effort" and v.strip()),
                None)


def _how_long(memex: Memex, text: str, nodes: list[Node]) -> str:
    """Each named task's Effort (or that it has none, with its dates and clocked total)."""
    ref = re.sub(r"^\s*(?:and\s+|so\s+)?(?:how\s+(?:long|much\s+(?:time|work|effort))|what(?:'s|"
                 r"\s+is)\s+(?:the\s+)?(?:effort|estimate|time\s+estimate)|(?:is|are)\s+there\s+"
                 r"(?:an?\s+)?(?:effort|estimate))\s*(?:on|for|of)?\s*"
                 r"|\b(?:will|would|should|does|do|did|is|it|going\s+to|gonna|supposed\s+to|"
                 r"meant\s+to|probably|me|us|take|takes|need|needs|last|lasts|be|set|estimated?)\b"
                 r"|\?", " ", text, flags=re.I)
    r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo] or nodes)
    if r.node is None and not r.candidates:
        return _no_task(ref, r.searched)
    out = []
    for n in [r.node] if r.node else r.candidates:
        eff = _effort_of(n)
        out.append(f"{n.title}: effort {eff}" if eff else f"{n.title}: no effort estimate set"
                   + _dates(n))
        out[-1] += f" ({cite(n)})"
    return ("" if r.node else "Several tasks match; which one:\n") + "\n".join(out)


def _no_task(ref: str, searched: list[str]) -> str:
    """The answer when a question names no task: what was looked for, so the person can
    say it another way."""
    return f"I found no task matching {ref.strip()!r} (searched titles for: " \
           f"{' '.join(searched)})."


_ADVICE = regex_cache.compile(r"^\s*(?:so\s+|and\s+)?(?:should|shall|must|can)\s+(?:i|we)\s+"
                     r"(?:still\s+|just\s+|really\s+)?(?P<verb>[a-z]+)\s+(?P<ref>.+?)\s*\??\s*$",
                     re.I)
"""Advice asked about one named task ("should I cancel the X task?", "can we drop X?"): the
task as it stands, for the person to decide — a question never changes it."""


def _advice(memex: Memex, text: str, nodes: list[Node]) -> str | None:
    """The task an advice question names, with its state and dates; None when it names
    none clearly (the question is then read as a list question)."""
    m = _ADVICE.match(text)
    if m is None:
        return None
    r = resolve_ref(memex, m.group("ref"), nodes=[n for n in nodes if n.todo])
    if r.node is None or not (r.strong or r.exact):
        return None
    n = r.node
    return (f"{_row(n)[2:]}\nThat is where it stands; say what to do with it (nothing was "
            "changed).")


def _when(memex: Memex, text: str, nodes: list[Node]) -> str:
    ref = re.sub(r"^\s*(?:when|by\s+when)\s+(?:is|are|was|do|does|did|should|must|will|have|"
                 r"has)?\s*(?:i|we)?\s*(?:have\s+to|need\s+to|got\s+to|supposed\s+to|meant\s+to)?"
                 r"(?:\s*(?:finish|complete|close|do|start|get)\b)?"
                 r"|\b(?:due|deadline|scheduled|happening|planned)\b|\?", " ", text, flags=re.I)
    r = resolve_ref(memex, ref, nodes=[n for n in nodes if n.todo] or nodes)
    if r.node is None and not r.candidates:
        return _no_task(ref, r.searched)
    items = [r.node] if r.node else r.candidates
    out = []
    for n in items:
        d = []
        if n.deadline:
            d.append(f"due {n.deadline}")
        if n.scheduled:
            d.append(f"scheduled {n.scheduled}")
        if n.closed:
            d.append(f"closed {n.closed}")
        what = ", ".join(d) or "has no date"
        out.append(f"{n.title}: {what} ({cite(n)})")
    head = "" if r.node else "Several tasks match; which one:\n"
    return head + "\n".join(out)


_OVERDUE = regex_cache.compile(r"\b(?:overdue|slip(?:ped)?\s+past|missed|late|behind\s+on|past\s+due)\b",
                      re.I)
_STATUS = regex_cache.compile(r"^(?:did|have|has)\s+(?:i|we|you|they|he|she)\s+(?:already\s+|ever\s+|"
                     r"actually\s+)?(?:finish|finished|complete|completed|do|done|close|closed|"
                     r"sen[dt]|pa(?:y|id)|get|got|sort|sorted)\b"
                     r"|^(?:is|are|was|were)\s+(?!(?:there|anything|something|any|everything|all)\b)"
                     r".+?\s+(?:done|finished|complete|completed|closed|"
                     r"cancell?ed|sorted|paid|sent|bought|\w{3,}ed)\s*(?:yet|already|now)?\s*\??$|\bstatus\s+of\b|^where\s+(?:am\s+i|are\s+we)\s+with\b",
                     re.I)
_PROGRESS = regex_cache.compile(
    r"\bhow\s+far\s+(?:along|in)\b|\bhow(?:'s|\s+is|\s+are)\s+.+?\s+(?:going|coming\s+along|"
    r"progressing|getting\s+on)\b|\bprogress\b|\bstatus\s+of\b|\bwhere\s+(?:am\s+i|are\s+we|"
    r"do\s+i\s+stand|do\s+we\s+stand)\s+(?:with|on)\b|\bhow\s+much\s+(?:is\s+)?(?:left|remaining)\b",
    re.I)
"""Where a project stands: what is done there and what is still open."""
_PROGRESS_WORDS = frozenset("""far along progress progressing going coming getting status stand
where much left remaining on with""".split())
_WEEK = regex_cache.compile(r"\b(this|next|the\s+coming)\s+week\b", re.I)


def _month_span(name: str, today: dt.date, past: bool) -> tuple[dt.date, dt.date, str]:
    """A month named alone ("in november"): all of its days — the latest one not after
    today for a question about what was done (``past``), else the next one not before."""
    import calendar

    from .gtd_dates import _month_index

    mo = _month_index(name)
    year = today.year
    if past and mo > today.month:
        year -= 1
    elif not past and mo < today.month:
        year += 1
    last = calendar.monthrange(year, mo)[1]
    return dt.date(year, mo, 1), dt.date(year, mo, last), f"in {dt.date(year, mo, 1):%B %Y}"


def _date_span(text: str, now: dt.datetime, week_start: int = 0,
               past: bool = False) -> tuple[dt.date, dt.date, str] | None:
    """The days a question is about ("this week", "tomorrow", "on friday", "in march"), if
    any; a week begins on ``week_start`` (0 Monday … 6 Sunday); ``past``: the question asks
    what was done, so a month named alone is the last one of that name."""
    from .gtd_dates import DATE_RE, resolve_day, week_start_day

    today = now.date()
    if re.search(r"\b(?:last|previous)\s+week\b", text, re.I):  # the calendar week before
        start = week_start_day(today, week_start, -1)
        return start, start + dt.timedelta(days=6), f"last week ({start:%d %b}–" \
            f"{start + dt.timedelta(days=6):%d %b})"
    if re.search(r"\b(?:last|past)\s+(?:7|seven)\s+days\b|\bpast\s+week\b", text, re.I):
        return today - dt.timedelta(days=7), today, "in the last 7 days"
    if m := re.search(r"\b(?:next|coming|following)\s+(?:(?P<n>\d+|two|three|four|five|six|seven|"
                      r"ten|fourteen|thirty)\s+(?P<u>days?|weeks?)|(?P<f>fortnight|month))\b", text,
                      re.I):
        words_n = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10,
                   "fourteen": 14, "thirty": 30}
        if m.group("f"):
            days = 14 if m.group("f").lower() == "fortnight" else 30
        else:
            n = int(m.group("n")) if m.group("n").isdigit() else words_n[m.group("n").lower()]
            days = n * (7 if m.group("u").lower().startswith("week") else 1)
        return today, today + dt.timedelta(days=days), f"in the next {days} days"
    if m := _WEEK.search(text):
        if m.group(1).lower() == "this":
            end = week_start_day(today, week_start, 1) - dt.timedelta(days=1)
            return today, end, "this week"
        start = week_start_day(today, week_start, 1)
        return start, start + dt.timedelta(days=6), "next week"
    for m in DATE_RE.finditer(text):
        if m.group("month") and re.fullmatch(r"[a-z]+", m.group("month").strip(), re.I):
            return _month_span(m.group("month").strip(), today, past)
        phrase = m.group("day") or m.group("month") or m.group("holiday")
        d = resolve_day(phrase, now, week_start)
        if d is not None:
            return d, d, f"{d:%a %d %b}"
    return None


def _agenda_answer(memex: Memex, today: dt.date, lo: dt.date, hi: dt.date,
                   label: str) -> str:
    """The agenda (``memory.agenda``, as ``opencortex agenda`` computes it) for the days
    ``lo``..``hi``: appointments, ranges, scheduled items and deadlines, with Org's
    prefixes ("In 4 d.:", "Sched. 3x:") and where each is written."""
    start = max(lo, today) if hi >= today else lo
    ag = memex.day_agenda(today=today, start=start, days=min((hi - start).days + 1, 62))
    lines: list[str] = []
    for day in ag.days:
        if not day.items:
            continue
        if len(ag.days) > 1:
            lines.append(f"{day.date:%a %d %b}:")
        for it in day.items[:MAX_ROWS]:
            when = f"{it.time}-{it.end} " if it.end else f"{it.time} " if it.time else ""
            lines.append(f"- {when}{it.leader}{it.heading} ({it.file}:{it.line})")
        if len(day.items) > MAX_ROWS:
            lines.append(f"- … and {len(day.items) - MAX_ROWS} more")
    if not lines:
        return f"Nothing on the agenda {label}."
    return f"On the agenda {label}:\n" + "\n".join(lines)


def _first_action(nodes: list[Node], scope: Node) -> Node | None:
    """A container's next action: its first NEXT task, else its first open one not waiting."""
    opens = [n for n in _under(nodes, scope) if _is_open(n) and n.key != scope.key]
    ranked = sorted(opens, key=lambda n: (n.todo != "NEXT", n.todo == "WAITING", n.line))
    return ranked[0] if ranked else None


def _projects_next(projects: list[Node], nodes: list[Node]) -> str:
    """Each active project with its next action ("my projects and what's next on each")."""
    if not projects:
        return "No active projects."
    lines = [f"Active projects and their next actions ({len(projects)}):"]
    for p in projects:
        lines.append(_row(p))
        first = _first_action(nodes, p)
        lines.append(f"  next: {' '.join(x for x in (first.todo, first.title) if x)} "
                     f"({cite(first)})" if first else "  next: none — decide one")
    return "\n".join(lines)


def answer(memex: Memex, text: str, now: dt.datetime) -> str:
    """The answer to a question about the lists, naming each item (title, file:line)."""
    from .gtd_dates import week_start_day
    from .gtd_plan import week_start_of

    nodes = all_nodes(memex)
    week_start = week_start_of(memex.settings)
    if _PROGRESS.search(text) and (out := _progress(text, nodes)):
        return out
    if _HOW_LONG.search(text):
        return _how_long(memex, text, nodes)
    if (advice := _advice(memex, text, nodes)) is not None:
        return advice
    if _WHEN.search(text):
        return _when(memex, text, nodes)
    if _STATUS.search(text):
        return _status(memex, text, nodes)
    tags = _known_tags(nodes)
    qstems = words(text)
    scope, scope_words = _scope_of(text, nodes)
    named_tags = []
    verbs = {stem(v) for v in re.findall(r"\b(\w+)\s+on\b", text.lower())}  # "work on"
    for w in qstems:
        if w in tags and tags[w] not in named_tags and w != "project" and w not in scope_words \
                and w not in verbs:
            named_tags.append(tags[w])
    for w in re.findall(r"[a-z]+", text.lower()):  # "around the house" -> :home:
        if (t := place_tag(w, tags)) and t not in named_tags:
            named_tags.append(t)
    if scope is None and not named_tags and _PROJECTS.search(text):
        projects = memex.active_projects()
        if _NEXT.search(text):
            return _projects_next(projects, nodes)
        return _rows("Active projects", projects, "No active projects.")
    pool = _under(nodes, scope) if scope is not None else nodes
    pool = [n for n in pool if n.todo] or ([n for n in pool] if scope is not None else [])
    desc: list[str] = []
    if scope is None and re.search(r"\b(?:in|on|for|of)\s+(?:the\s+|my\s+)?\S.*\bproject\b", text,
                                   re.I):
        projects = memex.active_projects()
        return ("I found no project matching that; active projects:\n"
                + "\n".join(_row(p) for p in projects))
    if (rep := _repeats(text, pool)) is not None:  # every repeating entry, none left out
        hits, what = rep
        if states := _named_states(text, nodes):
            hits = [n for n in hits if n.todo in states]
        elif not re.search(r"\b(?:done|finished|closed|cancell?ed)\b", text, re.I):
            hits = [n for n in hits if _is_open(n)]
        if named_tags:
            hits = [n for n in hits if any(t in n.tags for t in named_tags)]
        head = f"Entries {what}" + (f" in {scope.title}" if scope else "")
        return _rows(head, hits, f"Nothing {what}" + (f" in {scope.title}." if scope else "."))
    if _NEXT.search(text) and not _named_states(text, nodes):
        if scope is None:
            ranked = [n for n in nodes if n.todo == "NEXT"]
            return _rows("Next actions", ranked, "No NEXT actions.")
        opens = [n for n in pool if _is_open(n)]
        ranked = sorted(opens, key=lambda n: (n.todo != "NEXT", n.todo == "WAITING", n.line))
        if not ranked:
            return f"{scope.title} ({cite(scope)}) has no open tasks — decide its next action."
        first = ranked[0]
        return (f"Next step for {scope.title}: {first.title} ({cite(first)})\n"
                + _rows("Open tasks there", ranked, ""))
    states = _named_states(text, nodes)
    if states:  # "everything marked NEXT", "what's in the WAITING state": every such entry
        pool = [n for n in pool if n.todo in states]
        done_kw = {n.todo for n in nodes if n.todo and n.todo_type == "done"}
        desc.append("done" if set(states) <= done_kw and "DONE" in states else
                    "cancelled" if set(states) <= done_kw else ", ".join(states))
    elif _CANCEL.search(text):
        pool = [n for n in pool if n.todo and n.todo.upper().startswith("CANCEL")]
        desc.append("cancelled")
    elif _WAITING.search(text):
        pool = [n for n in pool if n.todo == "WAITING"]
        desc.append("waiting")
    elif _DONE.search(text) and not re.search(r"\b(?:not|still|left|remaining|open)\b", text,
                                              re.I):
        pool = [n for n in pool if n.todo_type == "done"
                and not (n.todo or "").upper().startswith("CANCEL")]
        desc.append("done")
    else:
        pool = [n for n in pool if _is_open(n)]
        desc.append("open")
    if _OVERDUE.search(text) and desc[0] == "open":
        today = now.date()

        def late(n: Node) -> bool:
            from ..org.timestamps import parse_timestamp

            for raw in (n.deadline, n.scheduled):
                ts = parse_timestamp(raw) if raw else None
                if ts is not None and ts.start.date() < today:
                    return True
            return False

        pool = [n for n in pool if late(n)]
        desc.append("overdue")
    elif span := _date_span(text, now, week_start, past=desc[0] in ("done", "cancelled")):
        lo, hi, label = span
        closed = desc[0] in ("done", "cancelled")
        if closed and label == "this week":  # what got done so far this week
            lo, hi = week_start_day(now.date(), week_start), now.date()
        due_only = bool(re.search(r"\b(?:due|deadlines?)\b", text, re.I)) and not closed
        sched_only = bool(re.search(r"\bscheduled\b", text, re.I)) and not due_only \
            and not closed
        if not (closed or due_only or sched_only or named_tags or scope is not None
                or _PRIO.search(text)):
            # "what's on wednesday?": the days as Org's agenda shows them
            return _agenda_answer(memex, now.date(), lo, hi, label)

        def hit(n: Node) -> bool:
            from ..org.timestamps import parse_timestamp

            raws = [n.closed] if closed else \
                ([] if sched_only else [n.deadline]) + ([] if due_only else [n.scheduled])
            for raw in raws:
                ts = parse_timestamp(raw) if raw else None
                if ts is not None and lo <= ts.start.date() <= hi:
                    return True
            return False

        pool = [n for n in pool if hit(n)]
        desc.append(("closed " if closed else "due " if due_only else "scheduled "
                     if sched_only else "dated ") + label)
    if m := _PRIO.search(text):
        lvl = (m.group("a") or m.group("b") or m.group("c") or "").upper() or \
            _PRIO_WORD[(m.group("d") or m.group("e")).lower()]
        pool = [n for n in pool if n.priority == lvl]
        desc.append(f"priority {lvl}")
    if named_tags:
        says_tag = bool(re.search(r"\btag", text, re.I))
        tagged = [n for n in pool if any(t in n.tags for t in named_tags)]
        if not tagged and not says_tag:  # "waiting on from Lena": a name in the titles
            tagged = [n for n in pool if any(stem(t.lstrip("@")) in words(n.title)
                                             for t in named_tags)]
        pool = tagged
        desc.append("tagged " + ", ".join(named_tags))
    if scope is not None:
        pool = [n for n in pool if n.key != scope.key]
        desc.append(f"in {scope.title}")
    if len(desc) == 1 and scope is None and not named_tags and not states:
        # no list named: the question's own words against the titles
        rest = [w for w in qstems if w not in {stem(x) for x in _QWORDS} and w not in STOP]
        if rest:
            hits = [s.node for s in score_nodes(pool or nodes, " ".join(rest)) if s.q_cover >= 0.3]
            if hits:
                return _rows(f"Matching {desc[0]} items", hits, "")
    label = " ".join(desc)
    label = label[:1].upper() + label[1:]
    if desc[0] == "done":
        pool.sort(key=lambda n: n.closed or "", reverse=True)
    return _rows(label, pool, f"Nothing {' '.join(desc)}.")
