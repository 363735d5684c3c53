"""The review skill: "what did I do last Tuesday?", "my week", "since the 1st" — the router's
``review`` target (or ``/review WHEN``) becomes a review of those days from the memex
(``insight.review``): done, clocked time, journal, captures, meetings, agent sessions, each
with file:line. With a model configured, a summary whose every sentence cites items."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .base import Action, Context, Proposal, Rejection, Skill

__all__ = ["TARGET", "skill", "span_for"]

TARGET = "review"


def _trigger(ctx: Context) -> bool:
    s = ctx.signal
    if s.sensor == "delegation":
        return s.payload.get("target") == TARGET
    return s.type == "request" and ctx.text.lstrip().lower().startswith("/review")


def span_for(text: str, now: dt.datetime) -> tuple[dt.date, dt.date, str]:
    """The days a request names; this week when it names none."""
    from ..insight.review import resolve_range

    got = resolve_range(text, now)
    if got is not None:
        return got
    w0 = now.date() - dt.timedelta(days=now.weekday())
    return w0, w0 + dt.timedelta(days=7), "this week"


def _offline(ctx: Context) -> Proposal:
    from ..insight.review import review
    from ..insight.review_summary import summarise
    from .gtd import now_of

    p = ctx.signal.payload
    text = " ".join(str(p.get(k) or "") for k in ("when", "query", "text")).strip() \
        or ctx.text.lstrip().removeprefix("/review")
    a, b, phrase = span_for(text, now_of(ctx))
    from ..access import Access

    rv = review(ctx.memex, a, b, phrase,
                hide=Access.for_signal(ctx.memex, ctx.signal.meta).hide)  # sender's privacy
    summarise(rv, ctx.memex.settings)
    cites = [i.where for i in rv.items] + [f"{c.file}:{c.line}" for c in rv.clocks]
    return {"action": "reply", "text": rv.render_text(),
            "data": {"review": rv.to_dict(), "citations": cites}}


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") != "reply":
        return None
    text = str(p.get("text") or "").strip()
    if not text:
        return Rejection("an empty reply")
    data: Any = p.get("data")
    return Action("reply", {"text": text, "data": data}, origin=TARGET)


def skill() -> Skill:
    # above the router (90) for the explicit /review; the router delegates "review" intents
    return Skill("review", 92, trigger=_trigger, offline=_offline, symbolic=_symbolic,
                 tools=["reply"],
                 description="A review of a day, week, month or span: done, clocked time, "
                             "journal, captures, meetings, sessions — each with file:line.")
