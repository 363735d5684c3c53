"""OpenCortex: a local-first personal AI agent that lives in your Org-mode files."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
