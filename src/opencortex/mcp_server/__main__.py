"""``python -m opencortex.mcp_server [--memex DIR] [--index FILE]``: as ``opencortex mcp``."""

from ..cli.mcp_cmd import mcp

if __name__ == "__main__":
    mcp(prog_name="opencortex mcp")
