"""``opencortex context``: print exactly what a model would see before it answers."""

from __future__ import annotations

import datetime as dt

import click

from .output import common_options, emit, open_memex


def _parse_now(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError as e:
        raise click.BadParameter(f"not an ISO date/time: {value!r}", param_hint="--now") from e


@click.command("context")
@click.option("--focus", "focus", default=None, metavar="NODE",
              help="The node you are on: ID, FILE::Outline, FILE:LINE or exact title.")
@click.option("--query", "query", default=None, metavar="TEXT",
              help="What the request is about (finds related notes).")
@click.option("--budget", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Token budget for the whole context.")
@click.option("--remote", is_flag=True,
              help="Assemble for a remote model: privacy-tagged notes are withheld.")
@click.option("--now", "now", default=None, metavar="ISO",
              help="Pretend it is this time (e.g. 2026-11-30T12:00); default: now.")
@common_options
def context(focus: str | None, query: str | None, budget: int, remote: bool, now: str | None,
            memex: str | None, index: str | None, json_: bool) -> None:
    """The assembled context (focus, agenda, related notes, projects …) within a budget."""
    from ..context import assemble

    when = _parse_now(now)
    with open_memex(memex, index) as m:
        m.sync()
        ctx = assemble(m, focus=focus, query=query, budget=budget, remote=remote, now=when)

    def human() -> None:
        click.echo(ctx.text, nl=False)
        for note in ctx.notes:
            click.echo(click.style(note, fg="yellow"), err=True)
        click.echo(f"── {ctx.tokens}/{ctx.budget} tokens", err=True)

    emit(ctx.to_dict(), json_, human)
