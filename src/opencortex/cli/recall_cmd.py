"""``opencortex recall``: vague recall of past work as a dialogue, one round per call."""

from __future__ import annotations

import datetime as dt

import click

from .output import common_options, emit, open_memex, progress_bar


@click.command()
@click.argument("cue", required=False)
@click.option("--source", "sources", multiple=True, metavar="KIND:PATH",
              help="Also search this root (kinds: claude-code, codex, gemini, aider, opencode, "
                   "opencortex, git, notes). Repeatable.")
@click.option("--session", default=None, help="Continue this recall (with --reply).")
@click.option("--reply", default=None, help="Your next utterance in the recall --session.")
@click.option("--no-defaults", is_flag=True,
              help="Do not read the tools' default history locations (~/.claude, ~/.codex…).")
@click.option("--index-only", "index_only", is_flag=True,
              help="Only bring the record index up to date (with a progress bar).")
@click.option("--now", default=None, hidden=True,
              help="Resolve time expressions against this ISO time (reproducible runs).")
@common_options
def recall(cue: str | None, sources: tuple[str, ...], session: str | None, reply: str | None,
           no_defaults: bool, index_only: bool, now: str | None, memex: str | None,
           index: str | None, json_: bool) -> None:
    """Recall past work you cannot name: "that session a few weeks ago where we fixed the
    flaky login test". Prints one round (a story citing opened records, a question, or an
    offer to search wider); answer with --session ID --reply TEXT."""
    from ..recall.engine import Recall, RecallError, parse_source, session_boundary

    if session and reply is None:
        raise click.UsageError("--session needs --reply TEXT (your next utterance)")
    if not session and not cue and not index_only:
        raise click.UsageError("give a CUE (what you remember), or --session ID --reply TEXT")
    when = dt.datetime.fromisoformat(now) if now else None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    if session and memex is None:
        # the session keeps its boundary: the memex (and its index) it was started on
        try:
            kept = session_boundary(session)
        except RecallError as e:
            raise click.ClickException(str(e)) from None
        memex = kept["memex"] or memex
        if index is None and kept["memex"]:
            index = kept["index"]
    m = open_memex(memex, index)
    try:
        try:
            roots = [parse_source(s) for s in sources]
        except RecallError as e:
            raise click.BadParameter(str(e), param_hint="--source") from None
        engine = Recall(m, roots, defaults=False if no_defaults else None)
        with progress_bar("Indexing records") as bar:
            engine.progress = bar
            if index_only:
                summary = engine.refresh()
                emit(summary.to_dict(), json_, lambda: click.echo(
                    f"{summary.files_read} files read, {summary.records_added} records, "
                    f"{summary.commits_added} commits, {summary.notes_added} notes, "
                    f"{summary.removed} removed, {summary.embedded} embedded in "
                    f"{summary.seconds:.2f} s (reading {summary.read_seconds:.2f} s, embedding "
                    f"{summary.embed_seconds:.2f} s)"
                    + "".join(f"\n  failed: {f}" for f in summary.failed)))
                return
            rnd = (engine.reply(session, reply) if session else
                   engine.start(cue or "", invoked=True, now=when))
    finally:
        m.close()

    def human() -> None:
        click.echo(rnd.render())
        if rnd.state in ("presented", "asked", "offered"):
            click.echo(click.style(f"\n(answer with: opencortex recall --session {rnd.session}"
                                   " --reply '…')", dim=True), err=True)

    emit(rnd.to_dict(), json_, human)
