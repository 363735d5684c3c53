"""``opencortex sessions``: where the agent's own conversation records live, moving old
ones out of the memex (``migrate``, undoable) and pruning by retention."""

from __future__ import annotations

import click

from .output import cli_settings, common_options, emit


@click.group()
def sessions() -> None:
    """The agent's own conversation records (never your notes): where they live
    ([sessions] dir, default under the XDG data dir), migrate, prune."""


def sessions_status(s) -> dict:  # s: Settings
    from ..sessions.migrate import legacy_records
    from ..sessions.recorder import record_files

    files = record_files(s.sessions_path)
    return {"dir": str(s.sessions_path), "record": s.sessions.record,
            "in_memex": s.record_folder is not None,
            "retention_days": s.sessions.retention_days, "records": len(files),
            "bytes": sum(p.stat().st_size for p in files),
            "legacy_in_memex": len(legacy_records(s))}


def status_text(st: dict) -> str:
    """One line for a person (the CLI and ``doctor``)."""
    keep = (f"kept {st['retention_days']:g} days" if st["retention_days"]
            else "kept forever")
    where = "a folder of the memex, never indexed as notes" if st["in_memex"] else \
        "outside the memex"
    head = (f"{st['dir']} ({where}): {st['records']} records, {keep}"
            + ("" if st["record"] else "; recording is off ([sessions] record = false)"))
    if st["legacy_in_memex"]:
        head += (f"; {st['legacy_in_memex']} old records still in the memex's sessions/ "
                 "(run `opencortex sessions migrate`)")
    return head


@sessions.command("status")
@common_options
def status_cmd(memex: str | None, index: str | None, json_: bool) -> None:
    """Where records live, how many, how long they are kept."""
    st = sessions_status(cli_settings(memex, index))
    emit(st, json_, lambda: click.echo(status_text(st)))


@sessions.command("migrate")
@click.option("--dry-run", is_flag=True, help="Only say what would move.")
@click.option("--undo", "undo", is_flag=True,
              help="Put back the records the last migration moved.")
@click.option("--manifest", default=None, metavar="FILE",
              help="With --undo: the migration to undo (default: the latest).")
@common_options
def migrate_cmd(dry_run: bool, undo: bool, manifest: str | None, memex: str | None,
                index: str | None, json_: bool) -> None:
    """Move session records of the old layout (<memex>/sessions/YYYY/MM/) to the sessions
    folder: copied, verified, then deleted; listed in a manifest so --undo puts them back."""
    from ..sessions.migrate import migrate, undo_migration

    s = cli_settings(memex, index)
    rep = undo_migration(s, manifest) if undo else migrate(s, dry_run=dry_run)
    out = rep.to_dict()

    def human() -> None:
        verb = ("would move" if dry_run else "moved back" if undo else "moved")
        click.echo(f"{verb} {rep.moved} records from {rep.source} to {rep.target}"
                   + (f" ({rep.already_there} were already there)" if rep.already_there
                      else ""))
        for r in rep.renamed:
            click.echo(f"  renamed (name taken): {r}")
        for r in rep.left:
            click.echo(f"  left: {r}")
        if rep.manifest and not undo:
            click.echo(f"undo with: opencortex sessions migrate --undo --manifest "
                       f"{rep.manifest}")

    emit(out, json_, human)


@sessions.command("prune")
@common_options
def prune_cmd(memex: str | None, index: str | None, json_: bool) -> None:
    """Delete records older than [sessions] retention_days now (the recorder also does
    this once a day)."""
    from ..sessions.recorder import SessionRecorder

    s = cli_settings(memex, index)
    rec = SessionRecorder(s.sessions_path, retention_days=s.sessions.retention_days)
    gone = rec.prune()
    emit({"deleted": [str(p) for p in gone]}, json_,
         lambda: click.echo(f"deleted {len(gone)} records older than "
                            f"{s.sessions.retention_days:g} days from {s.sessions_path}"))
