"""GTD delegate skill: the agenda (today / this week / overdue), next actions per project,
inbox capture, TODO state changes, natural-language scheduling and deadlines, the
waiting-for list and a weekly-review checklist.

Reads answer directly (a ``reply`` proposal with ``file:line id:...`` citations).  Writes
are proposed as ``{"action": "memex", "op": ..., ...}``; the verifier re-resolves the task
and turns them into a guarded ``memex.write`` Action, which the ``memex.write`` actuator
hands to :func:`apply_memex_op` (every change goes through the Memex write-back API).

``apply_memex_op`` ops (``args`` of the ``memex.write`` action; ``path`` is for the guard):

- ``todo``      ``ref``, ``state`` (a TODO keyword, or ``none``)        -> Memex.set_todo
- ``schedule``  ``ref``, ``when`` (ISO date/datetime, or ``none``), ``repeater``
- ``deadline``  same as ``schedule``                                    -> Memex.deadline

(``capture`` stays the existing ``memex.write`` op; this skill proposes it unchanged.)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import Action, Context, Proposal, Rejection, Skill

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["OPS", "TARGET", "apply_memex_op", "clock", "find_task", "parse_request",
           "parse_when", "skill"]

TARGET = "gtd"
OPS = ("agenda", "next", "capture", "todo", "schedule", "deadline", "waiting", "review")
WRITE_OPS = ("todo", "schedule", "deadline")
ARG_KEYS = ("op", "task", "when", "project", "state", "text", "repeater", "ref")
MAX_LIST = 15

def _wall_clock() -> dt.datetime:
    return dt.datetime.now().replace(second=0, microsecond=0)


clock: Callable[[], dt.datetime] = _wall_clock
"""Where "now" comes from when neither ``ctx.extra["now"]`` nor the signal sets it."""

_STOP = frozenset("""a an and as at be by for from in into is it of on or the to with my me
task todo item please that this""".split())
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|" \
            "thu|thur|thurs|fri|sat|sun"
_STATES = {"done": "DONE", "todo": "TODO", "next": "NEXT", "waiting": "WAITING",
           "cancelled": "CANCELLED", "canceled": "CANCELLED", "open": "TODO"}

# -- direct phrasing -----------------------------------------------------------------
def _asks_of_one_task(t: str) -> bool:
    """"how long does the weekly review take?", "when is my weekly review?": a question
    about the entry of that name, not a request to run the review."""
    from .gtd_questions import _HOW_LONG, _WHEN

    return bool(_HOW_LONG.search(t) or _WHEN.search(t))


_R_REVIEW = re.compile(r"\b(weekly[- ]review|review (my|the) week|do (a|the|my) review)\b", re.I)
_R_WAITING = re.compile(r"\b(waiting[- ]for list|what am i waiting (for|on)|waiting list|"
                        r"waiting items|show waiting)\b", re.I)
_R_NEXT = re.compile(r"^\s*(?:show |list |what are )?(?:the |my )?next actions?"
                     r"(?:\s+(?:for|in|on)\s+(?:the\s+)?(?:project\s+)?(?P<project>.+?))?\s*\??$",
                     re.I)
_R_AGENDA = re.compile(r"\b(agenda|what'?s overdue|what is overdue|due (today|this week)|"
                       r"this week'?s tasks)\b", re.I)
_R_MARK = re.compile(r"^\s*(?:mark|set)\s+(?P<task>.+?)\s+(?:as\s+|to\s+)?"
                     r"(?P<state>done|todo|next|waiting|cancell?ed|open)\s*[.!]?\s*$", re.I)
_R_DONE = re.compile(r"^\s*(?:done|finished|completed?|i finished|i did)\s*[:,-]?\s+"
                     r"(?P<task>.+?)\s*[.!]?\s*$", re.I)
_R_SCHEDULE = re.compile(r"^\s*(?:re)?schedule\s+(?P<task>.+?)\s+(?:for|on|to)\s+"
                         r"(?P<when>.+?)\s*[.!]?\s*$", re.I)
_R_DEADLINE = re.compile(r"^\s*(?:set\s+)?(?:a\s+|the\s+)?deadline\s+(?:for|of|on)\s+"
                         r"(?P<task>.+?)\s+(?:to|for|on|at|by)\s+(?P<when>.+?)\s*[.!]?\s*$"
                         r"|^\s*(?P<task2>.+?)\s+is\s+due\s+(?:on\s+|by\s+)?(?P<when2>.+?)"
                         r"\s*[.!]?\s*$", re.I)
_R_CAPTURE = re.compile(r"^\s*(?:inbox|add to (?:my |the )?inbox)\s*[:,-]\s*(?P<text>.+)$"
                        r"|^\s*add\s+(?P<text2>.+?)\s+to\s+(?:my\s+|the\s+)?inbox\s*$",
                        re.I | re.S)


def parse_request(text: str) -> dict[str, Any] | None:
    """GTD args (``op`` + fields) from a plain request, or None if it is not one."""
    t = text.strip()
    if not t:
        return None
    if m := _R_CAPTURE.match(t):
        return {"op": "capture", "text": (m.group("text") or m.group("text2")).strip()}
    if m := _R_SCHEDULE.match(t):
        return {"op": "schedule", "task": m.group("task"), "when": m.group("when")}
    if m := _R_DEADLINE.match(t):
        return {"op": "deadline", "task": m.group("task") or m.group("task2"),
                "when": m.group("when") or m.group("when2")}
    if m := _R_MARK.match(t):
        return {"op": "todo", "task": m.group("task"),
                "state": _STATES[m.group("state").lower()]}
    if m := _R_DONE.match(t):
        return {"op": "todo", "task": m.group("task"), "state": "DONE"}
    if _R_REVIEW.search(t) and not _asks_of_one_task(t):
        return {"op": "review"}
    if _R_WAITING.search(t):
        return {"op": "waiting"}
    if m := _R_NEXT.match(t):
        return {"op": "next", "project": (m.group("project") or "").strip() or None}
    if _R_AGENDA.search(t):
        when = "today" if re.search(r"\btoday\b", t, re.I) else \
            "week" if re.search(r"\bweek\b", t, re.I) else None
        return {"op": "agenda", "when": when}
    return None


def _delegated(ctx: Context) -> bool:
    p = ctx.signal.payload
    return p.get("sensor") == "delegation" and p.get("target") == TARGET


def _args(ctx: Context) -> dict[str, Any] | None:
    """Router args (delegation: ``payload.args`` and/or top-level keys) or parsed text."""
    p = ctx.signal.payload
    if _delegated(ctx):
        args = {k: p[k] for k in ARG_KEYS if p.get(k) is not None}
        nested = p.get("args")
        if isinstance(nested, dict):
            args.update({k: v for k, v in nested.items() if v is not None})
        if "op" not in args:
            args.update(parse_request(ctx.text) or {"op": "agenda"})
        return args
    if ctx.signal.type != "request":
        return None
    return parse_request(ctx.text)


def _trigger(ctx: Context) -> bool:
    return _delegated(ctx) or _args(ctx) is not None


# -- time ----------------------------------------------------------------------------
def now_of(ctx: Context | None = None) -> dt.datetime:
    """The "now" dates are relative to: ctx.extra / the signal's ``now``, else the clock."""
    for src in ((ctx.extra.get("now"), ctx.signal.payload.get("now")) if ctx else ()):
        if isinstance(src, dt.datetime):
            return src
        if isinstance(src, str) and src.strip():
            try:
                return dt.datetime.fromisoformat(src.strip())
            except ValueError:
                pass
    return clock()


_TIME = re.compile(
    r"(?:\s*,?\s*\bat\s+|\s+|^)(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)"
    r"|(?:\s*,?\s*\bat\s+|\s+|^)(?P<h2>\d{1,2}):(?P<m2>\d{2})\b"
    r"|\s*,?\s*\bat\s+(?P<h3>\d{1,2})\b(?!\s*(?:days?|weeks?|months?))"
    r"|\s*,?\s*\b(?:at\s+)?(?P<word>noon|midday|midnight)\b", re.I)


def parse_when(text: str, now: dt.datetime) -> dt.date | dt.datetime | None:
    """A natural date ("next Tuesday at 9", "in 3 days", "tomorrow", "Friday", "2026-12-24")
    relative to ``now``: a date, or a datetime when a time of day was given."""
    s = " ".join(str(text).split()).strip(" .!?")
    if not s:
        return None
    try:  # ISO first: what a model or a previous step hands over
        v = dt.datetime.fromisoformat(s)
        return v if ("T" in s or " " in s) else v.date()
    except ValueError:
        pass
    hour: int | None = None
    minute = 0
    m = _TIME.search(s)
    if m:
        if m.group("word"):
            hour = 0 if m.group("word").lower() == "midnight" else 12
        else:
            hour = int(m.group("h") or m.group("h2") or m.group("h3"))
            minute = int(m.group("m") or m.group("m2") or 0)
            ap = (m.group("ap") or "").lower().replace(".", "")
            if ap == "pm" and hour < 12:
                hour += 12
            elif ap == "am" and hour == 12:
                hour = 0
        if hour > 23 or minute > 59:
            return None
        s = (s[:m.start()] + " " + s[m.end():]).strip(" ,")
    timed_rel = re.search(r"\b(hours?|minutes?|mins?)\b", s, re.I)
    day = _parse_day(s, now) if s else now.date()
    if day is None:
        return None
    if hour is not None:
        return dt.datetime.combine(day, dt.time(hour, minute))
    if isinstance(day, dt.datetime):
        return day if timed_rel else day.date()
    return day


def _parse_day(s: str, now: dt.datetime) -> dt.date | dt.datetime | None:
    import dateparser

    s = re.sub(r"^(on|by|for)\s+", "", s.strip(), flags=re.I)
    low = s.lower()
    if low in ("today", "tonight"):
        return now.date()
    wd = re.fullmatch(rf"(?:this\s+|next\s+|coming\s+)?({_WEEKDAYS})", low)
    if wd:  # "Friday" / "next Tuesday": the next such day after today
        names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        target = names.index(wd.group(1)[:3])
        ahead = (target - now.weekday()) % 7 or 7
        return now.date() + dt.timedelta(days=ahead)
    m = re.fullmatch(r"in\s+(\d+|a|an|one|two|three)\s+(day|week|month)s?", low)
    if m:
        n = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}.get(m.group(1)) or int(m.group(1))
        unit = m.group(2)
        if unit == "month":
            y, mo = divmod(now.month - 1 + n, 12)
            import calendar

            y, mo = now.year + y, mo + 1
            return dt.date(y, mo, min(now.day, calendar.monthrange(y, mo)[1]))
        return now.date() + dt.timedelta(days=n * (7 if unit == "week" else 1))
    v = dateparser.parse(s, languages=["en"], settings={
        "RELATIVE_BASE": now, "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False, "PREFER_DAY_OF_MONTH": "first"})
    return v


def _fmt_when(w: dt.date | dt.datetime) -> str:
    return f"{w:%a %d %b %Y %H:%M}" if isinstance(w, dt.datetime) else f"{w:%a %d %b %Y}"


# -- finding tasks ---------------------------------------------------------------------
def cite(n: Node) -> str:
    return f"{n.file}:{n.line}" + (f" id:{n.id}" if n.id else "")


def _line(n: Node, extra: str = "") -> str:
    head = " ".join(x for x in (n.todo, f"[#{n.priority}]" if n.priority else None, n.title)
                    if x)
    return f"- {head}{extra} ({cite(n)})"


def _ref(n: Node) -> str:
    return f"id:{n.id}" if n.id else f"{n.file}:{n.line}"


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[\w'-]+", text.lower())
            if len(w) > 1 and w not in _STOP][:8]


def find_task(memex: Memex, task: str, *, tasks_only: bool = True,
              prefer_open: bool = True) -> tuple[Node | None, list[Node], str]:
    """The one entry ``task`` names (an ID / FILE:LINE / key, or title words).

    Returns ``(node, candidates, error)``: a node, or None with the candidates and why."""
    from ..errors import NodeNotFoundError

    task = (task or "").strip().strip("\"'“”")
    if not task:
        return None, [], "which task? give some words of its title"
    if re.match(r"^(id:)?[0-9a-f]{8}-[0-9a-f-]{27}$", task, re.I) or "::" in task \
            or re.match(r"^\S+\.org:\d+$", task):
        try:
            return memex.resolve(task), [], ""
        except NodeNotFoundError as e:
            return None, [], str(e)
    words = _words(task)
    if not words:
        return None, [], f"{task!r} has no words to search task titles for"
    expr = " ".join(f"heading:{w!s}" for w in words if re.fullmatch(r"[\w'-]+", w))
    hits = [n for n in memex.query(expr) if n.todo or not tasks_only]
    if not hits:  # fall back to the plain title match (e.g. a title made of stop words)
        hits = [n for n in memex.store.nodes_by_ref(task) if n.todo or not tasks_only]
    if not hits:
        return None, [], f"no task title contains {' '.join(words)!r}"
    exact = [n for n in hits if n.title.casefold() == task.casefold()]
    if len(exact) == 1:
        return exact[0], [], ""
    if len(hits) > 1 and prefer_open:
        open_ = [n for n in hits if n.todo_type != "done"]
        if len(open_) == 1:
            return open_[0], [], ""
    if len(hits) == 1:
        return hits[0], [], ""
    return None, hits, (f"{task!r} matches {len(hits)} tasks: "
                        + "; ".join(f"{n.todo or ''} {n.title} ({cite(n)})".strip()
                                    for n in hits[:8])
                        + " — say which (more title words, or its id / file:line)")


def _find_project(memex: Memex, name: str) -> tuple[Node | None, str]:
    projects = memex.active_projects()
    words = _words(name)
    if not words:
        return None, "which project?"
    exact = [p for p in projects if p.title.casefold() == name.strip().casefold()]
    if len(exact) == 1:
        return exact[0], ""

    def score(p: Node) -> int:
        hay = " ".join([p.title, p.file, p.category or ""]).lower()
        return sum(w in hay for w in words)

    scored = sorted(((score(p), p) for p in projects), key=lambda x: -x[0])
    best = [p for s, p in scored if s and s == scored[0][0]] if scored else []
    if len(best) == 1:
        return best[0], ""
    if not best:
        return None, (f"no active project matches {name!r}; active projects: "
                      + "; ".join(f"{p.title} ({cite(p)})" for p in projects[:10]))
    return None, (f"{name!r} matches {len(best)} projects: "
                  + "; ".join(f"{p.title} ({cite(p)})" for p in best[:8]))


# -- reading views -------------------------------------------------------------------
def _date_of(raw: str | None) -> dt.date | None:
    from ..org.timestamps import parse_timestamp

    ts = parse_timestamp(raw) if raw else None
    return ts.start.date() if ts else None


def _agenda_text(memex: Memex, now: dt.datetime, when: str | None) -> str:
    today = now.date()
    view = memex.agenda(today=today, days=7)
    dated: list[tuple[dt.date, str, Node]] = []
    for kind, key in (("scheduled", "scheduled"), ("deadline", "deadlines")):
        for n in view[key]:
            d = _date_of(n.scheduled if kind == "scheduled" else n.deadline)
            if d is not None:
                dated.append((d, kind, n))
    dated.sort(key=lambda x: (x[0], x[2].file, x[2].line))
    parts: list[str] = []

    def section(title: str, rows: list[str]) -> None:
        parts.append(f"{title}:")
        parts.extend(rows[:MAX_LIST] or ["- nothing"])
        if len(rows) > MAX_LIST:
            parts.append(f"- … and {len(rows) - MAX_LIST} more")

    def row(d: dt.date, kind: str, n: Node) -> str:
        raw = n.scheduled if kind == "scheduled" else n.deadline
        return _line(n, f" — {kind} {raw}")

    if when in (None, "today"):
        section(f"Today ({today:%a %d %b})", [row(*x) for x in dated if x[0] == today])
    if when in (None, "week"):
        section("This week", [row(*x) for x in dated if today < x[0] <= today
                              + dt.timedelta(days=7)])
    section("Overdue", [_line(n, " — " + ", ".join(
        f"{k} {v}" for k, v in (("deadline", n.deadline), ("scheduled", n.scheduled)) if v))
        for n in memex.overdue(today)])
    if when is None:
        section("Next actions", [_line(n) for n in view["next"]])
    return "\n".join(parts)


def _next_text(memex: Memex, project: str | None) -> tuple[str, str | None]:
    """Text, or (None-able) error."""
    if project:
        p, err = _find_project(memex, project)
        if p is None:
            return "", err
        acts = [n for n in memex.next_actions(p.key) if n.key != p.key]
        rows = [_line(n) for n in acts[:MAX_LIST]] or [
            "- none: this project has no open tasks — decide its next action"]
        return "\n".join([f"Next actions for {p.title} ({cite(p)}):", *rows]), None
    parts: list[str] = []
    seen: set[str] = set()
    for p in memex.active_projects():
        acts = [n for n in memex.next_actions(p.key) if n.key != p.key]
        seen.update(n.key for n in acts)
        parts.append(f"{p.title} ({cite(p)}):")
        parts += [_line(n) for n in acts[:5]] or ["- none — decide its next action"]
    loose = [n for n in memex.next_actions() if n.todo == "NEXT" and n.key not in seen
             and "project" not in n.local_tags]
    if loose:
        parts.append("Other next actions:")
        parts += [_line(n) for n in loose[:MAX_LIST]]
    return "\n".join(parts) or "No active projects and no next actions.", None


def _waiting_nodes(memex: Memex) -> list[Node]:
    return memex.query("todo:WAITING")


def _inbox_nodes(memex: Memex) -> list[Node]:
    inbox = memex.inbox()
    target = inbox.split("::")[0]
    out = {n.key: n for n in memex.query(f"file:{target} level:1")
           if n.file == target} if target.endswith(".org") and "::" not in inbox else {}
    for h in memex.query("heading:inbox"):
        if h.title.strip().casefold() == "inbox":
            for n in memex.query(f"file:{h.file}"):
                if n.file == h.file and n.outline == [*h.outline, h.title]:
                    out[n.key] = n
    return list(out.values())


def _review_text(memex: Memex, now: dt.datetime) -> str:
    today = now.date()
    inbox = _inbox_nodes(memex)
    overdue = memex.overdue(today)
    waiting = _waiting_nodes(memex)
    done = memex.recently_done(limit=50, days=7, today=today)
    stale: list[tuple[Node, int]] = []
    for p in memex.active_projects():
        acts = [n for n in memex.next_actions(p.key) if n.key != p.key]
        if not any(n.todo == "NEXT" for n in acts):
            stale.append((p, len(acts)))
    box = lambda ok: "[X]" if ok else "[ ]"  # noqa: E731
    parts = [f"Weekly review ({today:%a %d %b %Y})",
             f"{box(not inbox)} Inbox: {len(inbox)} item(s) to process"]
    parts += [_line(n) for n in inbox[:MAX_LIST]]
    parts.append(f"{box(not overdue)} Overdue: {len(overdue)}")
    parts += [_line(n) for n in overdue[:MAX_LIST]]
    parts.append(f"{box(not stale)} Projects without a next action: {len(stale)}")
    parts += [f"- {p.title} ({cite(p)}) — "
              + (f"{k} open task(s), none NEXT" if k else "no open tasks") for p, k in stale]
    parts.append(f"[ ] Waiting for: {len(waiting)} — chase or re-confirm each")
    parts += [_line(n) for n in waiting[:MAX_LIST]]
    parts.append(f"[X] Done in the last 7 days: {len(done)}")
    parts += [_line(n, f" — closed {n.closed}") for n in done[:MAX_LIST]]
    parts.append("[ ] Look ahead: the next two weeks' calendar and deadlines; someday/maybe")
    return "\n".join(parts)


# -- proposer ------------------------------------------------------------------------
def _clause(ctx: Context) -> str:
    """The words the skill is asked to act on (a delegated clause or the request)."""
    return re.sub(r"^\s*/gtd\b\s*", "", ctx.text or "").strip()


def _view_request(text: str, now: dt.datetime) -> bool:
    """A request for one of the fixed views (agenda, review, next actions, waiting list):
    the phrase names the view and nothing in the clause asks for a change."""
    old = parse_request(text)
    if old is None or old.get("op") not in ("agenda", "review", "next", "waiting"):
        return False
    from .gtd_questions import is_question
    from .gtd_slots import parse_clause

    if is_question(text):
        return True
    s = parse_clause(text, now)
    return not (s.changes() or s.capture_cue or s.ref_verb or s.weak_cue)


def _seen(ctx: Context) -> Any:
    """The memex as the request's sender may see it: a client not trusted with private
    notes neither reads nor names nor changes a private entry through GTD."""
    from ..access import Access

    return Access.for_signal(ctx.memex, ctx.signal.meta).view()


def _offline(ctx: Context) -> Proposal:
    text = _clause(ctx)
    if text and not _view_request(text, now_of(ctx)):
        from .gtd_plan import plan

        return plan(_seen(ctx), text, now_of(ctx))  # the sender's privacy, as below
    args = _args(ctx) or {"op": "agenda"}
    op = str(args.get("op") or "agenda").lower()
    now = now_of(ctx)
    m: Any = _seen(ctx)  # privacy of the sender
    if op not in OPS:
        return {"action": "reply", "text": f"Unknown GTD operation {op!r}; one of "
                f"{', '.join(OPS)}."}
    if op == "agenda":
        asked = str(args.get("when") or "").lower()
        when = "today" if "today" in asked else "week" if "week" in asked else None
        return {"action": "reply", "text": _agenda_text(m, now, when)}
    if op == "next":
        text, err = _next_text(m, args.get("project"))
        return {"action": "reply", "text": text or f"I could not list next actions: {err}"}
    if op == "review":
        return {"action": "reply", "text": _review_text(m, now)}
    if op == "capture":
        body = str(args.get("text") or args.get("task") or "").strip()
        return {"action": "capture", "text": body,
                "todo": args.get("state") or "TODO", "op": "capture"}
    if op == "waiting" and not args.get("task"):
        rows = [_line(n) for n in _waiting_nodes(m)]
        return {"action": "reply", "text": "\n".join(
            [f"Waiting for ({len(rows)}):", *rows] if rows else ["Nothing is WAITING."])}
    # writes on one task
    task = str(args.get("ref") or args.get("task") or "")
    p: Proposal = {"action": "memex", "op": op, "task": task}
    if op == "waiting":
        p.update(op="todo", state="WAITING")
    elif op == "todo":
        p["state"] = str(args.get("state") or "DONE")
    else:
        raw = str(args.get("when") or "")
        if raw.strip().lower() in ("none", "remove", "clear", "unset"):
            p["when"] = "none"
        else:
            w = parse_when(raw, now)
            p["when"] = w.isoformat(timespec="minutes") if isinstance(w, dt.datetime) \
                else w.isoformat() if w else raw
        if args.get("repeater"):
            p["repeater"] = str(args["repeater"])
    node, _, _ = find_task(m, task, prefer_open=p.get("state") != "TODO")
    if node is not None:
        p["ref"] = _ref(node)
    return p


# -- verifier ------------------------------------------------------------------------
def _asks(ctx: Context) -> bool:
    """Is the request a question?  Then no plan may write, whoever proposed it (the offline
    planner, a model): checked here, where every write is verified, not only by the router."""
    from .gtd_questions import is_question

    return is_question(_clause(ctx))


_REPEATER = re.compile(r"[.+]?\+\d+[hdwmy](/\d+[hdwmy])?")


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    kind = p.get("action")
    if kind == "reply":
        text = str(p.get("text") or "").strip()
        return Action("reply", {"text": text}, origin=TARGET) if text else \
            Rejection("an empty reply")
    if kind in ("capture", "memex") and _asks(ctx):
        return Rejection("the request is a question: answer it from the lists, change "
                         "nothing (a question never writes)")
    if kind == "capture":
        text = str(p.get("text") or "").strip()
        if not text:
            return Rejection("nothing to capture: give the task's text")
        if re.search(r"^\*+[ \t]", text, re.M):
            return Rejection("captured text may not contain Org headlines")
        target = ctx.memex.inbox()
        todo = p.get("todo")
        return Action("memex.write", {"op": "capture", "path": target.split("::")[0],
                                      "to": target, "text": text,
                                      "todo": str(todo) if todo else None}, origin=TARGET)
    if kind != "memex":
        return None
    op = p.get("op")
    if op == "gtd":
        return _verify_steps(p, ctx)
    if op not in WRITE_OPS:
        return Rejection(f"gtd can write ops {', '.join(WRITE_OPS)}, not {op!r}")
    node, _, err = find_task(_seen(ctx), str(p.get("ref") or p.get("task") or ""),
                             prefer_open=p.get("state") != "TODO")
    if node is None:
        return Rejection(err)
    args: dict[str, Any] = {"op": op, "path": node.file, "ref": _ref(node),
                            "title": node.title}
    if op == "todo":
        state = str(p.get("state") or "").strip()
        state = _STATES.get(state.lower(), state)
        if not state:
            return Rejection("which state? e.g. DONE, NEXT, WAITING, TODO")
        args["state"] = state
    else:
        raw = str(p.get("when") or "").strip()
        if raw.lower() == "none":
            args["when"] = "none"
        else:
            w = parse_when(raw, now_of(ctx))
            if w is None:
                return Rejection(f"I could not read {raw!r} as a date; try e.g. 'tomorrow', "
                                 "'next Tuesday at 9', 'in 3 days' or 2026-12-24")
            args["when"] = w.isoformat(timespec="minutes") if isinstance(w, dt.datetime) \
                else w.isoformat()
        rep = p.get("repeater")
        if rep:
            if not _REPEATER.fullmatch(str(rep)):
                return Rejection(f"{rep!r} is not an Org repeater (e.g. +1w, .+1d, ++1m)")
            args["repeater"] = str(rep)
    return Action("memex.write", args, origin=TARGET)


_COOKIE = re.compile(r"(?:[.+]?\+\d+[hdwmy](?:/\d+[hdwmy])?)?(?:\s*-{1,2}\d+[hdwmy])?")


def _verify_steps(p: Proposal, ctx: Context) -> Action | Rejection:
    """Re-check a planned list of writes: known ops, entries that exist in the one file the
    guard sees, ISO dates, Org cookies, no Org structure in text."""
    from .gtd_plan import STEP_OPS

    steps = p.get("steps")
    path = str(p.get("path") or "")
    if not isinstance(steps, list) or not steps or not path:
        return Rejection("a gtd write needs a path and at least one step")
    clean: list[dict[str, Any]] = []
    new = False
    for st in steps:
        if not isinstance(st, dict) or st.get("op") not in STEP_OPS:
            return Rejection(f"unknown gtd step {st!r}")
        op = st["op"]
        if op == "capture":
            text = str(st.get("text") or "").strip()
            if not text or "\n" in text or re.match(r"\*+\s", text):
                return Rejection("a captured title is one line of text, not Org structure")
            if str(st.get("to") or "").split("::")[0] != path:
                return Rejection("a capture step must write into the action's path")
            new = True
        else:
            ref = str(st.get("ref") or "")
            if ref == "@new":
                if not new:
                    return Rejection("a step names the new entry before it is captured")
            else:
                try:
                    node = _seen(ctx).resolve(ref)  # a withheld entry is not found
                except Exception as e:
                    return Rejection(str(e))
                if node.file != path:
                    return Rejection(f"{ref} is in {node.file}, not {path}")
            if op in ("schedule", "deadline"):
                try:
                    w = str(st.get("when") or "")
                    dt.datetime.fromisoformat(w) if "T" in w else dt.date.fromisoformat(w)
                except ValueError:
                    return Rejection(f"{st.get('when')!r} is not an ISO date")
                if st.get("repeater") and not _COOKIE.fullmatch(str(st["repeater"])):
                    return Rejection(f"{st['repeater']!r} is not an Org repeater")
            if op == "append" and re.search(r"^\*+[ \t]", str(st.get("text") or ""), re.M):
                return Rejection("a note may not contain Org headlines")
        clean.append({k: v for k, v in st.items()
                      if isinstance(v, str | int | float | bool | list) or v is None})
    return Action("memex.write", {"op": "gtd", "path": path, "steps": clean,
                                  "summary": str(p.get("summary") or "")}, origin=TARGET)


def _apply_steps(memex: Memex, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Run planned steps in order; if one fails, undo the ones already made."""
    done: list[Any] = []
    new_ref: str | None = None
    lines: list[str] = []
    try:
        for st in args.get("steps") or []:
            op = st["op"]
            ref = new_ref if st.get("ref") == "@new" else str(st.get("ref") or "")
            if ref is None:  # the verifier lets "@new" follow a capture only
                raise ValueError("a step names the new entry before it is captured")
            if op == "capture":
                r = memex.capture(str(st["text"]), to=st.get("to"), todo=st.get("todo"),
                                  tags=list(st.get("tags") or []))
                new_ref = r.node
            elif op == "todo":
                r = memex.set_todo(ref, st.get("state"))
            elif op in ("schedule", "deadline"):
                w = str(st["when"])
                when = dt.datetime.fromisoformat(w) if "T" in w else dt.date.fromisoformat(w)
                fn = memex.schedule if op == "schedule" else memex.deadline
                r = fn(ref, when, st.get("repeater") or None)
            elif op == "priority":
                r = memex.set_priority(ref, st.get("priority"))
            elif op == "tag":
                r = memex.tag(ref, list(st.get("changes") or []))
            elif op == "set-property":
                r = memex.set_property(ref, str(st["key"]), st.get("value"))
            elif op == "append":
                r = memex.append(ref, str(st["text"]))
            else:
                raise ValueError(f"unknown gtd step {op!r}")
            done.append(r)
            lines.append(f"- {r.description}")
    except Exception:
        if any(r.changed for r in done):
            memex.undo(sum(1 for r in done if r.changed))
        raise
    node = None
    last = next((r.node for r in reversed(done) if r.node), None)
    if last:
        try:
            node = memex.resolve(new_ref or last)
        except Exception:
            node = None
    where = f" ({cite(node)})" if node is not None else f" ({done[-1].file})" if done else ""
    head = "Captured" if new_ref else "Updated"
    title = node.title if node is not None else ""
    text = f"{head} {title}{where}:\n" + "\n".join(lines)
    return text, {"writes": [r.to_dict() for r in done]}


# -- actuator side -------------------------------------------------------------------
def apply_memex_op(memex: Memex, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Run one GTD write (``todo`` / ``schedule`` / ``deadline``) through the Memex API."""
    op = args.get("op")
    if op == "gtd":
        return _apply_steps(memex, args)
    ref = str(args.get("ref") or "")
    if not ref:
        raise ValueError(f"gtd {op}: args.ref is required")
    before = memex.resolve(ref)
    if op == "todo":
        r = memex.set_todo(ref, str(args.get("state") or "") or None)
        what = f"{before.todo or '-'} → {args.get('state')}"
    elif op in ("schedule", "deadline"):
        raw = str(args.get("when") or "none")
        when: dt.date | dt.datetime | None = None
        if raw.lower() != "none":
            when = dt.datetime.fromisoformat(raw) if "T" in raw or " " in raw \
                else dt.date.fromisoformat(raw)
        fn = memex.schedule if op == "schedule" else memex.deadline
        r = fn(ref, when, args.get("repeater"))
        what = (f"{'scheduled' if op == 'schedule' else 'deadline'} "
                f"{_fmt_when(when) if when else 'removed'}"
                + (f" (repeats {args['repeater']})" if args.get("repeater") else ""))
    else:
        raise ValueError(f"unknown gtd memex op {op!r}")
    after = memex.resolve(f"id:{before.id}") if before.id else before
    if not before.id and r.node:
        try:
            after = memex.resolve(r.node)
        except Exception:  # the key changed with the title's keyword: cite the old place
            after = before
    status = "" if r.changed else " (no change)"
    return f"{before.title}: {what}{status} ({cite(after)}).", r.to_dict()


def skill() -> Skill:
    return Skill(
        "gtd", 72, trigger=_trigger, offline=_offline, symbolic=_symbolic,
        tools=["reply", "memex.write"],
        description="GTD: agenda (today/week/overdue), next actions per project, inbox "
                    "capture, state changes, natural-date schedule/deadline, waiting-for, "
                    "weekly review.")
