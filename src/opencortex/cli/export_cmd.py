"""``opencortex export``: the parse of every file, for other tools and fidelity checks."""

from __future__ import annotations

import json

import click

from .output import common_options


@click.command()
@click.option("--format", "fmt", type=click.Choice(["orgfid", "nodes"]), default="orgfid",
              show_default=True,
              help="orgfid: the parser's view in the orgfid schema (compare with Emacs); "
                   "nodes: the index's nodes as JSON lines.")
@common_options
def export(fmt: str, memex: str | None, index: str | None, json_: bool) -> None:
    """Print JSON lines for every .org file under the memex (paths relative to it)."""
    from .output import cli_settings

    settings = cli_settings(memex, index)
    root = settings.memex.expanduser().resolve()
    if fmt == "orgfid":
        from ..memory.incremental import iter_org_files
        from ..org.orgfid import dump

        for rel, _ in sorted(iter_org_files(root)):
            try:
                recs = dump(str(root / rel))
            except Exception as e:  # a file that cannot be read: say so, go on
                recs = [{"type": "file", "error": f"{type(e).__name__}: {e}"}]
            for r in recs:
                r["file"] = rel
                click.echo(json.dumps(r, ensure_ascii=False))
        return
    from ..memex import Memex

    with Memex(settings=settings) as m:
        m.sync()
        for n in m.store.all_nodes(with_body=True):
            click.echo(json.dumps(n.to_dict(with_body=True), ensure_ascii=False))
