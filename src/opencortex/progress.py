"""One line on stderr before work a person would otherwise wait on in silence.

Why: a first request that builds a model (the embedding graph, a classifier) can take many
seconds; without a word it looks hung.  The line goes to stderr, so ``--json`` output on stdout
stays clean; ``OPENCORTEX_NO_PROGRESS=1`` silences it (the tests set it).
"""

from __future__ import annotations

import sys

from .config import env

__all__ = ["slow_step"]


def slow_step(what: str) -> None:
    """Say on stderr what slow step starts now (one line, flushed)."""
    if env("OPENCORTEX_NO_PROGRESS"):
        return
    try:
        print(f"opencortex: {what}…", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # a closed stderr is no reason to fail the request
