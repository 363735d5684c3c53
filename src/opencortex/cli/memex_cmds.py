"""Reading commands: index, query, agenda, projects."""

from __future__ import annotations

import datetime as dt

import click

from .output import common_options, emit, open_memex, print_nodes, progress_bar


@click.command()
@click.option("--rebuild", is_flag=True, help="Delete the index first and build it anew.")
@click.option("--workers", type=int, default=None, help="Parser processes (default: CPUs-1).")
@click.option("--embed", is_flag=True,
              help="Also embed new/changed nodes for semantic search (incremental).")
@common_options
def index(memex: str | None, index: str | None, json_: bool, rebuild: bool,
          workers: int | None, embed: bool) -> None:
    """Sync the memex into its index (only changed files are re-parsed)."""
    import shutil

    from ..retrieval.hybrid import Retriever

    m = open_memex(memex, index)
    if rebuild and m.settings.store_url:
        m.store.clear()  # PostgreSQL: empty the index; journal and shared vectors stay
    elif rebuild:
        p = m.settings.index_path
        for suffix in ("", "-wal", "-shm"):
            q = p.with_name(p.name + suffix)
            if q.exists():
                q.unlink()
        for suffix in (".tantivy", ".vectors"):
            shutil.rmtree(p.with_name(p.name + suffix), ignore_errors=True)
    r = Retriever(m)
    with m:
        with progress_bar("indexing") as bar:
            s = m.sync(progress=bar, workers=workers)
        with progress_bar("keyword index") as bar:
            kw = r.keyword.sync(m.store, progress=bar)
        d = s.to_dict()
        d["keyword_files"] = kw
        if embed:
            with progress_bar("embedding") as bar:
                d["embedded"] = r.vectors.embed_pending(lambda t: r.embedder.embed(t),
                                                        progress=bar)
            st = r.vectors.status()
            d["vectors"] = {"model": st.model, "dim": st.dim, "embedded": st.embedded,
                            "pending": st.pending}
    if m.settings.store_url:
        from ..memory.pg_store import redact_url

        d["index"] = f"{redact_url(m.settings.store_url)}#{m.settings.store_schema}"
    else:
        d["index"] = str(m.settings.index_path)

    def human() -> None:
        click.echo(f"{s.files} files, {s.nodes} nodes: +{s.added} added, {s.changed} changed, "
                   f"-{s.removed} removed, {s.skipped} skipped, {s.errors} with errors "
                   f"({s.seconds:.2f}s)")
        if embed:
            v = d["vectors"]
            click.echo(f"embedded {d['embedded']} new texts; {v['embedded']}/"
                       f"{v['embedded'] + v['pending']} nodes have {v['model']} vectors")
        for p in s.problems[:20]:
            click.echo(f"  {p}", err=True)

    emit(d, json_, human)


def _today(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


@click.command()
@click.argument("expr", nargs=-1, required=True)
@click.option("--limit", type=int, default=None)
@click.option("--body", is_flag=True, help="Include each node's body.")
@click.option("--today", default=None, help="Pretend today is YYYY-MM-DD (for date filters).")
@click.option("--no-sync", is_flag=True, help="Query the index as is, without syncing first.")
@common_options
def query(expr: tuple[str, ...], limit: int | None, body: bool, today: str | None,
          no_sync: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """Find nodes:  todo:TODO,NEXT  done  tags:a,b  heading:w  scheduled:today|+7|-7
    deadline:...  closed:-7  id:X  file:PAT  prop:K=V  priority:A  level:N  words.
    """
    with open_memex(memex, index) as m:
        if not no_sync:
            m.sync()
        nodes = m.query(" ".join(expr), limit=limit, today=_today(today), with_body=body)
    emit({"count": len(nodes), "nodes": [n.to_dict(with_body=body) for n in nodes]}, json_,
         lambda: print_nodes(nodes))


@click.command()
@click.option("--days", type=int, default=7, show_default=True)
@click.option("--today", default=None, help="Pretend today is YYYY-MM-DD.")
@common_options
def agenda(days: int, today: str | None, memex: str | None, index: str | None,
           json_: bool) -> None:
    """Scheduled items and deadlines ahead, overdue items, next actions, recently done."""
    with open_memex(memex, index) as m:
        m.sync()
        t = _today(today)
        view = m.agenda(today=t, days=days)
        view["done"] = m.recently_done(limit=10, days=days, today=t)
    data = {k: [n.to_dict() for n in v] for k, v in view.items()}

    def human() -> None:
        titles = {"overdue": "Overdue", "scheduled": f"Scheduled (next {days} days)",
                  "deadlines": f"Deadlines (next {days} days)", "next": "Next actions",
                  "done": f"Done (last {days} days)"}
        for k in ("overdue", "scheduled", "deadlines", "next", "done"):
            click.echo(click.style(titles[k], bold=True))
            print_nodes(view[k])
            if not view[k]:
                click.echo("  (none)")

    emit(data, json_, human)


@click.command()
@click.option("--next", "with_next", is_flag=True, help="List each project's next actions.")
@common_options
def projects(with_next: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """Active projects (tag :project: or category Project, not done)."""
    with open_memex(memex, index) as m:
        m.sync()
        ps = m.active_projects()
        from ..memory import views

        nxt = {p.key: views.next_actions(m.store, p) for p in ps} if with_next else {}
    data = [{**p.to_dict(), **({"next": [n.to_dict() for n in nxt[p.key]]} if with_next else {})}
            for p in ps]

    def human() -> None:
        for p in ps:
            print_nodes([p])
            for n in nxt.get(p.key, []):
                click.echo("    " + f"{n.todo} {n.title}  ({n.file}:{n.line})")

    emit(data, json_, human)
