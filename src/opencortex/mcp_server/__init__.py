"""OpenCortex as a Model Context Protocol server (stdio), for MCP clients and agents.

Tools: ``search``, ``read``, ``agenda`` (read-only), ``capture`` (writes an entry) and
``recollect`` (the recall dialogue of ``opencortex.recall``, one round per call).
Resources: ``opencortex://node/{id}``, a node's Org text.  Stdout carries the protocol
only: logs go to stderr or a file.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from .server import NODE_URI, OpenCortexTools, build_server

__all__ = ["NODE_URI", "OpenCortexTools", "build_server", "configure_logging", "serve"]

log = logging.getLogger("opencortex.mcp")


def configure_logging(log_file: str | os.PathLike[str] | None = None,
                      level: str = "INFO") -> None:
    """Root logging to ``log_file`` (appended) or stderr; never stdout."""
    if log_file:
        Path(log_file).expanduser().parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(Path(log_file).expanduser(),
                                                       encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for h in list(root.handlers):  # whatever was there may point at stdout
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())


def serve(memex: str | os.PathLike[str] | None = None,
          index: str | os.PathLike[str] | None = None,
          log_file: str | os.PathLike[str] | None = None, log_level: str = "INFO", *,
          runtime: Any = None) -> None:
    """Sync the index, then serve MCP over stdio until the client hangs up.  ``runtime``
    (the CLI's) wins over ``memex``/``index``; a broken [llm] is a ConfigError here."""
    from ..runtime import Runtime

    configure_logging(log_file, log_level)
    rt = runtime if runtime is not None else Runtime.open(memex, index)
    try:
        m = rt.memex
        s = m.sync()
        log.info("memex %s synced: %s", m.root, s.to_dict() if hasattr(s, "to_dict") else s)
        build_server(m, rt).run("stdio")
    finally:
        rt.close()
