"""Writing commands: capture, todo, priority, set-property, tag, schedule, deadline, append,
new-note, undo, history.  Each re-reads the file, edits only the entry's bytes, writes
atomically, and can be undone."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import click

from .output import common_options, emit, open_memex


def _access(m: Any) -> Any:
    """The person's door to the memex (confinement and validation; they see everything)."""
    from ..access import Access

    return Access(m, "cli")


def _report(results: list, json_: bool) -> None:
    data = [r.to_dict() for r in results]

    def human() -> None:
        for r in results:
            mark = "" if r.changed else " (nothing to do)"
            jid = f" [#{r.journal_id}]" if r.journal_id and r.op != "undo" else ""
            click.echo(f"{r.file}: {r.description}{mark}{jid}")

    emit(data[0] if len(data) == 1 and results[0].op != "undo" else data, json_, human)


def parse_when(value: str, now: dt.datetime | None = None) -> dt.date | dt.datetime | None:
    """YYYY-MM-DD, 'YYYY-MM-DD HH:MM', today, tomorrow, +Nd/+Nw/+Nm, none
    (:func:`opencortex.schema.when`, as MCP clients send them)."""
    from ..schema import ValidationError, when

    try:
        return when(value, now)
    except ValidationError as e:
        raise click.BadParameter(str(e)) from None


@click.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--to", "to", default=None,
              help="A file (inbox.org) or a node (ID, FILE::Outline/Title) to file it under.")
@click.option("--todo", "todo_", default=None, help="Make it a task with this keyword.")
@click.option("--tag", "tags", multiple=True, help="Tag the entry (repeatable).")
@common_options
def capture(text: tuple[str, ...], to: str | None, todo_: str | None, tags: tuple[str, ...],
            memex: str | None, index: str | None, json_: bool) -> None:
    """Capture a new entry (with :ID: and :CREATED:)."""
    with open_memex(memex, index) as m:
        m.sync()
        _report([_access(m).capture(" ".join(text), to=to, todo=todo_, tags=list(tags))],
                json_)


@click.command()
@click.argument("node")
@click.argument("state")
@common_options
def todo(node: str, state: str, memex: str | None, index: str | None, json_: bool) -> None:
    """Set a node's TODO state (DONE adds CLOSED; 'none' clears the keyword)."""
    with open_memex(memex, index) as m:
        m.sync()
        _report([m.set_todo(node, state)], json_)


@click.command()
@click.argument("node")
@click.argument("level", metavar="A|B|C|none")
@common_options
def priority(node: str, level: str, memex: str | None, index: str | None, json_: bool) -> None:
    """Set the node's priority cookie ([#A]); 'none' removes it."""
    if not re.fullmatch(r"(?i)[a-z0-9]|none", level.strip()):
        raise click.BadParameter(f"{level!r}: use A, B, C (any letter Org accepts) or none")
    with open_memex(memex, index) as m:
        m.sync()
        _report([m.set_priority(node, None if level.lower() == "none" else level.upper())],
                json_)


@click.command("set-property")
@click.argument("node")
@click.argument("key")
@click.argument("value", required=False)
@click.option("--delete", is_flag=True, help="Remove the property.")
@common_options
def set_property(node: str, key: str, value: str | None, delete: bool, memex: str | None,
                 index: str | None, json_: bool) -> None:
    """Set (or --delete) a property in the node's drawer."""
    if value is None and not delete:
        raise click.UsageError("give a VALUE, or --delete to remove the property")
    with open_memex(memex, index) as m:
        m.sync()
        _report([m.set_property(node, key, None if delete else value, person=True)], json_)


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("node")
@click.argument("changes", nargs=-1, required=True)
@common_options
def tag(node: str, changes: tuple[str, ...], memex: str | None, index: str | None,
        json_: bool) -> None:
    """Add (+tag) or remove (-tag) local tags:  opencortex tag NODE +urgent -someday"""
    with open_memex(memex, index) as m:
        m.sync()
        _report([m.tag(node, list(changes))], json_)


def _date_command(kind: str):
    @click.command(kind, context_settings={"ignore_unknown_options": True})
    @click.argument("node")
    @click.argument("date")
    @click.option("--repeat", default=None, help="Repeater, e.g. +1w, ++1d, .+1m.")
    @common_options
    def cmd(node: str, date: str, repeat: str | None, memex: str | None, index: str | None,
            json_: bool) -> None:
        from ..schema import ValidationError, repeater

        try:
            repeater(repeat)
        except ValidationError as e:
            raise click.BadParameter(str(e)) from None
        when = parse_when(date)
        with open_memex(memex, index) as m:
            m.sync()
            fn = m.schedule if kind == "schedule" else m.deadline
            _report([fn(node, when, repeat)], json_)

    cmd.help = (f"Set the node's {'SCHEDULED' if kind == 'schedule' else 'DEADLINE'} date "
                "(YYYY-MM-DD, 'YYYY-MM-DD HH:MM', today, tomorrow, +3d, +1w; none removes).")
    return cmd


schedule = _date_command("schedule")
deadline = _date_command("deadline")


@click.command()
@click.argument("node")
@click.argument("text", nargs=-1, required=True)
@common_options
def append(node: str, text: tuple[str, ...], memex: str | None, index: str | None,
           json_: bool) -> None:
    """Append text to the end of a node's own section."""
    with open_memex(memex, index) as m:
        m.sync()
        _report([_access(m).append(node, " ".join(text))], json_)


@click.command("new-note")
@click.argument("title", nargs=-1, required=True)
@click.option("--body", default="", help="The note's first paragraph.")
@click.option("--tag", "tags", multiple=True)
@common_options
def new_note(title: tuple[str, ...], body: str, tags: tuple[str, ...], memex: str | None,
             index: str | None, json_: bool) -> None:
    """Create an atomic note (its own file, with an ID) in the notes folder."""
    with open_memex(memex, index) as m:
        m.sync()
        _report([m.new_note(" ".join(title), body, list(tags))], json_)


@click.command()
@click.argument("count", type=int, default=1)
@common_options
def undo(count: int, memex: str | None, index: str | None, json_: bool) -> None:
    """Undo the last COUNT writes (refuses if a file changed since)."""
    with open_memex(memex, index) as m:
        res = m.undo(count)
    if not res and not json_:
        click.echo("nothing to undo")
        return
    _report(res, json_)


@click.command()
@click.option("--limit", type=int, default=20)
@click.option("--all", "all_", is_flag=True, help="Include undone writes.")
@common_options
def history(limit: int, all_: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """The journal of writes OpenCortex made (what `undo` would revert)."""
    with open_memex(memex, index) as m:
        rows = m.store.journal(limit=limit, include_undone=all_)
    data = [{"id": r.id, "at": dt.datetime.fromtimestamp(r.at).isoformat(timespec="seconds"),
             "op": r.op, "description": r.description, "path": r.path,
             "undone": r.undone_at is not None} for r in rows]

    def human() -> None:
        for d in data:
            flag = " (undone)" if d["undone"] else ""
            click.echo(f"#{d['id']} {d['at']} {d['op']}: {d['description']}{flag}")

    emit(data, json_, human)
