"""``opencortex store migrate|status|copy``: the index store's schema, health, and moving
an index from SQLite to PostgreSQL."""

from __future__ import annotations

import click

from .output import common_options, emit

__all__ = ["store"]


def _open(memex: str | None, index: str | None, url: str | None, schema: str | None):
    """The store the settings (or ``url``) name; opening applies pending migrations."""
    from ..memory.store import open_store
    from .output import cli_settings

    s = cli_settings(memex, index)
    target = url or s.store_url or s.index_path
    return open_store(target, schema=schema or s.store_schema)


@click.group()
def store() -> None:
    """The index store: SQLite (default) or PostgreSQL ([store] url / --store URL)."""


@store.command()
@click.option("--url", default=None, help="Store to migrate (default: the configured one).")
@click.option("--schema", default=None, help="PostgreSQL schema (default: [store] schema).")
@common_options
def migrate(memex: str | None, index: str | None, json_: bool, url: str | None,
            schema: str | None) -> None:
    """Apply pending schema migrations (they also run on every connect)."""
    from ..memory.store_copy import store_status
    from ..recall import migrations as _recall  # noqa: F401  (registers recall's set)

    st = _open(memex, index, url, schema)
    try:
        applied = list(getattr(st, "migrations_applied", []))
        d = store_status(st)
    finally:
        st.close()
    d = {"applied_now": applied, "level": d["migrations"]["level"],
         "pending": d["migrations"]["pending"], "store": d.get("url") or d.get("path")}
    emit(d, json_, lambda: click.echo(
        f"{d['store']}: at {d['level']}"
        + (f" (applied now: {', '.join(applied)})" if applied else " (nothing to apply)")))


@store.command()
@click.option("--url", default=None, help="Store to inspect (default: the configured one).")
@click.option("--schema", default=None, help="PostgreSQL schema (default: [store] schema).")
@common_options
def status(memex: str | None, index: str | None, json_: bool, url: str | None,
           schema: str | None) -> None:
    """Backend, location, migration level and row counts."""
    from ..memory.store_copy import store_status
    from ..recall import migrations as _recall  # noqa: F401  (registers recall's set)

    st = _open(memex, index, url, schema)
    try:
        d = store_status(st)
    finally:
        st.close()

    def human() -> None:
        where = d.get("url", d.get("path"))
        click.echo(f"{d['backend']}  {where}" + (f"  schema {d['schema']}" if "schema" in d
                                                 else ""))
        if d["backend"] == "postgresql":
            click.echo(f"server {d['server_version']}, pgvector {d['pgvector']}")
        click.echo(f"migrations: {d['migrations']['level']}"
                   + (f" (pending: {', '.join(d['migrations']['pending'])})"
                      if d["migrations"]["pending"] else ""))
        click.echo("  ".join(f"{k} {v}" for k, v in d["counts"].items()))
    emit(d, json_, human)


@store.command()
@click.option("--from", "src", required=True, metavar="SRC",
              help="sqlite:PATH (or a path) or postgresql://… to copy from.")
@click.option("--to", "dst", required=True, metavar="URL", help="postgresql://… to copy into.")
@click.option("--from-schema", default=None, help="Schema of a PostgreSQL source.")
@click.option("--schema", default=None, help="Target schema (default: [store] schema).")
@click.option("--replace", is_flag=True, help="Overwrite a target that is not empty.")
@common_options
def copy(memex: str | None, index: str | None, json_: bool, src: str, dst: str,
         from_schema: str | None, schema: str | None, replace: bool) -> None:
    """Move an index (nodes, links, journal, embeddings) into PostgreSQL."""
    from pathlib import Path

    from ..errors import OpenCortexError
    from ..memory.store_copy import copy_store

    if not src.startswith(("postgresql://", "postgres://")):
        p = Path(src.removeprefix("sqlite:").removeprefix("//")).expanduser()
        if not p.is_file():
            raise OpenCortexError(f"{p}: no such SQLite index (see `opencortex store status`)")
        src = str(p)
    a = _open(memex, index, src, from_schema)
    try:
        b = _open(memex, index, dst, schema)
        try:
            d = copy_store(a, b, replace=replace)  # type: ignore[arg-type]
        finally:
            b.close()
    finally:
        a.close()
    emit(d, json_, lambda: click.echo(
        f"copied {', '.join(f'{v} {k}' for k, v in d['rows'].items())} "
        f"into {d['to']} in {d['seconds']:.2f}s"))
