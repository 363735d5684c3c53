"""Router: splitting, rules, argument extraction, k-NN with a fake embedder, real MiniLM."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from opencortex.router import TARGETS, Intent, decompose
from opencortex.router.decompose import knn_classify
from opencortex.router.exemplars import EXEMPLARS
from opencortex.router.rules import extract_args, rule_target, split_clauses

HELDOUT = Path(__file__).with_name("heldout.jsonl")


def fake_embed(texts):
    """Deterministic bag-of-words hashing embedder: shared words -> high cosine."""
    rows = np.zeros((len(texts), 4096), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            h = int(hashlib.md5(w.strip("?.,!").encode()).hexdigest(), 16)
            rows[i, h % 4096] += 1.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


def targets(text, embed=fake_embed):
    return [i.target for i in decompose(text, embed=embed)]


# -- splitting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text,n", [
    ("search for salt and pepper", 1),
    ("find my notes on salt and pepper", 1),
    ("what did I write about pros and cons of remote work?", 1),
    ("start a new project called bread-and-butter", 1),
    ("start a new project called garden-planner with a README and a notes file", 1),
    ("fetch https://example.org/a-and-then-b and summarize it", 1),
    ("find my notes on cats, dogs, and birds", 1),
    ("hi, how are you?", 1),
    ("run `echo a; echo b`", 1),
    ("find my notes on backups and then run the backup script", 2),
    ("check git log and add a TODO to review it tomorrow", 2),
    ("run git pull, then show me my agenda", 2),
    ("what did I note about X? Also schedule a follow-up for Thursday", 2),
    ("check the disk usage; after that remind me to clean up", 2),
    ("find my notes on Kafka, search the web for Kafka 4 and then run docker ps", 3),
    ("lance git status puis ajoute une tâche pour relire le code", 2),
    ("durchsuche meine Notizen nach Docker und dann führe docker ps aus", 2),
    ("ejecuta ls -la y luego busca en mis notas sobre servidores", 2),
    ("busca el horario y después añade una tarea", 2),
])
def test_split_counts(text, n):
    assert len(split_clauses(text)) == n, split_clauses(text)


def test_split_keeps_order_and_text():
    assert split_clauses("find my notes on backups and then run the backup script") == [
        "find my notes on backups", "run the backup script"]


# -- rules -------------------------------------------------------------------------------------

@pytest.mark.parametrize("clause,target", [
    ("/recollect the migration plan", "recollect"),
    ("$ du -sh ~/Downloads", "shell"),
    ("`make test`", "shell"),
    ("run git status", "shell"),
    ("grep for TODO in the src directory", "shell"),
    ("grep my notes for 'kubernetes'", "notes"),
    ("remind me to call mum on Sunday", "gtd"),
    ("add a task to renew the passport", "gtd"),
    ("what's on my agenda today?", "gtd"),
    ("schedule the review for Monday", "gtd"),
    ("fetch https://example.org/x", "web"),
    ("search the web for emacs news", "web"),
    ("create a new project called recipe-box", "foundry"),
    ("create a skill that tags my photos", "skill-creator"),
    ("remember when we fixed the parser?", "recollect"),
    ("we discussed a new logo a few weeks ago", "recollect"),
    ("I vaguely remember an idea about pricing from last spring", "recollect"),
    ("remind me what we decided about pricing", "recollect"),
    ("what did I write about stoicism", "notes"),
    ("rappelle-moi d'appeler ma mère demain", "gtd"),
    ("erinnere mich daran, die Miete zu zahlen", "gtd"),
    ("recuérdame pagar la factura", "gtd"),
    ("tu te souviens de la session sur le cache ?", "recollect"),
    ("weißt du noch, wie wir das gemacht haben?", "recollect"),
    ("¿te acuerdas de cuando migramos la base?", "recollect"),
    ("cherche dans mes notes le mot de passe", "notes"),
    ("crea una habilidad que resuma mis correos", "skill-creator"),
    ("erstelle ein neues Projekt namens fotoalbum", "foundry"),
])
def test_rule_targets(clause, target):
    assert rule_target(clause) == target


@pytest.mark.parametrize("clause", ["explain what a monad is", "how are you?",
                                    "who painted the Mona Lisa?"])
def test_rules_defer_when_not_explicit(clause):
    assert rule_target(clause) is None


# -- argument extraction -----------------------------------------------------------------------

@pytest.mark.parametrize("target,clause,expected", [
    ("notes", "what did I write about spaced repetition?", {"query": "spaced repetition"}),
    ("notes", "find my notes on the Zettelkasten method", {"query": "the Zettelkasten method"}),
    ("notes", "grep my notes for 'kubernetes'", {"query": "kubernetes"}),
    ("shell", "run git status in the opencortex project",
     {"command": "git status", "cwd": "opencortex"}),
    ("shell", "execute `make test`", {"command": "make test"}),
    ("shell", "$ ls -la", {"command": "ls -la"}),
    ("shell", "how much disk space is left?", {"command": "df -h"}),
    ("shell", "list the files in ~/memex/projects", {"command": "ls ~/memex/projects"}),
    ("web", "fetch https://example.org/changelog and summarize it",
     {"url": "https://example.org/changelog"}),
    ("web", "search the web for the latest org-mode release notes",
     {"query": "the latest org-mode release notes"}),
    ("foundry", "scaffold a python project named invoice-parser", {"name": "invoice-parser"}),
    ("foundry", "set up a new project for my thesis", {"name": "thesis"}),
    ("skill-creator", "create a skill that converts my review into an email",
     {"description": "converts my review into an email"}),
    ("recollect", "/recollect the migration plan", {"cue": "the migration plan"}),
])
def test_extract_args(target, clause, expected):
    assert extract_args(target, clause) == expected


def test_gtd_args():
    a = extract_args("gtd", "remind me to call the dentist on Friday")
    assert a["op"] == "capture" and a["task"] == "call the dentist" and "Friday" in a["when"]
    a = extract_args("gtd", "mark the tax return task as done")
    assert a == {"op": "todo", "task": "tax return", "state": "DONE"}
    assert extract_args("gtd", "what's on my agenda today?")["op"] == "agenda"
    assert extract_args("gtd", "schedule a task to upgrade")["op"] == "schedule"
    assert extract_args("gtd", "what is my next action on the redesign project?") == {
        "op": "next", "task": "redesign"}
    a = extract_args("gtd", "put the talk prep on my list for Monday")
    assert a["task"] == "the talk prep" and "Monday" in a["when"]


def test_intent_to_dict():
    i = Intent("shell", {"command": "git status"}, "run git status")
    assert i.to_dict() == {"target": "shell", "command": "git status"}


# -- k-NN with an injected fake embedder --------------------------------------------------------

def test_knn_picks_nearest_exemplar_target():
    for target in ("notes", "shell", "web", "chat"):
        ex = EXEMPLARS[target][0]
        assert knn_classify(ex, fake_embed)[0] == target


def test_knn_threshold_falls_back_to_chat():
    target, best = knn_classify("zzqx vrrk plonf", fake_embed)
    assert target == "chat" and best < 0.3


def test_knn_is_deterministic_and_total():
    for t in ["the quick brown fox", "xyz", "what processes are running"]:
        assert knn_classify(t, fake_embed) == knn_classify(t, fake_embed)
        assert knn_classify(t, fake_embed)[0] in TARGETS


def test_exemplars_cover_every_target_multilingual():
    assert set(EXEMPLARS) == set(TARGETS)
    for target, exs in EXEMPLARS.items():
        assert len(exs) >= 15, target
        assert len(set(exs)) == len(exs), target


def test_decompose_with_fake_embed_end_to_end():
    out = decompose("find my notes on backups and then run the backup script", embed=fake_embed)
    assert [i.to_dict() for i in out] == [
        {"target": "notes", "query": "backups"},
        {"target": "shell", "description": "the backup script"}]
    assert decompose("", embed=fake_embed) == []
    assert targets("hi! what's on my agenda today?") == ["gtd"]
    assert targets("thanks") == ["chat"]


# -- the real MiniLM on held-out utterances ----------------------------------------------------

@pytest.fixture(scope="module")
def minilm_embed(tmp_path_factory):
    from opencortex.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(cache_dir=tmp_path_factory.mktemp("router-embed")).embed


@pytest.mark.parametrize("text,expected", [
    ("explain what a monad is in one paragraph", ["chat"]),
    ("how much memory is this machine using?", ["shell"]),
    ("what's the weather like in Oslo tomorrow?", ["web"]),
    ("who wrote War and Peace?", ["chat"]),
    ("show me the running docker containers", ["shell"]),
    ("hola, ¿cómo estás?", ["chat"]),
])
def test_minilm_classifier(minilm_embed, text, expected):
    assert targets(text, minilm_embed) == expected


def test_minilm_heldout_accuracy(minilm_embed):
    rows = [json.loads(x) for x in HELDOUT.read_text(encoding="utf-8").splitlines() if x.strip()]
    wrong = [(r["text"], targets(r["text"], minilm_embed)) for r in rows
             if targets(r["text"], minilm_embed) != r["intents"]]
    assert len(wrong) <= 0.1 * len(rows), wrong


def test_deterministic(minilm_embed):
    text = "find my notes on Kafka, search the web for Kafka 4 and then run docker ps"
    first = [i.to_dict() for i in decompose(text, embed=minilm_embed)]
    for _ in range(3):
        assert [i.to_dict() for i in decompose(text, embed=minilm_embed)] == first
    assert [i.target for i in decompose(text, embed=minilm_embed)] == ["notes", "web", "shell"]
