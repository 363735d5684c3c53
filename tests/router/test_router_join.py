"""Router: back-referring clauses stay with their request, the neighbour vote blended into the
classifier, and ``opencortex router train`` (with a fake embedder and a scratch cache)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from opencortex.router import classifier
from opencortex.router.classifier import Classifier, fit, knn_vote
from opencortex.router.decompose import _join_back_references, is_back_reference

from .test_router import fake_embed


@pytest.mark.parametrize("clause,back", [
    ("it's an errand", True),
    ("that one is for the garden project", True),
    ("move it into january", True),
    ("make that one high priority", True),
    ("and it needs about an hour", True),
    ("buy bread on the way home", False),
    ("what did I write about compost", False),
    ("run `ls it`", False),
    ("it was raining all week in Oslo", False),  # past tense: a story, not a slot of a task
])
def test_is_back_reference(clause, back):
    assert is_back_reference(clause) is back


def test_a_remark_on_a_task_stays_with_the_task():
    items = [("gtd", "note down: renew the permit", "note down: renew the permit"),
             ("notes", "it's an errand", "it's an errand")]
    out, sents = _join_back_references(items, [0, 1])
    assert out == [("gtd", "note down: renew the permit. it's an errand",
                    "note down: renew the permit. it's an errand")]
    assert sents == [0]


def test_a_task_command_takes_the_remark_before_it():
    items = [("chat", "the shed painting won't happen in autumn",
              "the shed painting won't happen in autumn"),
             ("gtd", "push it to spring", "push it to spring")]
    out, _ = _join_back_references(items, [0, 0])
    assert [t for t, _, _ in out] == ["gtd"]
    assert out[0][2] == "the shed painting won't happen in autumn, push it to spring"


def test_a_back_reference_to_another_tool_stays_separate():
    items = [("web", "look up the ferry times online", "look up the ferry times online"),
             ("notes", "save them to my notes", "save them to my notes")]
    assert _join_back_references(items, [0, 0])[0] == items
    # and an independent second request is never joined
    items = [("gtd", "remind me to call Ana", "remind me to call Ana"),
             ("shell", "run df -h", "run df -h")]
    assert _join_back_references(items, [0, 1])[0] == items


def test_knn_vote_weights_the_nearest_anchors():
    sims = np.array([[0.9, 0.85, 0.1, 0.2], [0.1, 0.2, 0.8, 0.1]])
    p = knn_vote(sims, np.array([0, 0, 1, 1]), 2, k=2, temperature=0.05)
    assert p.shape == (2, 2) and np.allclose(p.sum(axis=1), 1.0)
    assert p[0, 0] == pytest.approx(1.0) and p[1, 1] > 0.9


def test_predict_blends_the_vote_and_survives_save_and_load(tmp_path, monkeypatch):
    monkeypatch.setattr(classifier, "KNN_WEIGHT", 0.5)  # heavier than the default: visible
    texts = ["list the files here", "show disk usage", "what did I write on tea",
             "my notes about tea"]
    labels = ["shell", "shell", "notes", "notes"]
    emb = fake_embed(texts)
    clf = fit(classifier.features(emb, texts), labels, iters=5)  # unsaturated: the vote shows
    linear = clf.predict(classifier.features(emb, texts), emb)[0]
    clf.anchors = emb.astype(np.float16)
    clf.anchor_y = np.array([clf.labels.index(t) for t in labels], dtype=np.int16)
    blended, near = clf.predict(classifier.features(emb, texts), emb)
    assert not np.allclose(linear, blended)  # the vote moved the distribution
    assert np.allclose(near, 1.0, atol=1e-2)
    clf.save(tmp_path / "c.npz")
    again = Classifier.load(tmp_path / "c.npz")
    assert np.allclose(again.predict(classifier.features(emb, texts), emb)[0], blended,
                       atol=1e-3)


def test_router_train_command_trains_once_then_reuses_the_cache(tmp_path, monkeypatch):
    import sys

    from opencortex.cli import cli

    def small_embed(texts):  # 64-d hashing: training on the whole bundled set stays quick
        return fake_embed(texts)[:, :64] + 1e-3

    decompose_mod = sys.modules["opencortex.router.decompose"]
    monkeypatch.setattr(decompose_mod, "_get_default_embed", lambda: small_embed)
    monkeypatch.setattr(classifier, "_cache_dir", lambda: tmp_path / "router")
    monkeypatch.setattr(classifier, "_memo", {})
    monkeypatch.setattr(classifier, "SHIPPED_FILE", tmp_path / "not-shipped.npz")
    runner = CliRunner()
    first = json.loads(runner.invoke(cli, ["router", "train", "--json"]).output)
    assert first["ok"] and first["trained"] and first["rows"] > 1000
    assert (tmp_path / "router").is_dir() and first["cache"].startswith(str(tmp_path))
    monkeypatch.setattr(classifier, "_memo", {})  # a fresh process: only the disk cache
    second = json.loads(runner.invoke(cli, ["router", "train", "--json"]).output)
    assert second["trained"] is False and second["cache"] == first["cache"]
    third = json.loads(runner.invoke(cli, ["router", "train", "--retrain", "--json"]).output)
    assert third["trained"] is True
