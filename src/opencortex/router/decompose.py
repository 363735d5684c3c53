"""Offline intent decomposition: request text -> ordered list of atomic intents.

Pipeline: split the request into clauses (``rules.split_clauses``), classify each clause by
explicit-phrasing rules first and by a k-NN vote over embedded exemplars otherwise, then pull
the target's arguments out of the clause.  No LLM and no network: it must work offline and be
deterministic, so the same text always routes the same way.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .exemplars import EXEMPLARS
from .rules import (
    extract_args,
    is_follow_up,
    is_pleasantry,
    rule_target,
    split_clauses,
    strip_greeting,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TARGETS", "EmbedFn", "Intent", "classify", "decompose", "knn_classify"]

TARGETS: tuple[str, ...] = ("notes", "shell", "gtd", "web", "foundry", "skill-creator",
                            "recollect", "chat")

EmbedFn = Callable[[Sequence[str]], "np.ndarray"]
"""Texts -> float rows of unit length, one per text, in order."""

K = 5
"""Neighbours that vote; small because each target has only ~25 exemplars."""
MIN_SIMILARITY = 0.38
"""Below this best-exemplar cosine the clause is not like any tool request: it is chat."""


_PERSONAL = re.compile(
    r"\b(?:i|i'?ve|my|me|mine|notes?|journal|memex|je|j'|mes|mon|ma|ich|mein\w*|notiz\w*|"
    r"mis|mi|yo|notas?)\b", re.IGNORECASE)
"""Notes are the person's own: a notes verdict needs some first-person or notes word."""


@dataclass(frozen=True)
class Intent:
    """One atomic request for one target, with the span of the request it came from."""

    target: str
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire form ``{"target": ..., **args}`` the dispatcher consumes."""
        return {"target": self.target, **self.args}


# -- embedding & exemplar cache ----------------------------------------------------------------

_lock = threading.Lock()
_default_embed: EmbedFn | None = None
_matrix_cache: dict[int, tuple[Any, list[str], EmbedFn]] = {}
"""Keyed by id(embed); the function is kept in the value so the id cannot be recycled."""


def _get_default_embed() -> EmbedFn:
    """Build the in-process MiniLM once (it takes ~0.5-1.5 s) and reuse it."""
    global _default_embed
    with _lock:
        if _default_embed is None:
            from opencortex.embed import get_embedder

            _default_embed = get_embedder("minilm").embed
        return _default_embed


def _exemplar_matrix(embed: EmbedFn) -> tuple[Any, list[str]]:
    """Exemplar embeddings and their labels, computed once per embed function."""
    key = id(embed)
    with _lock:
        hit = _matrix_cache.get(key)
        if hit is not None and hit[2] is embed:
            return hit[0], hit[1]
    texts: list[str] = []
    labels: list[str] = []
    for target in TARGETS:
        for ex in EXEMPLARS.get(target, ()):
            texts.append(ex)
            labels.append(target)
    import numpy as np

    mat = np.asarray(embed(texts), dtype=np.float32)
    with _lock:
        _matrix_cache[key] = (mat, labels, embed)
    return mat, labels


def knn_classify(clause: str, embed: EmbedFn, *, k: int = K,
                 min_similarity: float = MIN_SIMILARITY) -> tuple[str, float]:
    """Similarity-weighted vote of the k nearest exemplars; ``("chat", s)`` when nothing is near.

    Ties break by ``TARGETS`` order so the result never depends on dict or hash order.
    """
    import numpy as np

    mat, labels = _exemplar_matrix(embed)
    q = np.asarray(embed([clause]), dtype=np.float32)[0]
    sims = mat @ q
    order = np.lexsort((np.arange(len(sims)), -sims))[:k]  # stable: by -sim, then index
    best = float(sims[order[0]])
    if best < min_similarity:
        return "chat", best
    votes: dict[str, float] = {}
    for i in order:
        votes[labels[i]] = votes.get(labels[i], 0.0) + float(sims[i])
    target = max(TARGETS, key=lambda t: (round(votes.get(t, 0.0), 6), -TARGETS.index(t)))
    return target, best


_SENTENCE_WORDS = frozenset("""i you we he she they it that this was is are am be me us
thanks thank please ok okay cheers hi hello hey bye merci danke gracias je tu nous
ich du wir yo tú nosotros c'est ça das es""".split())


def is_keyword_query(clause: str) -> bool:
    """A short topic with no verb, question word or question mark ("caching strategies",
    "zfs snapshots"): what people type into a notes search box."""
    from .rules import _QWORDS, _VERBS, _first_word, _is_request

    c = clause.strip()
    words = c.split()
    if not words or len(words) > 6 or "?" in c or _is_request(c):
        return False
    lowered = {w.strip(",.!;:'\"").lower() for w in words}
    if lowered & _SENTENCE_WORDS:  # pronouns, copulas, thanks: a sentence, not a topic
        return False
    w = _first_word(c)
    return w not in _QWORDS and w not in _VERBS and not w.startswith(("/", "$", "`"))


def classify(clause: str, embed: EmbedFn | None = None) -> str:
    """Target for one clause: rules when the phrasing is explicit, else the k-NN classifier."""
    if is_pleasantry(clause):
        return "chat"
    target = rule_target(clause)
    if target is not None:
        return target
    if is_keyword_query(clause):
        return "notes"  # a bare topic typed as into a search box: look in the notes
    target = knn_classify(clause, embed or _get_default_embed())[0]
    if target == "notes" and not _PERSONAL.search(clause):
        return "chat"  # "who wrote War and Peace?" is about the world, not the person's notes
    return target


def decompose(text: str, *, embed: EmbedFn | None = None) -> list[Intent]:
    """Split ``text`` into ordered atomic intents (empty list for blank text).

    ``embed`` maps texts to unit rows; the default is the in-process MiniLM, built on first use.
    """
    if not text or not text.strip():
        return []
    clauses: list[str] = []
    for clause in split_clauses(text):
        # "fetch URL. Summarize it." / "remember when X? how did we do it?": one intent
        if clauses and is_follow_up(clause) and not is_pleasantry(clauses[-1]):
            clauses[-1] = f"{clauses[-1]}; {clause}"
        else:
            clauses.append(clause)
    intents: list[Intent] = []
    for clause in clauses:
        body = strip_greeting(clause)
        target = classify(body, embed)
        intents.append(Intent(target, extract_args(target, body), clause))
    # A bare "hi"/"thanks" next to real requests is politeness, not an intent of its own.
    if any(i.target != "chat" for i in intents):
        intents = [i for i in intents if not (i.target == "chat" and is_pleasantry(i.text))]
    return intents
