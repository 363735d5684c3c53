"""Reading commands: index, query, agenda, projects."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from .output import common_options, emit, open_memex, print_nodes, progress_bar

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.agenda import Agenda


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
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError as e:
        raise click.BadParameter(f"{value!r} is not a date: write YYYY-MM-DD",
                                 param_hint="--today") from e


class _TermsCommand(click.Command):
    """A command whose words are query terms even when they begin with ``-``
    (``-todo:DONE``, ``-done``): a token that is not one of the command's options is a
    term wherever it stands, and ``--`` only separates (options after it stay options,
    never silently search words)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: dict[str, bool] = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Option):
                for o in [*p.opts, *p.secondary_opts]:
                    takes_value[o] = not (p.is_flag or p.count)
        opts: list[str] = []
        terms: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            name = a.split("=", 1)[0]
            if a == "--":
                pass
            elif name in takes_value:
                opts.append(a)
                if takes_value[name] and "=" not in a and i + 1 < len(args):
                    i += 1
                    opts.append(args[i])
            elif a.startswith("--") and len(a) > 2:
                opts.append(a)  # a mistyped long option: click names it, never a term
            else:
                terms.append(a)
            i += 1
        return super().parse_args(ctx, [*opts, "--", *terms])


@click.command(cls=_TermsCommand)
@click.argument("expr", nargs=-1, required=True)
@click.option("--limit", type=int, default=None)
@click.option("--body", is_flag=True, help="Include each node's body.")
@click.option("--today", default=None, help="Pretend today is YYYY-MM-DD (for date filters).")
@click.option("--no-sync", is_flag=True, help="Query the index as is, without syncing first.")
@common_options
def query(expr: tuple[str, ...], limit: int | None, body: bool, today: str | None,
          no_sync: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """Find nodes:  todo:TODO,NEXT  done  tags:a,b  heading:w  scheduled:today|+7|-7
    deadline:...  closed:-7  id:X  file:PAT  prop:K=V  priority:A  level:N  words;
    -TERM or `not TERM` negates, `or` between terms.  Or Org's match syntax:
    '+work-done|urgent'  'TODO="NEXT"'  'PRIORITY="A"'  'EFFORT>"1:00"'  'LEVEL=2'.
    """
    import shlex

    # one word is given as typed (an Org match may hold spaces in "…" or {…}); several
    # are joined with the spaces inside a word quoted, so "a phrase" stays one term
    text = expr[0] if len(expr) == 1 else " ".join(
        a if a and not any(c.isspace() for c in a) else shlex.quote(a) for a in expr)
    with open_memex(memex, index) as m:
        if not no_sync:
            m.sync()
        nodes = m.query(text, limit=limit, today=_today(today), with_body=body, strict=True)
    emit({"count": len(nodes), "nodes": [n.to_dict(with_body=body) for n in nodes]}, json_,
         lambda: print_nodes(nodes))


def agenda_text(ag: Agenda) -> str:
    """The agenda as Org prints it: a header per day (``Wednesday   9 December 2026``),
    then ``  category:  19:00...... Book club`` / ``Sched. 3x:  TODO Report``."""
    out: list[str] = []
    for day in ag.days:
        d = day.date
        week = f" W{d.isocalendar()[1]:02d}" if d.weekday() == 0 else ""
        out.append(f"{d.strftime('%A'):<10} {d.day:2d} {d.strftime('%B')} {d.year:4d}{week}")
        for it in day.items:
            cat = f"{(it.category or '')[:11]}:"
            if it.time:
                tm = f"{it.time}-{it.end}" if it.end else f"{it.time}......"
                tm = f"{tm} "
            else:
                tm = ""
            out.append(f"  {cat:<12}{tm}{it.leader}{it.heading}")
    if ag.skipped_sexps:
        out.append(f"({ag.skipped_sexps} diary sexp(s) not evaluated)")
    return "\n".join(out)


def _dashboard(m: Memex, t: dt.date | None, days: int) -> tuple[dict, Callable[[], None]]:
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

    return data, human


@click.command()
@click.option("--days", type=int, default=7, show_default=True)
@click.option("--today", default=None, help="Pretend today is YYYY-MM-DD (the first day shown).")
@click.option("--dashboard", is_flag=True,
              help="The GTD dashboard instead: overdue, scheduled, deadlines, next actions, done.")
@common_options
def agenda(days: int, today: str | None, dashboard: bool, memex: str | None,
           index: str | None, json_: bool) -> None:
    """Org's day agenda: per day, what `org-agenda-list` shows (appointments, ranges,
    scheduled, deadlines and their warnings), from today for --days days."""
    if days < 1:
        raise click.BadParameter("--days must be 1 or more", param_hint="--days")
    with open_memex(memex, index) as m:
        m.sync()
        t = _today(today)
        if dashboard:
            data, human = _dashboard(m, t, days)
            emit(data, json_, human)
            return
        ag = m.day_agenda(today=t, days=days)
    emit(ag.to_dict(), json_, lambda: click.echo(agenda_text(ag)))


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
