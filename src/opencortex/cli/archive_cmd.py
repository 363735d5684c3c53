"""``opencortex archive``: keep a compressed copy of every transcript recall can read."""

from __future__ import annotations

import click

from .output import common_options, emit, open_memex, progress_bar


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def status_text(st: dict) -> str:
    """The archive's status for a person (the CLI and ``doctor``)."""
    b = st["bytes"]
    lines = [f"{st['dir']}: {st['files']} files ({st['versions']} versions, "
             f"{st['objects']} objects), {_fmt_bytes(b['original'])} archived in "
             f"{_fmt_bytes(b['stored'])}"]
    if st["by_source"]:
        lines.append("  by source: " + ", ".join(f"{k} {n}" for k, n in
                                                 sorted(st["by_source"].items())))
    if st["oldest"]:
        o = st["oldest"]
        lines.append(f"  oldest record: {o['mtime'][:10]} {o['source']} {o['path']}")
    for g in st["gone"]:
        lines.append(f"  originals gone: {g['files']} of {g['source']}:{g['root']} "
                     "(recall reads the archived copies)")
    if st["pruned"]:
        lines.append(f"  pruned by retention: {st['pruned']}")
    if st["bad_lines"]:
        lines.append(f"  {st['bad_lines']} unreadable manifest lines skipped")
    return "\n".join(lines)


@click.command()
@click.option("--source", "sources", multiple=True, metavar="KIND:PATH",
              help="Also archive this transcript root (kinds as for recall). Repeatable.")
@click.option("--no-defaults", is_flag=True,
              help="Do not read the tools' default history locations (~/.claude, ~/.codex…).")
@click.option("--status", "status", is_flag=True,
              help="Only show what the archive holds (counts, bytes, oldest, originals gone).")
@click.option("--prune", "prune_days", type=float, default=None, metavar="DAYS",
              help="Also drop archived records older than DAYS (default: [archive] "
                   "retention_days; 0 = never).")
@click.option("--limit", type=int, default=None, help="Archive at most N files in this pass.")
@common_options
def archive(sources: tuple[str, ...], no_defaults: bool, status: bool,
            prune_days: float | None, limit: int | None, memex: str | None, index: str | None,
            json_: bool) -> None:
    """Copy every new or changed transcript (Claude Code, Codex, Gemini, Aider, OpenCode,
    OpenCortex) into the compressed archive under the XDG data dir, read-only at the
    source; recall reads the copy once the original is deleted."""
    from ..recall.archive import Archive, transcript_roots
    from ..recall.engine import Recall, RecallError, parse_source

    m = open_memex(memex, index)
    try:
        arc = Archive.for_settings(m.settings)
        if status:
            st = arc.status()
            emit(st, json_, lambda: click.echo(status_text(st)))
            return
        try:
            roots = [parse_source(s) for s in sources]
        except RecallError as e:
            raise click.BadParameter(str(e), param_hint="--source") from None
        engine = Recall(m, roots, defaults=False if no_defaults else None, gateway=False)
        todo = transcript_roots(engine)
        days = m.settings.archive_retention_days if prune_days is None else prune_days
        with progress_bar("Archiving transcripts") as bar:
            summary = arc.run(todo, limit=limit, retention_days=days, progress=bar)
    finally:
        m.close()
    out = {**summary.to_dict(), "roots": [str(r) for r in todo], "status": arc.status()}

    def human() -> None:
        s = summary
        click.echo(f"{s.files_seen} transcript files in {len(todo)} roots: {s.archived} "
                   f"archived ({_fmt_bytes(s.bytes_read)} read, {_fmt_bytes(s.bytes_written)} "
                   f"written), {s.deduped} already held, {s.unchanged} unchanged"
                   + (f", {s.deferred} left for the next pass" if s.deferred else "")
                   + (f", {s.gone} originals newly gone" if s.gone else "")
                   + (f", {s.pruned} pruned" if s.pruned else "")
                   + (f", {s.kept_only_copy} past retention kept (the original is gone: "
                      "the archive holds the only copy)" if s.kept_only_copy else "")
                   + f" in {s.seconds:.2f} s")
        for f in s.failed:
            click.echo(f"  failed: {f}", err=True)

    emit(out, json_, human)
