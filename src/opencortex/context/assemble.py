"""Peripheral vision: what the agent should have in view before it thinks.

A model answers better when it sees where the person is (the focus, in full), what is
around them at low resolution (today's agenda, next actions, projects, what just got
done, the skills it can use, recent log lines, the time and place) and what is related
(semantic neighbours).  All of it must fit a token budget, cut lowest priority first
and say what was cut; private notes never reach a remote model.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import OpenCortexError
from ..guard import GuardPolicy, filter_private
from ..guard.policy import policy_of
from ..memex import Memex
from ..memory.nodes import Node, heading_keys
from ..retrieval.deep_read import estimate_tokens
from .model import AssembledContext, Omission, Section
from .render import one_line, render

__all__ = ["SECTION_PRIORITIES", "assemble", "default_skills"]

SECTION_PRIORITIES: dict[str, int] = {
    "focus": 0, "agenda": 1, "next": 1, "neighbours": 2, "projects": 3, "done": 4,
    "skills": 5, "log": 6,
}
"""Lower is kept first; the order here is also the order of the text."""
_TITLES = {"focus": "Focus", "agenda": "Agenda", "next": "Next actions",
           "neighbours": "Related", "projects": "Projects", "done": "Recently done",
           "skills": "Skills", "log": "Log"}
_UNITS = {"focus": "child headlines", "agenda": "agenda entries", "next": "next actions",
          "neighbours": "neighbours", "projects": "projects", "done": "done tasks",
          "skills": "skills", "log": "log lines"}
FOCUS_SHARE = 0.6
"""At most this share of the budget goes to the focus body, so the periphery survives."""
SNIPPETS = 3
"""Only the top few neighbours carry a snippet; the rest are headlines."""
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


class _Gate:
    """Privacy for remote models: drops private nodes and remembers how many (not which)."""

    def __init__(self, policy: GuardPolicy, remote: bool) -> None:
        self.policy, self.remote = policy, remote
        self.withheld: set[str] = set()

    def keep(self, nodes: Iterable[Node]) -> list[Node]:
        nodes = list(nodes)
        if not self.remote:
            return nodes
        kept = filter_private(nodes, self.policy)
        ok = {n.key for n in kept}
        self.withheld.update(n.key for n in nodes if n.key not in ok)
        return kept


def _date(value: str | None) -> dt.date | None:
    m = _DATE.search(value or "")
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _days(delta: dt.timedelta) -> str:
    return "1 day" if delta.days == 1 else f"{delta.days} days"


def _entry(n: Node, why: str | None = None, **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {
        "key": n.key, "id": n.id, "file": n.file, "line": n.line, "title": n.title,
        "todo": n.todo, "priority": n.priority, "tags": list(n.local_tags),
        "outline": list(n.outline), "scheduled": n.scheduled, "deadline": n.deadline,
        "closed": n.closed,
    }
    if why:
        e["why"] = why
    e.update(extra)
    return e


def _section(name: str, entries: list[dict[str, Any]], note: str | None = None) -> Section:
    return Section(name, _TITLES[name], SECTION_PRIORITIES[name], entries,
                   None if entries else note)


def _now(now: dt.datetime | None, identity: dict[str, Any]) -> dt.datetime:
    if now is not None:
        return now
    tz = identity.get("timezone")
    if tz:
        try:
            from zoneinfo import ZoneInfo

            return dt.datetime.now(ZoneInfo(str(tz)))
        except (KeyError, ValueError, OSError):
            pass
    return dt.datetime.now().astimezone()


def _header(now: dt.datetime, identity: dict[str, Any], remote: bool) -> list[str]:
    stamp = now.strftime("[%Y-%m-%d %a %H:%M]")
    if now.tzinfo is not None and now.utcoffset() is not None:
        stamp += f" (UTC{now.strftime('%z')})"
    lines = [f"- Time: {stamp}"]
    for key, label in (("name", "User"), ("location", "Location"), ("timezone", "Timezone")):
        if identity.get(key):
            lines.append(f"- {label}: {one_line(identity[key], 120)}")
    if remote:
        lines.append("- Audience: remote model (notes with privacy tags are withheld)")
    return lines


# -- the sections ------------------------------------------------------------------------
def _read_own_section(memex: Memex, node: Node) -> tuple[str, list[str]]:
    """The entry's own section text after planning/properties (freshest: from the file),
    and the keys of its direct children."""
    from ..org.parser import parse_file

    try:
        doc = parse_file(str(memex.root / node.file))
        keys = heading_keys(doc, node.file)
        i = keys.index(node.key)
    except (OSError, ValueError):
        got = memex.store.nodes_by_keys([node.key], with_body=True).get(node.key)
        return ((got.body or "") if got else ""), []
    h = doc.headings[i]
    body = doc.text[h.body_start:h.end].strip("\n")
    children = [keys[x.index] for x in doc.headings if x.parent == h.index]
    return body, children


def _focus(memex: Memex, node: Node, gate: _Gate, budget: int
           ) -> tuple[Section, int, set[str]]:
    """(section, full body tokens, keys shown); the body is capped at FOCUS_SHARE."""
    if not gate.keep([node]):
        return _section("focus", [], "The focus node is private: withheld."), 0, set()
    body, child_keys = _read_own_section(memex, node)
    full = estimate_tokens(body)
    cap = max(0, int(budget * FOCUS_SHARE))
    entry = _entry(node, body=body)
    if full > cap:
        entry["body"] = _cut(body, cap)
        entry["body_truncated"] = True
    found = memex.store.nodes_by_keys(child_keys, with_body=False)
    children = gate.keep(found[k] for k in child_keys if k in found)
    entries = [entry, *(_entry(c, depth=1) for c in children)]
    return _section("focus", entries), full, {node.key, *(c.key for c in children)}


def _cut(body: str, tokens: int) -> str:
    marker = "\n[… cut to fit the token budget]"
    keep = max(0, tokens * 4 - len(marker))
    return body[:keep].rstrip() + marker if keep else ""


def _agenda(memex: Memex, today: dt.date, gate: _Gate, shown: set[str]
            ) -> tuple[Section, Section, set[str]]:
    """Today (scheduled, due, overdue, due within a week) and the NEXT actions not in it;
    nodes already in the focus are not repeated."""
    ag = memex.agenda(today, days=7)
    rows: list[tuple[Node, str]] = []
    for n in ag["scheduled"]:
        if _date(n.scheduled) == today:
            rows.append((n, "scheduled today"))
    for n in ag["deadlines"]:
        if _date(n.deadline) == today:
            rows.append((n, "deadline today"))
    for n in ag["overdue"]:
        d, s = _date(n.deadline), _date(n.scheduled)
        if d and d < today:
            rows.append((n, f"overdue: deadline was {_days(today - d)} ago"))
        elif s:
            rows.append((n, f"overdue: scheduled {_days(today - s)} ago"))
    for n in ag["deadlines"]:
        d = _date(n.deadline)
        if d and d > today:
            rows.append((n, f"deadline in {_days(d - today)}"))
    seen: set[str] = set(shown)
    entries = []
    ok = {n.key for n in gate.keep(n for n, _ in rows)}
    for n, why in rows:
        if n.key in ok and n.key not in seen:
            seen.add(n.key)
            entries.append(_entry(n, why))
    nxt = [n for n in gate.keep(ag["next"]) if n.key not in seen]
    seen.update(n.key for n in nxt)
    seen -= shown
    return (_section("agenda", entries, "Nothing scheduled, due or overdue today."),
            _section("next", [_entry(n) for n in nxt], "No NEXT actions."), seen)


def _neighbours(memex: Memex, focus: Node | None, query: str | None, gate: _Gate,
                exclude: set[str], limit: int, notes: list[str]) -> Section:
    """Related nodes, taken in turn from the query's hits, the focus's links and
    backlinks, and the focus's own hits (so no one source crowds out the others)."""
    from ..retrieval.hybrid import retriever_for

    sources: list[list[tuple[str, str, str]]] = []  # (key, why, snippet) per source

    def search(text: str, why: str) -> list[tuple[str, str, str]]:
        try:
            res = retriever_for(memex).search(text, k=limit + len(exclude))
        except (OpenCortexError, OSError, ValueError) as e:
            notes.append(f"retrieval failed for {why}: {e}")
            return []
        notes.extend(x for x in res.notes if x not in notes)
        return [(h.key, f"{why} (rank {i})", h.snippet) for i, h in enumerate(res.hits, 1)]

    if query and query.strip():
        sources.append(search(query, "matches the query"))
    if focus is not None:
        store = memex.store
        sources.append(
            [(ln.target_key, "the focus links here", "")
             for ln in store.links_from(focus.key) if ln.target_key]
            + [(ln.source_key, "links to the focus", "")
               for ln in store.backlinks(focus.key) if ln.source_key])
        sources.append(search(focus.title, "similar to the focus"))
    width = max((len(x) for x in sources), default=0)
    cands = [src[i] for i in range(width) for src in sources if i < len(src)]
    nodes = memex.store.nodes_by_keys([k for k, _, _ in cands], with_body=False)
    ok = {n.key for n in gate.keep(nodes.values())}
    entries: list[dict[str, Any]] = []
    seen = set(exclude)
    for key, why, snip in cands:
        if key in seen or key not in ok or len(entries) >= limit:
            continue
        seen.add(key)
        extra = {"snippet": snip} if snip and sum("snippet" in e for e in entries) < SNIPPETS \
            else {}
        entries.append(_entry(nodes[key], why, **extra))
    return _section("neighbours", entries)


def default_skills(memex: Memex) -> list[Any]:
    """The skills `opencortex skills` would list: built-ins, plugins, the memex's own
    (callers holding a Runtime pass ``skills=runtime.registry`` instead)."""
    from ..skills.default import default_registry

    return default_registry(memex.root).skills()


def _skills(skills: Any) -> Section:
    items = skills.skills() if hasattr(skills, "skills") else list(skills or [])
    entries = []
    for s in items:
        desc = (getattr(s, "description", "") or "").strip().splitlines()
        entries.append({"name": str(getattr(s, "name", s)),
                        "description": desc[0] if desc else "",
                        "priority": getattr(s, "priority", None)})
    return _section("skills", entries)


def _log(lines: Sequence[str] | None) -> Section:
    flat = [ln for raw in (lines or []) for ln in str(raw).splitlines() if ln.strip()]
    # newest first, so a budget cut drops the oldest lines; rendered in original order
    return _section("log", [{"line": ln, "index": i} for i, ln in reversed(list(enumerate(flat)))])


# -- the budget --------------------------------------------------------------------------
def _quotes(sections: list[Section]) -> bool:
    """Whether any quoted block is shown (then the model gets the untrusted-data preamble)."""
    return any(e.get("body") or e.get("snippet") or "line" in e
               for s in sections for e in s.entries)


def _omissions(kept: list[Section], cut: dict[str, int], full_body: int,
               fixed: list[Omission]) -> list[Omission]:
    out: list[Omission] = []
    fe = kept[0].entries[0] if kept and kept[0].name == "focus" and kept[0].entries else None
    if fe is not None and fe.get("body_truncated"):
        out.append(Omission("focus", full_body - estimate_tokens(fe.get("body") or ""),
                            "focus body tokens", "token budget"))
    out += [Omission(n, c, _UNITS[n], "token budget") for n, c in cut.items() if c]
    return out + fixed


def _fit(header: list[str], cands: list[Section], budget: int, fixed: list[Omission],
         full_body: int) -> tuple[list[Section], list[Omission], str]:
    """Greedy by priority: each entry goes in if the text, with every not-yet-placed entry
    reported as omitted, still fits.  At the first misfit the rest of that section and
    every lower-priority section are cut (sections of equal priority still get a turn), so
    nothing less important is ever kept in place of something more important."""
    kept = [Section(s.name, s.title, s.priority, [], s.note) for s in cands]
    by_name = {s.name: s for s in kept}
    cut: dict[str, int] = {}
    pending = {s.name: len(s.entries) for s in cands}

    def text() -> str:
        both = {n: cut.get(n, 0) + pending.get(n, 0) for n in [*cut, *pending]}
        lines = [o.describe() for o in _omissions(kept, both, full_body, fixed)]
        return render(header, kept, lines, _quotes(kept))

    stop_after: int | None = None  # the priority at which the first entry was cut
    for s in sorted(cands, key=lambda s: s.priority):
        dest = by_name[s.name]
        if stop_after is not None and s.priority > stop_after:
            cut[s.name], pending[s.name] = len(s.entries), 0
            continue
        for i, e in enumerate(s.entries):
            pending[s.name] -= 1
            dest.entries.append(e)
            if estimate_tokens(text()) <= budget:
                continue
            dest.entries.pop()
            if s.name == "focus" and i == 0 and e.get("body") and \
                    _shrink_focus(e, dest, text, budget):
                continue
            cut[s.name] = len(s.entries) - i
            pending[s.name] = 0
            stop_after = s.priority
            break
    out = text()
    # safety net: never return more than the budget while anything is left to drop
    while estimate_tokens(out) > budget:
        victim = max((s for s in kept if s.entries), key=lambda s: s.priority, default=None)
        if victim is None:
            break
        victim.entries.pop()
        cut[victim.name] = cut.get(victim.name, 0) + 1
        out = text()
    return kept, _omissions(kept, cut, full_body, fixed), out


def _shrink_focus(e: dict[str, Any], dest: Section, text: Any, budget: int) -> bool:
    """The focus entry goes in with as much of its body as fits (never dropped for it)."""
    body = e["body"]
    for _ in range(6):
        trial = {**e, "body": body, "body_truncated": True}
        dest.entries.append(trial)
        over = estimate_tokens(text()) - budget
        if over <= 0:
            e.clear()
            e.update(trial)
            dest.entries[-1] = e
            return True
        dest.entries.pop()
        if not body:
            return False
        body = _cut(body, max(0, estimate_tokens(body) - over - 10))
    return False


# -- the whole -------------------------------------------------------------------------
def assemble(memex: Memex, *, focus: str | None = None, query: str | None = None,
             budget: int = 2000, remote: bool = False, now: dt.datetime | None = None,
             skills: Any = None, log_lines: list[str] | None = None,
             done_limit: int = 5, neighbours: int = 12) -> AssembledContext:
    """The context for one model call, as Org text within ``budget`` tokens.

    ``focus``: a node ref (ID, FILE::Outline, FILE:LINE, title) the person is on.
    ``skills``: a SkillRegistry or list of skills (None: what `opencortex skills` loads).
    ``remote``: the text goes to a remote model, so privacy-tagged nodes are withheld.
    The caller syncs the index (``memex.sync()``) when freshness matters.
    """
    identity = memex.settings.identity.as_dict()
    now = _now(now, identity)
    today = now.date()
    gate = _Gate(policy_of(memex.settings.guard), remote)
    notes: list[str] = []

    cands: list[Section] = []
    focus_node = memex.resolve(focus) if focus else None
    shown: set[str] = set()
    full_body = 0
    if focus_node is not None:
        sec, full_body, shown = _focus(memex, focus_node, gate, budget)
        cands.append(sec)
    agenda, nxt, on_agenda = _agenda(memex, today, gate, shown)
    cands += [agenda, nxt]
    visible_focus = focus_node if focus_node is not None and shown else None
    cands.append(_neighbours(memex, visible_focus, query, gate, shown | on_agenda,
                             neighbours, notes))
    cands.append(_section("projects", [_entry(n) for n in gate.keep(memex.active_projects())],
                          "No active projects."))
    cands.append(_section("done", [_entry(n) for n in gate.keep(
        memex.recently_done(done_limit, today=today))], "Nothing completed yet."))
    cands.append(_skills(default_skills(memex) if skills is None else skills))
    cands.append(_log(log_lines))

    fixed: list[Omission] = []
    if gate.withheld:
        fixed.append(Omission("private", len(gate.withheld), "private nodes withheld",
                              "privacy tags; remote model"))
    header = _header(now, identity, remote)
    kept, omitted, text = _fit(header, cands, budget, fixed, full_body)
    if estimate_tokens(text) > budget:
        notes.append(f"budget {budget} is below the minimum frame; the text is larger")
    return AssembledContext(
        text=text,
        sections=[s for s in kept if s.entries or s.note],
        tokens=estimate_tokens(text),
        budget=budget,
        omitted=omitted,
        withheld_private=len(gate.withheld),
        now=now.isoformat(timespec="minutes"),
        remote=remote,
        notes=notes,
    )

