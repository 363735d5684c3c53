"""Retrieval commands: scan (live ripgrep), search (sparse/dense/hybrid), read (deep)."""

from __future__ import annotations

import click

from .output import answer_jsonl, cli_settings, common_options, emit, open_memex


@click.command()
@click.argument("query")
@click.option("--regex", is_flag=True, help="QUERY is a regular expression (default: plain text).")
@click.option("-i", "--ignore-case", is_flag=True, default=None,
              help="Case-insensitive (default: smart case).")
@click.option("--limit", type=int, default=100, show_default=True,
              help="At most this many headlines (0: all).")
@common_options
def scan(query: str, regex: bool, ignore_case: bool | None, limit: int | None,
         memex: str | None, index: str | None, json_: bool) -> None:
    """Live scan of the memex files (no index): matching headlines with ID and outline."""
    from ..retrieval.scan import scan as run_scan

    s = cli_settings(memex, index)
    hits = run_scan(s.memex, query, regex=regex, ignore_case=ignore_case,
                    limit=limit or None, exclude=s.record_filter())

    def human() -> None:
        for h in hits:
            where = click.style(f"{h.file}:{h.line or 1}", fg="cyan")
            idt = f"  id:{h.id}" if h.id else ""
            click.echo(f"{where}  {' / '.join(h.outline) or '(before first headline)'}{idt}")
            for m in h.matches[:3]:
                click.echo(f"    {m['line']}: {m['text'].strip()[:120]}")

    emit({"hits": [h.to_dict() for h in hits]}, json_, human)


@click.command()
@click.argument("query", required=False)
@click.option("--mode", type=click.Choice(["sparse", "dense", "hybrid"]), default=None,
              help="Default: hybrid when vectors exist, else sparse.")
@click.option("-k", "k", type=int, default=10, show_default=True)
@click.option("--queries", type=click.File("r"), default=None,
              help="JSON lines with a 'query' field: one JSON result line per query.")
@click.option("--filter", "filters", default=None,
              help="Structured filters as in `opencortex query` (e.g. 'todo tags:work').")
@click.option("--no-sync", is_flag=True, help="Search the index as is.")
@common_options
def search(query: str | None, mode: str | None, k: int, queries, filters: str | None,
           no_sync: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """Ranked search: BM25 (sparse), embeddings (dense) or both fused (hybrid)."""
    from ..retrieval.hybrid import Retriever

    if not query and queries is None:
        raise click.UsageError("give a QUERY or --queries FILE")
    r = Retriever(open_memex(memex, index))
    try:
        if not no_sync:
            r.memex.sync()
        if queries is not None:
            answer_jsonl(queries, "query", lambda q: r.search(q, mode, k, filters).to_dict())
            return
        res = r.search(query or "", mode, k, filters)
    finally:
        r.close()

    def human() -> None:
        for note in res.notes:
            click.echo(click.style(note, fg="yellow"), err=True)
        for i, h in enumerate(res.hits, 1):
            where = click.style(f"{h.file}:{h.line}", fg="cyan")
            click.echo(f"{i:>2}. {where}  {' / '.join(h.outline)}  ({h.score:.3f})")
            if h.match_line and h.match_line != h.line:  # `opencortex read FILE:LINE`
                click.echo(f"      matched passage: {h.file}:{h.match_line}")
            if h.snippet:
                click.echo(f"      {h.snippet}")

    emit(res.to_dict(), json_, human)


@click.command()
@click.argument("nodes", nargs=-1, required=True)
@click.option("--depth", type=int, default=1, show_default=True, help="Link hops to follow.")
@click.option("--budget", type=int, default=4000, show_default=True, help="Token budget.")
@common_options
def read(nodes: tuple[str, ...], depth: int, budget: int, memex: str | None,
         index: str | None, json_: bool) -> None:
    """Full text of NODES (subtrees), following their links within a token budget."""
    from ..access import Access

    with open_memex(memex, index) as m:
        m.sync()
        res = Access(m, "cli").read(list(nodes), depth=depth, budget=budget)

    def human() -> None:
        for n in res.nodes:
            via = f" (linked from {n.via})" if n.via else ""
            click.echo(click.style(f"── {n.file}:{n.line} {' / '.join(n.outline)}{via}",
                                   bold=True))
            click.echo(n.text.rstrip())
            if n.backlinks:
                click.echo("   backlinks: " + "; ".join(b["title"] or b["key"]
                                                          for b in n.backlinks))
        click.echo(f"── {res.used}/{res.budget} tokens", err=True)
        for o in res.omitted:
            click.echo(f"   left out: {o.get('title') or o['key']} ({o['reason']}"
                       f"{', ' + str(o['tokens']) + ' tokens' if 'tokens' in o else ''})",
                       err=True)

    emit(res.to_dict(), json_, human)
