"""Embeddings from any OpenAI-compatible ``POST {base_url}/embeddings`` server.

Why stdlib ``urllib``: one JSON POST per batch needs no HTTP library, and the CLI stays light.
The protocol (OpenAI's "Create embeddings"): request ``{"model": M, "input": [texts],
"encoding_format": "float"}``; response ``{"data": [{"index": i, "embedding": [...]}, ...]}``.
Rows are put back in ``index`` order, checked for count and dimension, and L2-normalised (not
every server normalises).  429 and 5xx answers, resets and timeouts are retried with
exponential backoff (honouring ``Retry-After``); everything else fails at once with a message
saying what to change.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..locking import slow_work
from .base import SPEC_ENV, EmbeddingError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_KEY_ENV", "OpenAICompatEmbedder"]

DEFAULT_KEY_ENV = "OPENCORTEX_EMBED_API_KEY"
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_MAX_BACKOFF = 30.0


class OpenAICompatEmbedder:
    """Client for an OpenAI-compatible embeddings endpoint (OpenAI, vLLM, llama.cpp, Ollama, TEI...)."""

    def __init__(self, base_url: str, model: str, *, dim: int | None = None,
                 api_key_env: str = DEFAULT_KEY_ENV, timeout: float = 60.0, max_batch: int = 64,
                 max_retries: int = 4, backoff: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        self.model = self.name = model
        self._dim = dim
        self.api_key_env = api_key_env
        self.timeout, self.max_batch = timeout, max(1, max_batch)
        self.max_retries, self.backoff, self._sleep = max(0, max_retries), backoff, sleep

    @property
    def dim(self) -> int:
        """The configured dimension, else learnt from the server (one probe request if needed)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed texts in input order, ``batch_size`` (capped by ``max_batch``) per request."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string: embed([text])")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        step = max(1, min(int(batch_size), self.max_batch))
        with slow_work():  # the server's answer touches no memex: let others use it meanwhile
            parts = [self._request(list(texts[i:i + step]))
                     for i in range(0, len(texts), step)]
        out = np.concatenate(parts) if len(parts) > 1 else parts[0]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, np.float32(1e-12))
        return out

    # -- one request ---------------------------------------------------------------------------
    def _request(self, batch: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": batch, "encoding_format": "float"},
                          ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "opencortex"}
        key = os.environ.get(self.api_key_env, "").strip() if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        attempt = 0
        while True:
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            retry_after: float | None = None
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                return self._parse(raw, len(batch))
            except urllib.error.HTTPError as e:
                detail = _error_detail(e)
                if e.code not in _RETRY_STATUS or attempt >= self.max_retries:
                    raise EmbeddingError(self._http_message(e.code, detail, attempt)) from None
                retry_after = _retry_after(e.headers.get("Retry-After"))
            except urllib.error.URLError as e:
                reason = e.reason
                if isinstance(reason, ConnectionRefusedError | socket.gaierror):
                    raise EmbeddingError(
                        f"cannot connect to the embedding server at {self.url} ({reason}): start "
                        f"the server, or fix the URL in ${SPEC_ENV} / the embedder spec "
                        "(openai:http://HOST:PORT/v1#MODEL)") from None
                if attempt >= self.max_retries:
                    raise EmbeddingError(f"embedding request to {self.url} failed after "
                                         f"{attempt + 1} tries: {reason}") from None
            except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
                if attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"embedding request to {self.url} failed after {attempt + 1} tries: "
                        f"{e or type(e).__name__}; raise the timeout (&timeout=SECONDS in the "
                        "spec) or send smaller batches (&batch=N)") from None
            delay = min(_MAX_BACKOFF, self.backoff * 2 ** attempt) * (0.75 + random.random() / 2)
            self._sleep(min(_MAX_BACKOFF, retry_after) if retry_after is not None else delay)
            attempt += 1

    def _http_message(self, status: int, detail: str, attempt: int) -> str:
        where = f"the embedding server at {self.url} answered HTTP {status}"
        if status in (401, 403):
            how = (f"set the API key in ${self.api_key_env}" if not os.environ.get(self.api_key_env)
                   else f"check the API key in ${self.api_key_env}")
            return f"{where} ({detail}): {how} (or name another variable with &key_env=VAR)"
        if status == 404:
            return (f"{where} ({detail}): check the base URL (it usually ends in /v1) and the "
                    f"model name {self.model!r}")
        if status in _RETRY_STATUS:
            return f"{where} ({detail}) {attempt + 1} times; try again later or reduce &batch=N"
        return f"{where} ({detail})"

    def _parse(self, raw: bytes, n: int) -> np.ndarray:
        import numpy as np

        try:
            payload = json.loads(raw)
            data = payload["data"]
            rows: list[tuple[int, Any]] = [(int(d["index"]), d["embedding"]) for d in data]
        except (ValueError, KeyError, TypeError) as e:
            snippet = raw[:200].decode("utf-8", "replace")
            raise EmbeddingError(
                f"{self.url} did not answer like an OpenAI embeddings endpoint ({e!r} in "
                f"{snippet!r}): check that the URL is the API base (e.g. http://HOST:PORT/v1) "
                "and that the server supports /embeddings") from None
        rows.sort(key=lambda r: r[0])
        if [i for i, _ in rows] != list(range(n)):
            raise EmbeddingError(f"{self.url} returned {len(rows)} embeddings with indices "
                                 f"{[i for i, _ in rows][:10]} for {n} inputs")
        if any(isinstance(v, str) for _, v in rows):
            raise EmbeddingError(f"{self.url} returned base64 embeddings although floats were "
                                 "asked for; use a server that honours encoding_format=float")
        try:
            out = np.array([v for _, v in rows], dtype=np.float32)
        except (ValueError, TypeError):
            raise EmbeddingError(f"{self.url} returned embeddings of unequal lengths or "
                                 "non-numbers") from None
        if out.ndim != 2:
            raise EmbeddingError(f"{self.url} returned embeddings of shape {out.shape}")
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.url} model {self.model!r} returned {out.shape[1]}-d embeddings, expected "
                f"{self._dim}: fix &dim=N in the embedder spec, or pick the model that made the "
                "index (vectors of different models must not be mixed)")
        if not np.isfinite(out).all():
            raise EmbeddingError(f"{self.url} returned NaN or infinite embedding values")
        return out

    def __repr__(self) -> str:
        return f"OpenAICompatEmbedder({self.url!r}, model={self.model!r}, dim={self._dim})"


def _error_detail(e: urllib.error.HTTPError) -> str:
    """The server's own error message (OpenAI shape ``{"error": {"message": ...}}``) or reason."""
    try:
        raw = e.read()[:2000]
    except OSError:
        return str(e.reason)
    try:
        err = json.loads(raw).get("error")
        msg = err.get("message") if isinstance(err, dict) else err
        if msg:
            return str(msg)[:300]
    except (ValueError, AttributeError):
        pass
    return raw.decode("utf-8", "replace").strip()[:300] or str(e.reason)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
