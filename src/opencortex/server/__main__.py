"""``python -m opencortex.server [serve|token] ...``: the same commands as ``opencortex
serve`` / ``opencortex token``, usable before (or without) the main CLI."""

from __future__ import annotations

import click

from ..cli.serve_cmds import serve, token


@click.group()
def main() -> None:
    """The OpenCortex daemon."""


main.add_command(serve)
main.add_command(token)

if __name__ == "__main__":
    main(prog_name="python -m opencortex.server")
