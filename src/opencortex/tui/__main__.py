"""``python -m opencortex.tui``: the chat command without the ``opencortex`` group."""

from __future__ import annotations

from ..cli.gateway_cmds import chat

if __name__ == "__main__":
    chat(prog_name="opencortex chat")
