"""An MCP tool's error passes the egress check as its result does.

The tool wrapper checked what a tool returned; an exception's text (a write refused naming
what it would have changed, a store error quoting a line) went to the client as it was.
Each tool's work is made to fail with the private canary in its message."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from opencortex.errors import WriteError
from opencortex.memex import Memex

from .test_egress import CANARY, CANARY_WORD, _mcp_args, _plant


def test_every_mcp_tool_error_passes_the_egress_check(memex: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.exceptions import ToolError

    from opencortex.mcp_server import build_server

    _plant(memex)
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    server = build_server(m)
    t = server.opencortex_tools  # type: ignore[attr-defined]

    def fail(*a: object, **k: object) -> object:
        # as the facade's ``_call`` does: an OpenCortexError's text becomes the ToolError's
        try:
            raise WriteError(f"would change the entry holding:\n{CANARY}")
        except WriteError as e:
            raise ToolError(str(e)) from e

    for attr in [a for a in dir(t) if not a.startswith("_") and callable(getattr(t, a))]:
        setattr(t, attr, fail)
    args = _mcp_args()

    async def run() -> list[str]:
        out = []
        for name in sorted(args):
            try:
                res = await server.call_tool(name, args[name])
                out.append(json.dumps(res.model_dump(), ensure_ascii=False))
            except Exception as e:  # what the client is told
                out.append(f"{name}: {e}")
        return out

    for text in anyio.run(run):
        assert CANARY_WORD not in text, text[:400]
    m.close()
