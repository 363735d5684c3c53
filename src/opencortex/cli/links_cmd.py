"""``opencortex links``: which notes should link to the one you are on."""

from __future__ import annotations

import click

from .output import common_options, emit, open_memex


@click.group()
def links() -> None:
    """Links between notes."""


@links.command("suggest")
@click.argument("node")
@click.option("-k", "k", type=int, default=5, show_default=True, help="How many suggestions.")
@click.option("--apply", "apply_n", type=int, default=None, metavar="N",
              help="Add an id: link from NODE to suggestion N (as last listed).")
@common_options
def suggest(node: str, k: int, apply_n: int | None, memex: str | None, index: str | None,
            json_: bool) -> None:
    """Notes close in meaning to NODE (an ID, FILE:LINE, key or title) that neither link to
    it nor are linked from it, each with the passage that makes them close; --apply N links
    one (creating its ID if needed; undo with `opencortex undo`)."""
    from ..insight import links_suggest

    m = open_memex(memex, index)
    try:
        m.sync()
        if apply_n is not None:
            out = links_suggest.apply(m, node, apply_n, k)
            emit(out, json_, lambda: click.echo(
                f"Linked {out['node']} -> [[id:{out['linked']['id']}]] "
                f"({out['linked']['title']}); {len(out['writes'])} write(s), undo with "
                f"`opencortex undo {len(out['writes'])}`"))
            return
        n, found = links_suggest.suggest(m, node, k)
    finally:
        m.close()

    def human() -> None:
        click.echo(f"Notes close to “{n.title}” ({n.file}:{n.line}) that do not link with it:")
        for i, s in enumerate(found, 1):
            click.echo(f"{i}. {s.title}  ({s.file}:{s.line}, {s.score:.2f})")
            click.echo(f"     “{s.passage[:160]}” ({s.file}:{s.passage_line})")
        if found:
            click.echo(click.style(f"(link one with: opencortex links suggest {node!r} "
                                   "--apply N)", dim=True), err=True)

    emit({"node": {"key": n.key, "title": n.title, "file": n.file, "line": n.line},
          "suggestions": [s.to_dict() for s in found]}, json_, human)
