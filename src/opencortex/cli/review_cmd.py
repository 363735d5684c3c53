"""``opencortex review``: what a day, week, month or span held, each item with file:line."""

from __future__ import annotations

import datetime as dt

import click

from .output import common_options, emit, open_memex


def span_of(day: str | None, week: bool, month: bool, start: str | None, end: str | None,
            when: str | None, now: dt.datetime) -> tuple[dt.date, dt.date, str]:
    """The days asked for (start, exclusive end, a phrase); BadParameter says what to fix."""
    from ..insight.review import resolve_range

    def date_of(raw: str, opt: str) -> dt.date:
        try:
            return dt.date.fromisoformat(raw)
        except ValueError:
            got = resolve_range(raw, now)
            if got is None:
                raise click.BadParameter(f"{raw!r} is not a date (YYYY-MM-DD or e.g. "
                                         "'last Tuesday')", param_hint=opt) from None
            return got[0]

    today = now.date()
    if sum(bool(x) for x in (day, week, month, start or end, when)) > 1:
        raise click.UsageError("give one of --day, --week, --month, --from/--to or WHEN")
    if day:
        d = date_of(day, "--day")
        return d, d + dt.timedelta(days=1), d.isoformat()
    if week:
        w0 = today - dt.timedelta(days=today.weekday())
        return w0, w0 + dt.timedelta(days=7), "this week"
    if month:
        m0 = today.replace(day=1)
        return m0, (m0 + dt.timedelta(days=32)).replace(day=1), "this month"
    if start or end:
        a = date_of(start, "--from") if start else today.replace(day=1)
        b = date_of(end, "--to") if end else today
        if b < a:
            raise click.BadParameter("--to is before --from", param_hint="--to")
        return a, b + dt.timedelta(days=1), f"{a.isoformat()} to {b.isoformat()}"
    if when:
        got = resolve_range(when, now)
        if got is None:
            raise click.BadParameter(f"no span of days in {when!r} (try 'last week', "
                                     "'since the 1st', 'last Tuesday')", param_hint="WHEN")
        return got
    w0 = today - dt.timedelta(days=today.weekday())
    return w0, w0 + dt.timedelta(days=7), "this week"


@click.command()
@click.argument("when", required=False)
@click.option("--day", default=None, metavar="DATE", help="One day (YYYY-MM-DD or 'last Tuesday').")
@click.option("--week", is_flag=True, help="This week (Monday to Sunday; the default).")
@click.option("--month", is_flag=True, help="This month.")
@click.option("--from", "start", default=None, metavar="DATE", help="First day of a span.")
@click.option("--to", "end", default=None, metavar="DATE", help="Last day of a span.")
@click.option("--org", "org", is_flag=True, help="Print an Org subtree (links to each item).")
@click.option("--chart/--no-chart", default=True, help="Bars of clocked time per day/project.")
@click.option("--summary", is_flag=True,
              help="Add a prose summary from the configured model (each sentence cites items).")
@click.option("--now", default=None, help="Resolve dates against this day (YYYY-MM-DD).")
@common_options
def review(when: str | None, day: str | None, week: bool, month: bool, start: str | None,
           end: str | None, org: bool, chart: bool, summary: bool, now: str | None,
           memex: str | None, index: str | None, json_: bool) -> None:
    """What was done (CLOSED), clocked time per project and tag (CLOCK lines), journal
    entries, captures, meetings and agent sessions of a span — e.g. `review --week`,
    `review "last Tuesday"`, `review --from 2026-11-01 --to 2026-11-15`."""
    from ..insight.review import review as run_review
    from ..insight.review_summary import summarise

    base = dt.datetime.fromisoformat(now) if now else dt.datetime.now()
    a, b, phrase = span_of(day, week, month, start, end, when, base)
    m = open_memex(memex, index)
    try:
        m.sync()
        rv = run_review(m, a, b, phrase)
        if summary:
            summarise(rv, m.settings)
    finally:
        m.close()
    if org and not json_:
        click.echo(rv.render_org(), nl=False)
        return

    def human() -> None:
        click.echo(rv.render_text())
        if chart and rv.clocks:
            from rich.console import Console

            click.echo()
            Console().print(rv.chart())

    emit(rv.to_dict() | ({"org": rv.render_org()} if org else {}), json_, human)
