"""``opencortex mcp``: serve the memex to MCP clients over stdio."""

from __future__ import annotations

import click

from ..errors import OpenCortexError
from .output import fail

__all__ = ["mcp"]


@click.command("mcp")
@click.option("--memex", "memex", type=click.Path(file_okay=False), default=None,
              help="Memex folder (default: config, $OPENCORTEX_MEMEX, ~/memex).")
@click.option("--index", "index", type=click.Path(dir_okay=False), default=None,
              help="Index database (default: under the XDG cache dir).")
@click.option("--log-file", type=click.Path(dir_okay=False), default=None,
              help="Append logs to this file (default: stderr; stdout is the protocol).")
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"],
                                               case_sensitive=False),
              default="INFO", show_default=True)
def mcp(memex: str | None, index: str | None, log_file: str | None, log_level: str) -> None:
    """Model Context Protocol server on stdio: search, read, agenda, capture, recollect.

    \b
    Tools: search, read, agenda, recollect (read-only), capture (writes an entry).
    Resources: opencortex://node/{id} (a node's Org text).
    Client config: command "opencortex", args ["mcp", "--memex", "DIR"].
    """
    from ..mcp_server import serve
    from .output import open_runtime

    try:
        serve(log_file=log_file, log_level=log_level, runtime=open_runtime(memex, index))
    except OpenCortexError as e:
        fail(str(e), False, type(e).__name__, status=e.status)
