"""Retrieval: a live ripgrep scan, BM25, dense vectors, hybrid fusion, deep reads."""

from __future__ import annotations

__all__ = ["Retriever", "ScanHit", "deep_read", "scan"]


def __getattr__(name: str):  # keep `import opencortex.retrieval` light
    if name == "Retriever":
        from .hybrid import Retriever

        return Retriever
    if name == "deep_read":
        from .deep_read import deep_read

        return deep_read
    if name in ("scan", "ScanHit"):
        from . import scan as _scan

        return getattr(_scan, name)
    raise AttributeError(name)
