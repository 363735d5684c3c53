"""The router's classifier ships in the package (data/classifier.npz): a first request loads it
instead of training; it is what training on the bundled data produces; when the data or the
hyperparameters change it is not used (the classifier trains, saying so on stderr)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from click.testing import CliRunner

from opencortex.router import classifier
from opencortex.router.classifier import (
    SHIPPED_FILE,
    SOURCES,
    Classifier,
    cached_classifier,
    data_digest,
    features,
    model_state,
)
from opencortex.router.decompose import DEFAULT_MODEL_ID

PROBES = [
    "what's on my agenda today?", "remind me to call the plumber tomorrow at 10am",
    "the kitchen tap washer got sorted", "what do my notes say about caching?",
    "run df -h and tell me what's full", "look up the opening hours of the library online",
    "what did we talk about yesterday in the coding session?", "thanks, that's all",
    "¿qué tengo pendiente para mañana?", "save this answer under my backups note",
]
"""Requests of every kind (written here) whose predicted targets must not move."""


def _minilm():
    try:
        from opencortex.embed import get_embedder

        return get_embedder("minilm").embed
    except Exception as e:  # pragma: no cover - the model is a declared dependency
        pytest.skip(f"MiniLM not installed: {e}")


def test_shipped_file_matches_the_bundled_data_and_hyperparameters() -> None:
    """Fails when someone changes the training data or the classifier without rebuilding
    (scripts/build_router_model.py): the first request would then train for a minute."""
    meta = Classifier.meta(SHIPPED_FILE)
    assert meta["data_sha256"] == data_digest()
    assert meta["key"] == classifier._key(SOURCES, DEFAULT_MODEL_ID), \
        "rebuild: .venv/bin/python scripts/build_router_model.py"
    assert meta["model_id"] == DEFAULT_MODEL_ID
    assert SHIPPED_FILE.stat().st_size < 8_000_000  # a few MB at most
    clf = Classifier.load(SHIPPED_FILE)
    n_rows = len(classifier.load_weighted(None)[0])
    assert clf.anchors is not None and clf.anchors.shape == (n_rows, 384)


def test_first_use_loads_the_shipped_classifier_without_training(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(classifier, "_cache_dir", lambda: tmp_path / "empty-cache")
    monkeypatch.setattr(classifier, "_memo", {})

    def no_training(*a, **k):
        raise AssertionError("trained although the shipped classifier matches")

    monkeypatch.setattr(classifier, "_train", no_training)
    assert model_state(DEFAULT_MODEL_ID)["state"] == "shipped"
    t0 = time.perf_counter()
    clf = cached_classifier(lambda texts: np.zeros((len(texts), 384)), DEFAULT_MODEL_ID)
    assert time.perf_counter() - t0 < 5
    assert clf.labels == Classifier.load(SHIPPED_FILE).labels
    assert not (tmp_path / "empty-cache").exists()  # nothing derived written at first use


def test_changed_data_is_not_served_by_the_shipped_file(monkeypatch, tmp_path, capsys) -> None:
    """Other hyperparameters (or data): the shipped file's key no longer matches, so the
    classifier trains — announcing it on stderr — instead of using a stale model."""
    monkeypatch.setattr(classifier, "_cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(classifier, "_memo", {})
    monkeypatch.setattr(classifier, "L2", classifier.L2 * 2)
    monkeypatch.delenv("OPENCORTEX_NO_PROGRESS")
    assert model_state(DEFAULT_MODEL_ID)["state"] == "stale"

    class Trained(Exception):
        pass

    def train(embed, path):
        raise Trained

    monkeypatch.setattr(classifier, "_train", train)
    with pytest.raises(Trained):
        cached_classifier(lambda texts: np.zeros((len(texts), 384)), DEFAULT_MODEL_ID)
    err = capsys.readouterr().err
    assert "training the router's classifier" in err


def test_doctor_reports_the_derived_models(monkeypatch) -> None:
    from opencortex.cli import cli

    r = CliRunner().invoke(cli, ["doctor", "--json"])
    checks = {c["check"]: c for c in json.loads(r.output)["checks"]}
    router = checks["router-model"]
    assert router["ok"] and router["detail"].startswith("shipped: ")
    assert data_digest()[:12] in router["detail"] and " MB)" in router["detail"]
    assert checks["embed-graph"]["detail"].split(":")[0] in ("built", "installed", "not built")
    monkeypatch.setattr(classifier, "L2", classifier.L2 * 2)
    r = CliRunner().invoke(cli, ["doctor", "--json"])
    stale = {c["check"]: c for c in json.loads(r.output)["checks"]}["router-model"]
    assert not stale["ok"] and stale["detail"].startswith("stale: ")
    assert "router train" in stale["fix"]


@pytest.mark.slow
def test_rebuilding_from_the_bundled_data_gives_the_shipped_model(tmp_path) -> None:
    """What scripts/build_router_model.py does, from scratch: the same labels, weights equal
    to float noise (the embedding runtime's summation order can differ by machine), the same
    predicted target for every probe and every training utterance."""
    embed = _minilm()
    out = tmp_path / "rebuilt.npz"
    rebuilt = classifier.build_shipped(embed, DEFAULT_MODEL_ID, out)
    shipped = Classifier.load(SHIPPED_FILE)
    assert Classifier.meta(out) == Classifier.meta(SHIPPED_FILE)
    assert rebuilt.labels == shipped.labels
    assert np.abs(rebuilt.anchors.astype(np.float32)
                  - shipped.anchors.astype(np.float32)).max() < 2e-3
    assert np.abs(rebuilt.w - shipped.w).max() < 1e-2
    texts = PROBES + classifier.load_weighted(None)[0][::7]
    emb = np.asarray(embed(texts), dtype=np.float32)
    x = features(emb, texts)
    p_new, _ = rebuilt.predict(x, emb)
    p_old, _ = shipped.predict(x, emb)
    assert (p_new.argmax(1) == p_old.argmax(1)).all()
    assert np.abs(p_new - p_old).max() < 0.02

