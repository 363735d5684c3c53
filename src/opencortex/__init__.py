"""OpenCortex: a local-first personal AI agent that lives in your Org-mode files."""

from __future__ import annotations

import os as _os
import sys as _sys

if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    # `python -m opencortex.…` put the working directory (often the memex) first on the
    # import path: a synced click.py or *.dist-info there would run unapproved (as -P does)
    del _sys.path[0]

__version__ = "0.1.0"

__all__ = ["__version__"]
