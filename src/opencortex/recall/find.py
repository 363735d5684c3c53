"""From index hits to candidates ("recognizables"): records joined into the cue's whole by
relations the records themselves carry — the same session (a subagent and its parent), the
same working directory or repository and branch, time adjacency, shared terms.

This proposes groups and an order; the order only decides which candidate is opened first.
Grounding (``recall.ground``) decides whether a candidate has a story at all."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from .cue import Cue
from .index import Hit, IndexedRecord, RecordIndex

__all__ = ["MAX_MEMBERS", "TOKEN", "Candidate", "group", "stem", "stems", "term_matches"]

MAX_MEMBERS = 8
"""Records one candidate holds at most (with any span history opened for it): what a
person can take in as one thing."""

TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
"""A word as recall compares words: letters and digits (``cache_ttl`` is two words)."""


@dataclass
class Candidate:
    whole: str
    members: list[IndexedRecord]
    joins: list[str]
    score: float
    matched: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """The candidate by its name and date only (a note's title, never its tags)."""
        head = self.members[0]
        when = head.started.date().isoformat() if head.started else "undated"
        extra = f" (+{len(self.members) - 1} joined)" if len(self.members) > 1 else ""
        return f"«{candidate_name(head)}», {when}{extra}"

    def to_dict(self) -> dict[str, Any]:
        return {"whole": self.whole, "describe": self.describe(),
                "locator": self.members[0].locator, "handle": self.members[0].handle,
                "matched": self.matched}


def candidate_name(rec: IndexedRecord, limit: int = 70) -> str:
    """What a person calls a record: a note's outline title, a session's or commit's title,
    else the first words of its gist — cut between words."""
    from .notetext import render_org, word_cut

    name = render_org(rec.title or "") or render_org(rec.gist.split("\n", 1)[0])
    return word_cut(name, limit).replace(" …", "…")


_SUFFIXES = ("ational", "ations", "ation", "ingly", "ings", "ing", "edly", "ied", "ies",
             "ed", "es", "ly", "er", "s")


def stem(word: str) -> str:
    """A light suffix strip, enough to let "caching" meet "cache" and "fixed" meet "fix"."""
    w = word.lower()
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w.rstrip("e") if len(w) > 3 else w


def stems(text: str) -> set[str]:
    """The stems of a text's words (what ``term_matches`` looks terms up in)."""
    return {stem(w) for w in TOKEN.findall(text.lower())}


def term_matches(term: str, words: set[str]) -> bool:
    """Whether ``term`` (a word, or a phrase/identifier of several) occurs among the stems
    of a text's ``words``."""
    parts = [stem(p) for p in term.replace("_", " ").replace("/", " ").replace(".", " ").split()
             if p]
    return bool(parts) and all(p in words for p in parts)


def _score_of(members: list[IndexedRecord], by_id: dict[int, Hit]) -> tuple[float, list[str]]:
    matched: list[str] = []
    score = 0.0
    for i, m in enumerate(members):
        h = by_id.get(m.id)
        if h is None:
            continue
        score += h.score * (1.0 if i == 0 else 0.35)
        for t in h.matched:
            if t not in matched:
                matched.append(t)
    return score, matched


def _time_gap(a: IndexedRecord, b: IndexedRecord) -> float:
    if not a.started or not b.started:
        return float("inf")
    a_end = (a.ended or a.started).timestamp()
    b_end = (b.ended or b.started).timestamp()
    return max(0.0, max(a.started.timestamp(), b.started.timestamp()) - min(a_end, b_end))


LINE_GAP = dt.timedelta(days=14)
"""A line of work is a succession: records of one place whose times lie at most this far
apart one after the other (a history of years is many lines, not one)."""
LINE_SCORED = 3
"""A line scores by its best few records (not all: a long run of faint hits is no line)."""


def _runs(recs: list[IndexedRecord]) -> list[list[IndexedRecord]]:
    """``recs`` (of one place) cut into runs in time: a gap over ``LINE_GAP`` starts a new
    one; undated records are a run each (nothing says when they were)."""
    dated = sorted((r for r in recs if r.started), key=lambda r: r.started or 0)
    runs: list[list[IndexedRecord]] = []
    for r in dated:
        prev = runs[-1][-1] if runs else None
        if prev is not None and r.started is not None and prev.started is not None and \
                r.started - (prev.ended or prev.started) <= LINE_GAP:
            runs[-1].append(r)
        else:
            runs.append([r])
    return runs + [[r] for r in recs if not r.started]


def group(hits: list[Hit], cue: Cue, index: RecordIndex, scope: set[int],
          limit: int = 8) -> list[Candidate]:
    """Candidates for the cue's whole, best first."""
    by_id = {h.record.id: h for h in hits}
    terms = cue.terms
    out: list[Candidate] = []
    joins: list[str]
    if cue.whole == "line":
        groups: dict[str, list[IndexedRecord]] = {}
        for h in hits[:100]:
            where = h.record.cwd or h.record.root
            groups.setdefault(where, []).append(h.record)
        runs = [(where, run) for where, recs in groups.items() for run in _runs(recs)]
        for where, recs in runs:
            recs = sorted(recs, key=lambda r: by_id[r.id].score, reverse=True)[:MAX_MEMBERS]
            recs.sort(key=lambda r: r.started or dt.datetime.min.replace(tzinfo=dt.UTC))
            branches = {r.branch for r in recs if r.branch}
            joins = [f"same working directory or repository: {where}"] if len(recs) > 1 else []
            if len(branches) == 1 and len(recs) > 1:
                joins.append(f"same branch: {branches.pop()}")
            if len(recs) > 1:
                joins.append("in time order, " + " → ".join(
                    r.started.date().isoformat() for r in recs if r.started))
            score = sum(sorted((by_id[r.id].score for r in recs), reverse=True)[:LINE_SCORED])
            matched = list(dict.fromkeys(t for r in recs for t in by_id[r.id].matched))
            out.append(Candidate("line", recs, joins, score, matched))
    elif cue.whole == "topic":
        used: set[int] = set()
        for h in hits[:40]:
            if h.record.id in used:
                continue
            core = set(h.matched)
            close = [o.record for o in hits[:60] if o.record.id != h.record.id
                     and o.record.id not in used
                     and len(core & set(o.matched)) >= max(1, min(2, len(core)))]
            recs = [h.record, *close[:5]]
            used.update(r.id for r in recs)
            shared = [t for t in terms if all(t in by_id[r.id].matched for r in recs)]
            joins = ([f"each carries {', '.join('«' + t + '»' for t in shared)}"]
                     if len(recs) > 1 and shared else [])
            score, matched = _score_of(recs, by_id)
            out.append(Candidate("topic", recs, joins, score, matched))
    else:
        placed: set[int] = set()
        if cue.whole == "change":  # "the commit where…": commits lead, sessions join them
            hits = sorted(hits, key=lambda h: h.record.kind != "commit")
        for h in hits[:40]:
            rec = h.record
            if rec.id in placed and len(out) >= 1:
                continue
            members = [rec]
            joins = []
            for child in index.children(rec):
                if child.id in scope:
                    members.append(child)
                    joins.append(f"{child.locator} is a subagent of this session")
            if rec.kind == "session":
                for near in index.near(rec, scope):
                    if near.kind == "commit" and _time_gap(rec, near) <= 3 * 3600:
                        members.append(near)
                        joins.append(f"commit {near.session_id} was made in {rec.cwd} within "
                                     "3 h of the session (same directory, time adjacency)")
            elif rec.kind == "commit":
                for near in index.near(rec, scope):
                    if near.kind == "session" and near.id in by_id:
                        members.append(near)
                        joins.append(f"session {near.session_id} ran in {rec.root} within 3 h "
                                     "of the commit (same directory, time adjacency)")
                        break
            members = members[:6]
            placed.update(m.id for m in members)
            score, matched = _score_of(members, by_id)
            whole = "concept" if cue.whole == "concept" else rec.kind  # named as it comes
            out.append(Candidate(whole, members, joins, score, matched))
    out.sort(key=lambda c: -c.score)
    return out[:limit]
