"""``opencortex skills`` (what is loaded, what is waiting for trust), ``skills trust NAME``
and ``skills untrust NAME``: the person approves a literate skill's exact bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .output import cli_settings, common_options, emit, fail

__all__ = ["skills"]


def _root(memex: str | None, index: str | None) -> Path:
    """The memex root (``--memex`` given to ``skills`` itself counts for its subcommands)."""

    parent = click.get_current_context().parent
    if memex is None and parent is not None:
        memex = parent.params.get("memex")
    return cli_settings(memex, index).memex.expanduser().resolve()


def skill_rows(root: Path, memex_flag: str | None = None) -> list[dict[str, Any]]:
    """Every skill's row; untrusted / changed literate skills carry the command that
    trusts them.  Loading runs only trusted code."""
    from ..guard.trust import trust_command
    from ..skills.default import default_registry

    reg = default_registry(root)
    rows = []
    for s in reg.statuses():
        row: dict[str, Any] = {"name": s.name, "source": s.source, "priority": s.priority,
                               "status": s.status}
        if s.trust:
            row["trust"] = s.trust
        if s.trust in ("untrusted", "changed"):
            row["description"] = s.description
            row["command"] = trust_command(s.name, memex_flag)
        rows.append(row)
    return rows


@click.group(invoke_without_command=True)
@common_options
@click.pass_context
def skills(ctx: click.Context, memex: str | None, index: str | None, json_: bool) -> None:
    """The skills available: built-in, plugins (entry points), literate (memex skills/).

    A literate skill runs only when you trusted exactly its bytes: untrusted or changed
    ones are listed with the command that trusts them."""
    if ctx.invoked_subcommand is not None:
        return
    rows = skill_rows(_root(memex, index), memex)

    def human() -> None:
        from ..guard.trust import visible  # a planted file's name cannot repaint the screen

        for r in rows:
            mark = "ok " if r["status"] == "ok" else "!! "
            click.echo(visible(f"{mark}{r['name']:<16} {r['priority']!s:>4}  {r['source']}")
                       + ("" if r["status"] == "ok" else f"\n     {visible(r['status'])}")
                       + (f"\n     trust it with: {visible(r['command'])}" if "command" in r
                          else ""))

    emit(rows, json_, human)


@skills.command("trust")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Trust without asking (you read the code).")
@common_options
def trust(name: str, yes: bool, memex: str | None, index: str | None, json_: bool) -> None:
    """Trust skill NAME's current bytes: shows its code and the diff against the version
    you trusted before, then asks y/N (unless --yes)."""
    from ..guard.trust import TrustStore, approval_text, find_skill

    root = _root(memex, index)
    sf = find_skill(root, name)
    store = TrustStore()
    prev = store.get(root, sf.rel)
    out: dict[str, Any] = {"name": sf.name, "path": sf.rel, "sha256": sf.sha256,
                           "previous_sha256": prev.sha256 if prev else None}
    if prev is not None and prev.sha256 == sf.sha256:
        emit({**out, "ok": True, "trusted": True, "changed": False}, json_,
             lambda: click.echo(f"{sf.rel} is already trusted (sha256 {sf.sha256[:16]}…)."))
        return
    shown = approval_text(sf.rel, sf.text, sf.sha256, previous=prev.text if prev else None)
    if not yes:
        if json_:
            fail("trusting code asks y/N: read it with `opencortex skills trust "
                 f"{sf.name}` or pass --yes", True, "NeedsConfirmation")
        click.echo(shown)
        if not click.confirm(f"Trust {sf.rel} (sha256 {sf.sha256[:16]}…)?", default=False):
            click.echo("Not trusted.")
            return
    store.trust(root, sf.rel, sf.name, sf.data, by="cli")
    rows = [r for r in skill_rows(root, memex) if r["source"] == f"literate:{sf.path}"]
    status = rows[0]["status"] if rows else "not found"
    emit({**out, "ok": True, "trusted": True, "changed": True, "status": status}, json_,
         lambda: click.echo(f"Trusted {sf.rel} (sha256 {sf.sha256[:16]}…): "
                            + ("it loads." if status == "ok" else f"it does not load: "
                               f"{status}")))


@skills.command("untrust")
@click.argument("name")
@common_options
def untrust(name: str, memex: str | None, index: str | None, json_: bool) -> None:
    """Forget the trust of skill NAME: it stops running at the next reload."""
    from ..errors import OpenCortexError
    from ..guard.trust import TrustStore, find_skill

    root = _root(memex, index)
    try:
        stem, rel = (sf := find_skill(root, name)).name, sf.rel
    except OpenCortexError:  # the file is gone: its trust can still be revoked
        stem = name.removeprefix("skills/").removesuffix(".org")
        rel = f"skills/{stem}.org"
    had = TrustStore().untrust(root, rel)
    emit({"ok": True, "name": stem, "path": rel, "was_trusted": had}, json_,
         lambda: click.echo(f"{rel}: " + ("no longer trusted." if had else
                                          "was not trusted.")))
