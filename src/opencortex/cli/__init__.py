"""The ``opencortex`` command line: a thin layer over :class:`opencortex.memex.Memex`."""

from __future__ import annotations

import click

from .. import __version__
from .agent_cmds import ask, route
from .archive_cmd import archive
from .context_cmd import context
from .doctor import doctor
from .export_cmd import export
from .gateway_cmds import chat, telegram
from .init_cmd import init
from .links_cmd import links
from .mcp_cmd import mcp
from .memex_cmds import agenda, index, projects, query
from .recall_cmd import recall
from .retrieval_cmds import read, scan, search
from .review_cmd import review
from .router_cmd import router
from .serve_cmds import serve, token
from .sessions_cmd import sessions
from .skills_cmd import skills
from .store_cmds import store as store_group
from .write_cmds import (
    append,
    capture,
    deadline,
    history,
    new_note,
    priority,
    schedule,
    set_property,
    tag,
    todo,
    undo,
)

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="opencortex")
@click.option("--store", "store", default=None, metavar="URL",
              help="Index store: postgresql://… (default: [store] url, $OPENCORTEX_STORE_URL, "
                   "else the SQLite index).")
def cli(store: str | None) -> None:
    """OpenCortex: a local-first personal agent that lives in your Org files.

    Every command takes --memex DIR (default: config, $OPENCORTEX_MEMEX, ~/memex)
    and --json for scripting.
    """
    # --store is read by each command from this group's params (cli.output.cli_settings)


for _cmd in (index, query, agenda, projects, export, capture, todo, priority, set_property, tag,
             schedule, deadline, append, new_note, undo, history, doctor, scan, search, read, ask, skills, route, context, mcp, serve, token, init, chat, telegram, store_group,
             recall, archive, review, links, router, sessions):
    cli.add_command(_cmd)


def main() -> None:
    cli(prog_name="opencortex")
