"""Reviews over time: what a span of days held, read from the memex itself — tasks CLOSED
in it, CLOCK time per day, project and tag (clipped to the span as ``org-clock-sum`` does,
running clocks flagged, never counted), journal entries (datetree days or dated
headlines), captures (CREATED), meetings, and OpenCortex's own sessions — each item with
its file:line. Dates come from the notes' timestamps, never from a model."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

from ..org.timestamps import parse_timestamp

__all__ = ["Clock", "Item", "Review", "resolve_range", "review"]

_CLOCK = re.compile(r"^[ \t]*CLOCK:[ \t]*(\[[^\]\n]+\])(?:--(\[[^\]\n]+\]))?", re.I)
_DAY_HEAD = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\b")
_TS_ANY = re.compile(r"[<\[]\d{4}-\d{2}-\d{2}[^\]>\n]*[\]>]")


@dataclass
class Item:
    """One thing the span held, with where it is written."""

    kind: str  # done | journal | capture | meeting | session
    title: str
    file: str
    line: int
    when: str
    project: str | None = None
    tags: list[str] = field(default_factory=list)
    state: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Clock:
    """One CLOCK line; ``minutes`` is the part inside the span (0 for a running clock)."""

    title: str
    file: str
    line: int
    start: dt.datetime
    end: dt.datetime | None
    minutes: int
    project: str
    tags: list[str]
    days: dict[str, int]

    @property
    def running(self) -> bool:
        return self.end is None

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "file": self.file, "line": self.line,
                "start": self.start.isoformat(timespec="minutes"),
                "end": self.end.isoformat(timespec="minutes") if self.end else None,
                "minutes": self.minutes, "running": self.running, "project": self.project,
                "tags": self.tags, "days": self.days}


def _hm(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


@dataclass
class Review:
    start: dt.date
    end: dt.date  # exclusive
    phrase: str
    done: list[Item] = field(default_factory=list)
    clocks: list[Clock] = field(default_factory=list)
    journal: list[Item] = field(default_factory=list)
    captures: list[Item] = field(default_factory=list)
    meetings: list[Item] = field(default_factory=list)
    sessions: list[Item] = field(default_factory=list)
    summary: list[dict[str, Any]] | None = None

    # -- sums -----------------------------------------------------------------------------
    def _sum(self, key: Any) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.clocks:
            for k in key(c):
                out[k] = out.get(k, 0) + c.minutes
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def by_project(self) -> dict[str, int]:
        return self._sum(lambda c: [c.project])

    def by_tag(self) -> dict[str, int]:
        return self._sum(lambda c: c.tags)

    def by_day(self) -> dict[str, int]:
        days = {(self.start + dt.timedelta(days=i)).isoformat(): 0
                for i in range((self.end - self.start).days)}
        for c in self.clocks:
            for d, m in c.days.items():
                days[d] = days.get(d, 0) + m
        return days

    @property
    def total(self) -> int:
        return sum(c.minutes for c in self.clocks)

    @property
    def items(self) -> list[Item]:
        """Every item in one numbered list (what a summary cites as [n])."""
        return [*self.done, *self.journal, *self.captures, *self.meetings, *self.sessions]

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.start.isoformat(), "to": (self.end - dt.timedelta(days=1))
                .isoformat(), "phrase": self.phrase,
                "done": [i.to_dict() for i in self.done],
                "clocked": {"total_minutes": self.total, "by_project": self.by_project(),
                            "by_tag": self.by_tag(), "by_day": self.by_day(),
                            "clocks": [c.to_dict() for c in self.clocks],
                            "running": [c.to_dict() for c in self.clocks if c.running]},
                "journal": [i.to_dict() for i in self.journal],
                "captures": [i.to_dict() for i in self.captures],
                "meetings": [i.to_dict() for i in self.meetings],
                "sessions": [i.to_dict() for i in self.sessions],
                "summary": self.summary}

    # -- renderings -----------------------------------------------------------------------
    def _head(self) -> str:
        last = self.end - dt.timedelta(days=1)
        span = (f"{self.start:%a %d %b %Y}" if last == self.start else
                f"{self.start:%a %d %b} – {last:%a %d %b %Y}")
        return f"Review of {span}" + (f" ({self.phrase})" if self.phrase else "")

    def render_text(self) -> str:
        out = [self._head()]
        if self.summary:
            out += ["", "Summary:"] + [f"  {s['text']}" for s in self.summary]
        sections = (("Done", self.done), ("Journal", self.journal),
                    ("Captured", self.captures), ("Meetings", self.meetings),
                    ("Agent sessions", self.sessions))
        n = 0
        for name, items in sections:
            out.append(f"\n{name} ({len(items)}):")
            for i in items:
                n += 1
                extra = f" [{i.state}]" if i.state and i.kind == "done" else ""
                proj = f" — {i.project}" if i.project else ""
                out.append(f"  [{n}] {i.when[:16].replace('T', ' ')}  {i.title}{extra}{proj}"
                           f"  ({i.where})")
        out.append(f"\nClocked {_hm(self.total)}:")
        for k, m in self.by_project().items():
            out.append(f"  {_hm(m):>6}  {k}")
        tags = self.by_tag()
        if tags:
            out.append("  by tag: " + ", ".join(f"{k} {_hm(m)}" for k, m in tags.items()))
        for c in self.clocks:
            if c.running:
                out.append(f"  running clock (not counted): {c.title} since "
                           f"{c.start:%a %d %b %H:%M} ({c.file}:{c.line})")
        return "\n".join(out)

    def render_org(self) -> str:
        """An Org subtree to paste or file: each item an Org link to its line."""
        def link(i: Item) -> str:
            label = re.sub(r"[\[\]]", "", i.title)
            return f"[[file:{i.file}::{i.line}][{label}]]"

        last = self.end - dt.timedelta(days=1)
        out = [f"* Review {self.start.isoformat()}"
               + (f"--{last.isoformat()}" if last != self.start else "")]
        if self.summary:
            from ..write.markdown_org import model_text_to_org  # a model's sentences

            out += ["- " + " ".join(model_text_to_org(s["text"], parent_level=None).split())
                    for s in self.summary]
        for name, items in (("Done", self.done), ("Journal", self.journal),
                            ("Captured", self.captures), ("Meetings", self.meetings),
                            ("Agent sessions", self.sessions)):
            out.append(f"** {name}")
            out += [f"- {i.when[:10]} {link(i)}" for i in items]
        out.append(f"** Clocked {_hm(self.total)}")
        out.append("| Project | Time |")
        out.append("|-+-|")
        out += [f"| {k.replace('|', '/')} | {_hm(m)} |" for k, m in self.by_project().items()]
        return "\n".join(out) + "\n"

    def chart(self, width: int = 40) -> Any:
        """A rich renderable: clocked time per day and per project as bars."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title=f"Clocked time ({_hm(self.total)})", show_header=False,
                      box=None, pad_edge=False)
        table.add_column("what", no_wrap=True)
        table.add_column("bar", no_wrap=True)
        table.add_column("time", justify="right", no_wrap=True)
        days = self.by_day()
        projects = self.by_project()
        top = max([*days.values(), *projects.values(), 1])
        for d, m in days.items():
            day = dt.date.fromisoformat(d)
            table.add_row(f"{day:%a %d %b}", Text("█" * round(width * m / top), "cyan"),
                          _hm(m))
        table.add_row("", "", "")
        for k, m in projects.items():
            table.add_row(k[:28], Text("█" * round(width * m / top), "green"), _hm(m))
        return table


# -- resolving "my week", "last Tuesday", "since the 1st" --------------------------------
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def resolve_range(text: str, now: dt.datetime) -> tuple[dt.date, dt.date, str] | None:
    """A span of days (start, exclusive end, the phrase) named in ``text``; None if none."""
    from ..recall.cue import resolve_time

    t = text.lower()
    today = now.date()
    week0 = today - dt.timedelta(days=today.weekday())
    m = re.search(r"\b(yesterday|today)\b", t)
    if m:
        day = today - dt.timedelta(days=1 if m.group(1) == "yesterday" else 0)
        return day, day + dt.timedelta(days=1), m.group(1)
    m = re.search(r"\bsince (?:the )?(\d{1,2})(?:st|nd|rd|th)\b", t)
    if m:
        dom = int(m.group(1))  # the day of the month
        start = today.replace(day=1)
        if dom <= 28 or dom <= (today.replace(day=28) + dt.timedelta(days=4)).day:
            try:
                start = today.replace(day=dom)
            except ValueError:
                return None
        if start > today:  # "since the 25th" on the 3rd: last month's 25th
            prev = today.replace(day=1) - dt.timedelta(days=1)
            start = prev.replace(day=min(dom, prev.day))
        return start, today + dt.timedelta(days=1), m.group(0)
    m = re.search(r"\b(?:last|past) (\d+|two|three|four|five|six|seven|ten|fourteen) days\b", t)
    if m:
        words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10,
                 "fourteen": 14}
        n = words.get(m.group(1)) or int(m.group(1))
        return today - dt.timedelta(days=n - 1), today + dt.timedelta(days=1), m.group(0)
    m = re.search(r"\b(my|this|the) week\b", t)
    if m and not re.search(r"\blast week\b", t):
        return week0, week0 + dt.timedelta(days=7), m.group(0)
    m = re.search(r"\b(my|this) month\b", t)
    if m:
        start = today.replace(day=1)
        nxt = (start + dt.timedelta(days=32)).replace(day=1)
        return start, nxt, m.group(0)
    m = re.search(r"\b(last|on|this past|past)? ?(" + "|".join(_WEEKDAYS) + r")\b", t)
    if m:
        wd = _WEEKDAYS.index(m.group(2))
        back = (today.weekday() - wd) % 7
        if back == 0 and m.group(1) in ("last", "this past", "past"):
            back = 7
        day = today - dt.timedelta(days=back)
        return day, day + dt.timedelta(days=1), m.group(0).strip()
    m = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", t)
    if m:
        try:
            day = dt.date.fromisoformat(m.group(1))
        except ValueError:
            return None
        return day, day + dt.timedelta(days=1), m.group(1)
    m = re.search(r"\b(?:on |for )?((?:the )?\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan|feb|mar|apr|"
                  r"may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|(?:jan|feb|mar|apr|may|jun|jul|aug|"
                  r"sep|oct|nov|dec)[a-z]* \d{1,2}(?:st|nd|rd|th)?)(?:,? (\d{4}))?\b", t)
    if m:
        import dateparser

        got = dateparser.parse(m.group(1).replace("the ", "") + (f" {m.group(2)}" if
                                                                  m.group(2) else ""),
                               languages=["en"], settings={
                                   "RELATIVE_BASE": now.replace(tzinfo=None),
                                   "PREFER_DATES_FROM": "past"})
        if got is not None:
            day = got.date()
            return day, day + dt.timedelta(days=1), m.group(0).strip()
    r = resolve_time(t, dt.datetime.combine(today, dt.time(12), now.tzinfo))
    if r is not None and r.phrase in ("yesterday", "today", "last week", "this week",
                                      "last month", "this month", "last year", "this year"):
        return r.start.date(), r.end.date(), r.phrase
    return None


# -- reading the memex --------------------------------------------------------------------
def _ts(raw: str | None) -> dt.datetime | None:
    if not raw:
        return None
    ts = parse_timestamp(raw.strip())
    if ts is None:
        return None
    return ts.start if isinstance(ts.start, dt.datetime) else dt.datetime.combine(
        ts.start, dt.time())


def _first_ts(text: str) -> dt.datetime | None:
    m = _TS_ANY.search(text or "")
    if not m:
        return None
    raw = m.group(0)
    raw = re.sub(r"(\d{1,2}:\d{2})-\d{1,2}:\d{2}", r"\1", raw)  # <… 16:00-16:45>
    return _ts(raw)


def _split_days(a: dt.datetime, b: dt.datetime) -> dict[str, int]:
    out: dict[str, int] = {}
    cur = a
    while cur < b:
        nxt = min(b, dt.datetime.combine(cur.date() + dt.timedelta(days=1), dt.time()))
        out[cur.date().isoformat()] = out.get(cur.date().isoformat(), 0) + int(
            (nxt - cur).total_seconds() // 60)
        cur = nxt
    return out


def review(memex: Memex, start: dt.date, end: dt.date, phrase: str = "",
           hide: Any = None) -> Review:
    """Everything the memex holds for the days ``start`` ≤ day < ``end``.  ``hide(tags)``:
    True for an entry the asking client may not see (left out, its clocks too)."""
    lo = dt.datetime.combine(start, dt.time())
    hi = dt.datetime.combine(end, dt.time())
    rv = Review(start, end, phrase)

    def inside(t: dt.datetime | None) -> TypeGuard[dt.datetime]:
        return t is not None and lo <= t < hi

    nodes = memex.store.all_nodes()
    by_file: dict[str, list[Node]] = {}
    for n in nodes:
        by_file.setdefault(n.file, []).append(n)
    for rel, ns in by_file.items():
        ns.sort(key=lambda n: n.line)
        chain: list[Node] = []
        ancestors: dict[str, list[Node]] = {}
        for n in ns:
            while chain and chain[-1].level >= n.level:
                chain.pop()
            ancestors[n.key] = list(chain)
            chain.append(n)

        def project_of(n: Node, anc: list[Node]) -> str:
            for a in [*anc, n]:
                if "project" in a.local_tags or ((a.category or "").lower() == "project" \
                        and a.level == 1):
                    return a.title
            return n.category or Path(n.file).stem

        session = rel.startswith("sessions/")
        for n in ns:
            if hide is not None and hide(n.tags):
                continue
            anc = ancestors[n.key]
            closed = _ts(n.closed)
            if inside(closed) and n.todo:
                rv.done.append(Item("done", n.title, rel, n.line, closed.isoformat(),
                                    project_of(n, anc), list(n.tags), n.todo))
            created = _ts(n.properties.get("CREATED"))
            if inside(created) and not session:
                rv.captures.append(Item("capture", n.title, rel, n.line, created.isoformat(),
                                        None, list(n.tags), n.todo))
            if session:
                if n.level == 1 and inside(first := _first_ts(n.title)):
                    rv.sessions.append(Item("session", n.title, rel, n.line,
                                            first.isoformat(), None, list(n.tags)))
                continue
            parent = anc[-1] if anc else None
            day = _DAY_HEAD.match(parent.title) if parent is not None else None
            if day is not None:
                try:
                    d = dt.datetime(int(day.group(1)), int(day.group(2)), int(day.group(3)))
                except ValueError:
                    d = None
                if d is not None and inside(d):
                    rv.journal.append(Item("journal", n.title, rel, n.line,
                                           d.date().isoformat(), None, list(n.tags)))
            elif "journal" in n.tags and not _DAY_HEAD.match(n.title):
                d = _first_ts(n.title)
                if inside(d):
                    rv.journal.append(Item("journal", n.title, rel, n.line, d.isoformat(),
                                           None, list(n.tags)))
            if "meeting" in n.tags and not any(_first_ts(a.title) for a in anc
                                               if "meeting" in a.tags):
                t = _first_ts(n.title)  # the meeting's own headline carries its time
                if inside(t):
                    rv.meetings.append(Item("meeting", n.title, rel, n.line, t.isoformat(),
                                            None, list(n.tags)))
        _clocks(memex, rel, ns, ancestors, project_of, lo, hi, rv, hide)
    # the agent's own sessions: one item per session file (its first turn)
    firsts: dict[str, Item] = {}
    for i in sorted(rv.sessions, key=lambda i: (i.file, i.line)):
        firsts.setdefault(i.file, i)
    rv.sessions = list(firsts.values())
    for lst in (rv.done, rv.journal, rv.captures, rv.meetings, rv.sessions):
        lst.sort(key=lambda i: (i.when, i.file, i.line))
    rv.clocks.sort(key=lambda c: (c.start, c.file, c.line))
    return rv


def _clocks(memex: Memex, rel: str, ns: list[Node], ancestors: dict[str, list[Node]],
            project_of: Any, lo: dt.datetime, hi: dt.datetime, rv: Review,
            hide: Any = None) -> None:
    """The CLOCK lines of one file, each under the headline whose section holds it."""
    from ..atomic import read_snapshot

    try:
        text = read_snapshot(Path(memex.root) / rel).text
    except OSError:
        return
    if "CLOCK:" not in text.upper():
        return
    lines = text.split("\n")
    for k, n in enumerate(ns):
        if hide is not None and hide(n.tags):
            continue
        stop = ns[k + 1].line - 1 if k + 1 < len(ns) else len(lines)
        for i in range(n.line, stop):  # n.line is 1-based: lines[n.line] is the next one
            m = _CLOCK.match(lines[i])
            if not m:
                continue
            a, b = _ts(m.group(1)), _ts(m.group(2)) if m.group(2) else None
            if a is None or (m.group(2) and b is None):
                continue
            if b is None:  # running: flagged when it started before the span's end
                if a < hi:
                    rv.clocks.append(Clock(n.title, rel, i + 1, a, None, 0,
                                           project_of(n, ancestors[n.key]), list(n.tags), {}))
                continue
            s, e = max(a, lo), min(b, hi)
            if e <= s:
                continue
            days = _split_days(s, e)
            rv.clocks.append(Clock(n.title, rel, i + 1, a, b, sum(days.values()),
                                   project_of(n, ancestors[n.key]), list(n.tags), days))
