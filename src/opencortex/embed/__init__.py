"""Text embedders: in-process all-MiniLM-L6-v2 and any OpenAI-compatible server.

``get_embedder(spec)`` is the entry point; see ``opencortex.embed.base`` for the spec format.
Importing this package imports no numpy, onnxruntime or tokenizers.
"""

from __future__ import annotations

from .base import DEFAULT_SPEC, SPEC_ENV, Embedder, EmbeddingError, get_embedder

__all__ = ["DEFAULT_SPEC", "SPEC_ENV", "Embedder", "EmbeddingError", "get_embedder"]
