"""Offline intent decomposition: request text -> ordered list of atomic intents.

Pipeline: split the request into clauses (``rules.split_clauses``, plus a split wherever the
classifier reads the two sides of an "and"/comma as confident requests for different targets),
take a target from unambiguous syntax (``rules.rule_target``) or else from the learned
classifier (``classifier.py``: logistic regression over MiniLM embeddings), then pull the
target's arguments out of the clause.  No LLM and no network: offline and deterministic.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import regex_cache
from .rules import (
    CAPTURE_LABEL,
    extract_args,
    is_follow_up,
    is_pleasantry,
    is_strong_joint,
    rule_target,
    split_candidates,
    split_clauses,
    split_sentences,
    strip_greeting,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TARGETS", "WRITE_TARGETS", "EmbedFn", "Hint", "Intent", "Verdict", "classify",
           "decompose", "is_back_reference", "is_bare_directive", "is_imperative", "is_question",
           "is_source_directive", "is_text_operation",
           "verdict",
           "warm"]

TARGETS: tuple[str, ...] = ("notes", "shell", "gtd", "review", "web", "foundry", "skill-creator",
                            "recollect", "chat")
WRITE_TARGETS = frozenset({"foundry", "skill-creator"})
"""Targets whose skills create code or folders: they need a confident, imperative request."""

EmbedFn = Callable[[Sequence[str]], "np.ndarray"]
"""Texts -> float rows of unit length, one per text, in order."""
Hint = Callable[[str], bool]
"""Clause -> is it a GTD request about an item the memex holds (index-backed, optional)?"""


def _hinted(clause: str, hint: Hint | None) -> bool:
    """The index-backed GTD hint, below the rules for unambiguous syntax."""
    return (hint is not None and not is_pleasantry(clause) and rule_target(clause) is None
            and hint(clause))

ABSTAIN = 0.30
"""Below this top probability the clause is like no tool request: it is chat (chosen on the
hand-written rows' cross-validated probabilities: 0.3 ~ 0.4 > 0.5)."""
MIN_SIMILARITY = 0.20
"""Below this best cosine to any training utterance the clause is out of distribution: chat
(kept low: MiniLM's nearness is dominated by topic words, so an unseen topic in a familiar
request — "what do my notes say about BM25?" — is only ~0.3 near; below 0.2 is noise)."""
WRITE_CONFIDENCE = 0.50
"""A code-creating target must be at least this sure (and phrased as a command: the command
form is the safety, this only stops a coin toss; cross-validated: 0.5 kept 0.7% more
requests right than 0.8)."""
SPLIT_CONFIDENCE = 0.95
"""Both sides of an unmarked "and"/comma must be this sure, for different targets, to split."""

@dataclass(frozen=True)
class Intent:
    """One atomic request for one target, with the span of the request it came from."""

    target: str
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire form ``{"target": ..., **args}`` the dispatcher consumes."""
        return {"target": self.target, **self.args}


# -- embedding & classifier -----------------------------------------------------------------------

_lock = threading.Lock()
_default_embed: EmbedFn | None = None
DEFAULT_MODEL_ID = "minilm:all-MiniLM-L6-v2"


def _get_default_embed() -> EmbedFn:
    """Build the in-process MiniLM once (it takes ~0.4-1.5 s) and reuse it."""
    global _default_embed
    with _lock:
        if _default_embed is None:
            from opencortex.embed import get_embedder

            _default_embed = get_embedder("minilm").embed
        return _default_embed


@dataclass(frozen=True)
class Verdict:
    """The classifier's reading of one clause: the chosen target, its probability, and the
    full distribution (for the bench and for abstention)."""

    target: str
    p: float
    probs: dict[str, float]
    near: float = 1.0
    """Best cosine to a training utterance: low means like nothing the model was taught."""


_QWORD_RE = regex_cache.compile(
    r"^(?:what|what's|whats|which|how|when|where|who|whose|why|is|are|am|was|were|do|does|did|"
    r"have|has|any|anything|qu'est-ce|quel|quelle|quand|où|comment|est-ce|was|wie|wann|wo|"
    r"welche|welcher|qué|que|cuál|cómo|cuándo|dónde|¿\w*)\b", re.IGNORECASE)
_OPENERS_RE = regex_cache.compile(
    r"^(?:(?:hey|ok|okay|so|um|please|also|then|now|quick one|let's|lets|let us)[,:]?\s+|"
    r"(?:can|could|would|will) you(?: please)?\s+|i(?:'d| would) like you to\s+|"
    r"i (?:want|need) you to\s+|go ahead and\s+|s'il te plaît\s+|bitte\s+|por favor\s+)+",
    re.IGNORECASE)
_WRITE_VERBS = frozenset("""create make build write draft design develop generate scaffold set
bootstrap init initialise initialize spin kick begin start add teach learn give extend new author
lay open craft grow package wrap turn acquire pick equip program code implement automate compose
assemble forge produce construct whip devise invent train wire hook integrate plug crée créer crées apprends erstelle erstell leg bring crea aprende genera
prepara prepare prépare monta monte arranca inicia inicializa initialise lance lanza hazme haz
hazte fais fabrique développe desarrolla génère ajoute añade agrega enséñate mach mache bau
baue richte starte entwickle füge lege avvia inizia imposta creati impara aggiungi cria criar
começa começar adiciona ensina""".split())
"""Creating verbs first in a command (English, and the es/fr/de/it/pt imperatives the
training set's other languages use)."""
_WANT_RE = regex_cache.compile(r"^(?:i(?:'d like| would like| want| need)\s+(?:a|an|to)|quiero que|"
                      r"quisiera que|je veux que|je voudrais que|ich möchte,? dass|"
                      r"ich will,? dass|voglio che|vorrei che|quero que)\b", re.IGNORECASE)


def is_question(clause: str) -> bool:
    """Asked, not commanded: a question word first or a question mark (after politeness:
    "can you create …?" is a polite command, not a question)."""
    c = clause.strip()
    body = _OPENERS_RE.sub("", c)
    if body != c and not _QWORD_RE.match(body):
        return False  # "could you scaffold …?" asks for an act
    return bool(_QWORD_RE.match(body)) or c.endswith("?")


def is_imperative(clause: str) -> bool:
    """A command with a creating verb first (after politeness), or "I want a …": what a
    write-capable target needs before it may run.  The command may follow a remark ("we're
    redoing the attic, set up a project for it"): any comma-, colon- or dash-separated part
    of a clause that is no question may carry it."""
    if is_question(clause):
        return False
    for part in re.split(r"\s*(?:[,;:]|\s-\s|—)\s*", clause.strip()):
        body = _OPENERS_RE.sub("", part)
        if _WANT_RE.match(body):
            return True
        m = re.match(r"[\w'-]+", body.lower())
        if m and m.group(0) in _WRITE_VERBS:
            return True
    return False


_rows: OrderedDict[str, Any] = OrderedDict()
_ROWS_KEPT = 512


def _default_rows(fn: EmbedFn, clauses: Sequence[str]) -> np.ndarray:
    """The default embedder's rows for ``clauses``, each text embedded once (kept by text,
    the last 512): one request reads its clauses several times (the split by meaning, the
    classification, the router's support check of a model's proposal)."""
    import numpy as np

    with _lock:
        missing = list(dict.fromkeys(c for c in clauses if c not in _rows))
    if missing:
        fresh = fn(missing)
        with _lock:
            for c, row in zip(missing, fresh, strict=True):
                _rows[c] = row
            while len(_rows) > _ROWS_KEPT:
                _rows.popitem(last=False)
    with _lock:
        got = [_rows[c] for c in clauses if c in _rows]
        for c in dict.fromkeys(clauses):
            if c in _rows:
                _rows.move_to_end(c)
    if len(got) < len(clauses):  # evicted meanwhile by another thread
        return fn(list(clauses))
    return np.stack(got)


def _verdicts(clauses: Sequence[str], embed: EmbedFn | None) -> list[Verdict]:
    """The classifier's reading of each clause (one batched embedding call)."""
    if not clauses:
        return []
    from .classifier import cached_classifier, features

    fn = embed or _get_default_embed()
    clf = cached_classifier(fn, DEFAULT_MODEL_ID if embed is None else None)
    emb = fn(list(clauses)) if embed is not None else _default_rows(fn, clauses)
    probs, nears = clf.predict(features(emb, clauses), emb)
    out = []
    for row, near in zip(probs, nears, strict=True):
        dist = {t: float(p) for t, p in zip(clf.labels, row, strict=True)}
        best = max(clf.labels, key=lambda t: (round(dist[t], 9), -TARGETS.index(t)))
        out.append(Verdict(best, dist[best], dist, float(near)))
    return out


def warm(*, retrain: bool = False) -> dict[str, Any]:
    """Build the default embedder and make sure the classifier is trained and cached (what the
    first worded request would otherwise pay for): for ``opencortex router train`` and the
    quick start.  Returns what it did and how long each part took."""
    import time

    from .classifier import SOURCES, cached_classifier, model_state

    t0 = time.perf_counter()
    fn = _get_default_embed()
    t1 = time.perf_counter()
    before = model_state(DEFAULT_MODEL_ID)
    clf = cached_classifier(fn, DEFAULT_MODEL_ID, retrain=retrain)
    t2 = time.perf_counter()
    after = model_state(DEFAULT_MODEL_ID)
    trained = retrain or before["state"] == "stale"
    return {"ok": True, "trained": trained,
            "source": "trained now" if trained else {"shipped": "shipped"}.get(before["state"],
                                                                                "cached"),
            "cache": after["file"],
            "train_file": str(SOURCES[0].path),
            "train_files": [{"path": str(s.path), "weight": s.weight, "per_group": s.per_group}
                            for s in SOURCES],
            "labels": clf.labels, "rows": 0 if clf.anchors is None else len(clf.anchors),
            "embedder_seconds": round(t1 - t0, 3), "classifier_seconds": round(t2 - t1, 3)}


def _decide(clause: str, v: Verdict) -> str:
    """The target for a classified clause: abstain to chat when unsure; a write-capable
    target only for a confident command, a question goes to the best read-only target."""
    target = v.target
    if v.near < MIN_SIMILARITY:
        return "chat"
    if target in WRITE_TARGETS and (v.p < WRITE_CONFIDENCE or not is_imperative(clause)):
        rest = {t: p for t, p in v.probs.items() if t not in WRITE_TARGETS}
        target = max(rest, key=lambda t: (round(rest[t], 9), -TARGETS.index(t)))
        return target if rest[target] >= ABSTAIN / 2 else "chat"
    if v.p < ABSTAIN:
        return "chat"
    return target


def verdict(clause: str, embed: EmbedFn | None = None) -> Verdict:
    """Classifier reading of one clause, without rules (for the bench and the recall skill)."""
    return _verdicts([clause], embed)[0]


def classify(clause: str, embed: EmbedFn | None = None) -> str:
    """Target for one clause: syntax rules when the syntax is unambiguous, else the classifier."""
    return _classify_many([clause], embed)[0]


_SENTENCE_WORDS = frozenset("""i you we he she they it that this was is are am be me us my
thanks thank please ok okay cheers hi hello hey bye no yes nope never mind merci danke gracias
je tu nous ich du wir yo c'est ça das es""".split())


def is_keyword_query(clause: str) -> bool:
    """Search-box syntax: a short bare topic with no verb, question word, pronoun or question
    mark ("caching strategies", "zfs snapshots") — what people type to look in their notes."""
    from .rules import _QWORDS, _VERBS, _first_word, _is_request

    c = clause.strip()
    words = c.split()
    if not words or len(words) > 4 or "?" in c or _is_request(c):
        return False
    if {w.strip(",.!;:'\"").lower() for w in words} & _SENTENCE_WORDS:
        return False
    w = _first_word(c)
    return w not in _QWORDS and w not in _VERBS and not w.startswith(("/", "$", "`"))


_NOTES_SOURCE = regex_cache.compile(
    r"\b(?:my|the)\s+(?:[\w'-]+\s+)?(?:notes|note|journal|journals|diary|notebook|org\s+files|"
    r"memex|zettelkasten|log\s*book)\b|\b(?:did|have|had)\s+i\s+(?:ever\s+)?(?:write|written|"
    r"note|noted|jot|jotted|log|logged)\b|\bi\s+(?:wrote|noted|jotted)\b", re.IGNORECASE)
_LIST_WORDS = regex_cache.compile(
    r"\b(?:tasks?|todos?|to-dos?|agenda|inbox|due|overdue|deadlines?|scheduled|waiting|next\s+"
    r"actions?|projects?|remind(?:er)?s?)\b", re.IGNORECASE)


_GENERAL = regex_cache.compile(
    r"\b(?:usually|typically|normally|generally|in\s+general|on\s+average|as\s+a\s+rule|"
    r"most\s+people|people|anyone|someone|somebody|everyone|one's|a\s+person|the\s+average|"
    r"is\s+it\s+(?:normal|common|usual|true|possible)|"
    r"(?:if|when|once|unless|after|before|until)\s+(?:you|one)\s+(?!me\b)\w+|"
    r"in\s+(?:the\s+)?(?i:us|usa|uk|eu|europe|"
    r"america|england|britain|germany|france|spain|italy|canada|australia|japan|china|india|"
    r"most\s+countries)\s*\??$)")
"""What a general-knowledge question says: how things usually are, for people at large,
in a country ("when are taxes usually due in Germany?"), or for a generic "you" in a
condition ("what happens if you file late?") — about the world, not a list."""


def asks_in_general(clause: str) -> bool:
    """A question about how things are in general, with no word of the person's own (I,
    my, we…): however task-like its words (deadline, due, week), no list answers it."""
    return (is_question(clause) and bool(_GENERAL.search(clause))
            and not _FIRST_PERSON.search(_GENERAL.sub(" ", clause)))  # "in the US": no "us"


def names_the_notes(clause: str) -> bool:
    """A question that names the person's notes as where the answer is ("in my journal,
    what happened on the 3rd?", "what did I write about the deadline?"): the notes', even
    when it speaks of dates or tasks — unless it asks about the task list itself ("what
    tasks are due?") without a note word."""
    if not (is_question(clause) or _ASKS_NOTES.search(clause)) or \
            not _NOTES_SOURCE.search(clause):
        return False
    m = _NOTES_SOURCE.search(clause)
    return bool(m) and (not _LIST_WORDS.search(clause) or bool(
        re.search(r"\b(?:notes?|journal|diary|notebook|wrote|written|jot)", clause, re.I)))


_REMINDER = regex_cache.compile(
    r"^(?:[^?,;]{0,60}?(?:\s|,\s*))?(?:please\s+)?(?:can\s+you\s+|could\s+you\s+)?"
    r"(?:remind|nudge|ping|prompt)\s+me\s+(?:[^?]{0,40}?\s)?(?:to|that)\s+\w"
    r"|^(?:[^?,;]{0,60}?(?:\s|,\s*))?(?:please\s+)?don'?t\s+let\s+me\s+forget\b", re.I)
"""A reminder asked for, wherever its day is said ("in three weeks nudge me to …", "on the
last friday, ping me to …"): a new task, whichever words the rest has (the classifier reads
a clause that opens with its date poorly).  "remind me what X is" asks, it is no task."""


_PURPOSE = re.compile(
    r"[,;]?\s+(?:so(?:\s+that)?\s+(?:you|i|we|it)(?:'re|\s+are|\s+am)?\s+(?:can|could|will|may|"
    r"able\s+to)|(?:that|which)\s+(?:lets|let|allows|allow|enables|enable)\s+(?:you|me|us)|"
    r"to\s+(?:let|allow|enable)\s+(?:you|me|us))\b", re.IGNORECASE)
"""Where a request's purpose starts ("write a plugin so you can check the server", "… that
lets you read my calendar"): what follows says what the thing made or done is for."""


def purpose_head(clause: str) -> str:
    """The request without its purpose clause, which the classifier reads (the purpose's own
    verb — "so you can check the server's status" — is no request: "write a plugin" is);
    the clause itself when what precedes the purpose is under two words."""
    m = _PURPOSE.search(clause)
    if m is None or len(clause[:m.start()].split()) < 2:
        return clause
    return clause[:m.start()]


def _classify_many(clauses: Sequence[str], embed: EmbedFn | None,
                   hint: Hint | None = None) -> list[str]:
    out: list[str | None] = []
    todo: list[int] = []
    keyword: set[int] = set()
    for i, c in enumerate(clauses):
        if is_pleasantry(c):
            out.append("chat")
            continue
        if _hinted(c, hint):
            out.append("gtd")
            continue
        out.append(rule_target(c))
        if out[-1] is None and _REMINDER.search(c) and not is_question(c):
            out[-1] = "gtd"
        if out[-1] is None:
            todo.append(i)
            if is_keyword_query(c):
                keyword.add(i)
    for i, v in zip(todo, _verdicts([purpose_head(clauses[i]) for i in todo], embed),
                    strict=True):
        out[i] = _decide(clauses[i], v)
        if out[i] in ("gtd", "chat", "web", "review") and names_the_notes(clauses[i]):
            out[i] = "notes"  # "in my journal, what happened on the 3rd?": the notes' content
        elif out[i] in ("gtd", "review") and asks_in_general(clauses[i]):
            out[i] = "chat"  # "when are taxes usually due in germany?": knowledge, no list
        if i in keyword and out[i] == "chat" and v.target != "chat":
            # a bare topic the classifier cannot place ("zfs snapshots"): look in the notes.
            # Not a rule of its own: most short verbless clauses are commands or remarks
            # ("line count of main.py", "tax return: done"), which the classifier reads
            out[i] = "notes"
    return [t or "chat" for t in out]


_BARE_DIRECTIVE = regex_cache.compile(
    r"^(?:and\s+|also\s+|then\s+|so\s+|just\s+|please\s+|pls\s+|can you\s+|could you\s+)*"
    r"(?:(?:check|search|look(?:\s+it)?(?:\s+up)?|google(?:\s+it)?|find out|see|verify|confirm)"
    r"(?:\s+(?:it|that|this))?(?:\s+(?:online|on the (?:web|internet|net)|the (?:web|internet)|"
    r"on google|in my notes|my notes|the notes|in the memex|for me))+"
    r"|look (?:it|that) up|google (?:it|that))\s*(?:please|pls|for me)?[.!?]*$", re.IGNORECASE)
"""A clause that only names where to look ("check online", "look it up on the web", "check
my notes"): it says how to do the request before it, it is no request of its own."""


def is_bare_directive(clause: str) -> bool:
    """Does the clause only say which tool to use for the clause before it?"""
    return bool(_BARE_DIRECTIVE.match(clause.strip()))


_SOURCE_DIRECTIVE = regex_cache.compile(
    r"^(?:and\s+|also\s+|just\s+|please\s+|pls\s+)*"
    r"(?:check|see|look (?:at|on|in)|consult|use|read|try|ask|search)\s+"
    r"(?:the\s+|their\s+|its\s+|his\s+|her\s+|a\s+|an\s+)?(?:[\w'’.-]+\s+){0,4}?"
    r"(?:page|site|website|web ?site|docs|documentation|wiki|wikipedia|manual|handbook|faq|"
    r"forum|forums|blog|changelog|release notes|announcement|news|reddit|stack ?overflow|"
    r"github|readme|homepage|source|sources)"
    r"(?:\s+(?:for (?:it|that|this|me)|first|please|pls))*\s*[.!?]*$", re.IGNORECASE)
"""A clause that names only where to find the answer ("check the official docs", "see the
project's wiki page"): after a question it says how to answer it, no request of its own."""
_BARE_URL = regex_cache.compile(r"^(?:<)?(?:https?://|www\.)\S+?(?:>)?[.!?]*$", re.IGNORECASE)
"""A clause that is nothing but a URL: the page the clause beside it is about."""


def is_source_directive(clause: str, previous: str) -> bool:
    """Does ``clause`` only point the question before it at a source (a page, the docs, a
    bare URL)?  Only after a question: "find my notes on X, check the wiki" asks for two
    things, "what changed in X? check the official page" for one."""
    c = clause.strip()
    if _BARE_URL.match(c):
        return True
    return bool(_SOURCE_DIRECTIVE.match(c)) and is_question(previous)


def _join_directives(clauses: list[str], sentence_of: list[int]
                     ) -> tuple[list[str], list[int], dict[int, str]]:
    """Fold each bare directive (a tool, a source or a bare URL) into the clause before it;
    the joined clause takes the directive's target (returned by index), since the directive
    names the tool."""
    out: list[str] = []
    sents: list[int] = []
    forced: dict[int, str] = {}
    for c, n in zip(clauses, sentence_of, strict=True):
        if out and (is_bare_directive(c) or is_source_directive(c, out[-1])):
            prev = out[-1].rstrip()
            sep = " " if prev.endswith((",", ";", ":", ".", "?", "!")) else ", "
            out[-1] = f"{prev}{sep}{c}"
            forced[len(out) - 1] = c
            continue
        out.append(c)
        sents.append(n)
    return out, sents, forced


def _split_by_meaning(clause: str, embed: EmbedFn | None) -> list[str]:
    """Cut at an unmarked "and"/comma when both sides read, confidently, as requests for
    different targets ("look up X online and remind me to Y"): general where a verb list
    is not."""
    cands = split_candidates(clause)
    if not cands:
        return [clause]
    sides = [s for cut in cands for s in cut]
    vs = _verdicts(sides, embed)
    for n, (left, right) in enumerate(cands):
        lv, rv = vs[2 * n], vs[2 * n + 1]
        if (lv.target != rv.target and min(lv.p, rv.p) >= SPLIT_CONFIDENCE
                and "chat" not in (lv.target, rv.target)):
            return [left, *_split_by_meaning(right, embed)]
    return [clause]


_WORDCHAR = r"(?:[^:'\"“”‘’`]|(?<=\w)['’](?=\w))"  # an apostrophe inside a word is no quote
_PAYLOAD = regex_cache.compile(rf"^(?P<instr>{_WORDCHAR}+?)(?:\s*:|\s+(?P<dash>[—–]|--))\s+"
                      r"(?P<payload>\S.*)$"
                      rf"|^(?P<before>{_WORDCHAR}*?)"
                      r"(?P<quote>(?<!\w)['\"“‘][^'\"“”‘’]+['\"”’](?!\w))(?P<after>.*)$")
"""An instruction followed by its text ("rewrite this politely: …", "tl;dr — …", "how do you
say '…' in German"): the part after the colon or the spaced dash, or inside the quotes, is
what the instruction acts on."""


_ABOUT_THE_RESULT = regex_cache.compile(
    r"(?:,\s*|\s+)(?:and\s+)?(?:then\s+)?(?P<req>(?:please\s+)?(?:remind\s+me|send|email|mail|"
    r"save|add|put|post|share|forward|schedule|file)\b[^,;]*\b(?:it|that|them|the\s+result)\b"
    r"[^,;]*)$", re.IGNORECASE)
"""A request that closes a text instruction and acts on its result ("translate this: …, and
remind me to send it to Jonas"): not part of the text."""


def _after_the_text(sentence: str) -> tuple[str, str]:
    """A text instruction, and the request after the carried text that acts on its result
    (or "")."""
    m = _PAYLOAD.match(sentence.strip())
    if m is None or m.group("payload") is None:
        return sentence, ""
    at = _ABOUT_THE_RESULT.search(sentence, m.start("payload"))
    if at is None or at.start() <= m.start("payload"):
        return sentence, ""
    return sentence[:at.start()].rstrip(" ,"), at.group("req").strip()


_POINTS_AT_TEXT = regex_cache.compile(
    r"\b(?:this|these|the\s+following|below|the\s+(?:text|paragraph|passage|message|email|"
    r"e-mail|draft|lines?|sentences?)\s+below)(?:\s+(?:text|paragraph|passage|message|email|"
    r"e-mail|mail|draft|letter|note|post|tweet|snippet|lines?|sentences?|words?|list|bit|"
    r"part))?(?:\s+[\w'-]+){0,3}\s*[:?.!]*$", re.IGNORECASE)
"""An instruction that ends pointing at a text still to come ("proofread this paragraph?",
"rewrite the following more warmly."): the sentences after it are that text."""
_AGENT_AGAIN = regex_cache.compile(
    r"^(?:and\s+)?(?:then|after\s+that|afterwards|once\s+(?:that's|that\s+is|it's|you're)\s+"
    r"done|when\s+(?:that's|you're)\s+done)\b|^(?:please\s+)?(?:remind\s+me|send|email|save|"
    r"add|put|post|share|forward|file)\b.*\b(?:it|them|the\s+(?:result|summary|"
    r"translation|text))\b", re.IGNORECASE)
"""A sentence after a carried text that speaks to the agent again: a request that comes
after the instruction ("then …", "after that …") or acts on its result ("… send it to
Jonas")."""


_SUBJECT = regex_cache.compile(r"^(?:i|i'm|i've|i'd|we|we're|you|you're|it|it's|that|that's|this|"
                      r"these|those|there|he|she|they|my|our|his|her|their)\b", re.IGNORECASE)


def _commands(sentence: str) -> bool:
    """Said as an instruction to the agent — no question word, no statement with a subject
    first ("I love this.", "that's this."), though it may end in a polite "?" ("can you
    proofread this paragraph?"): only an instruction carries a text after it."""
    body = _OPENERS_RE.sub("", strip_greeting(sentence).strip())
    return not _QWORD_RE.match(body) and not _SUBJECT.match(body)


def _carried_texts(sentences: list[str], embed: EmbedFn | None) -> tuple[list[str], set[str]]:
    """Join a pasted text that runs over several sentences to the instruction carrying it
    ("summarize this: <several sentences>", "proofread this paragraph? <sentences>"), so
    that the words of the text — its dates, its "run", its "remind everyone" — never route
    a request: the text is data.  The text runs to the end of the request, or up to a
    sentence that speaks to the agent again (``_AGENT_AGAIN``).  Returns the sentences
    (joined) and the joined ones that are a text operation headed by an instruction with no
    colon (the colon kind is recognised by ``is_text_operation`` as before)."""
    out: list[str] = []
    headed: set[str] = set()
    i = 0
    while i < len(sentences):
        s = sentences[i]
        j = i + 1
        if j < len(sentences) and not _AGENT_AGAIN.search(sentences[j]):
            m = _PAYLOAD.match(s.strip())
            colon = m is not None and m.group("payload") is not None
            if colon or _POINTS_AT_TEXT.search(s):
                text_op = (is_text_operation(s, embed) if colon else
                           len(re.findall(r"\w+", strip_greeting(s))) >= 2
                           and _commands(s)
                           and _classify_many([strip_greeting(s)], embed)[0] == "chat")
                if text_op:
                    while j < len(sentences) and not _AGENT_AGAIN.search(sentences[j]):
                        j += 1
                    s = " ".join(sentences[i:j])
                    if not colon:
                        headed.add(s)
                    out.append(s)
                    i = j
                    continue
        out.append(s)
        i += 1
    return out, headed


def _dash_carries(m: re.Match[str]) -> bool:
    """A dash carries a text only when what follows it is a text, longer than the
    instruction and of five words at least ("tl;dr — <the memo>"); a short remark after a
    dash ("buy milk -- urgent") belongs to the request, and only after an instruction (a
    remark with its subject, "I keep forgetting — …", carries nothing)."""
    said = len(m.group("payload").split())
    return (said >= 5 and said > len(m.group("instr").split())
            and _commands(m.group("instr")))  # "I keep forgetting — note that …": no text


def is_text_operation(sentence: str, embed: EmbedFn | None) -> bool:
    """Is ``sentence`` one request about a text it carries (translate, rewrite, spell-check,
    shorten), so that the words of that text must not route it?  Only when the instruction
    alone, with the text masked, is a chat request of at least two words, and no URL is
    given: "remind me: …", "add 'milk' to my list", "idea: …" or "read this: URL" keep their
    own routing."""
    m = _PAYLOAD.match(sentence.strip())
    if m is None or re.search(r"https?://|www\.", sentence):  # a URL is a page to open
        return False
    if m.group("dash") and not _dash_carries(m):
        return False
    if m.group("instr") is not None:
        instr = m.group("instr")
    else:  # the quoted text masked as a neutral object: the instruction reads as with any
        instr = f"{m.group('before')}'something'{m.group('after')}"  # ('…' read as chat)
    body = strip_greeting(instr).strip()
    if len(re.findall(r"\w+", body)) < 2:
        return False
    target = _classify_many([body], embed)[0]
    if target == "shell" and m.group("payload") is not None and _POINTS_AT_TEXT.search(body):
        # "count the words in this: …": a command's verb, but what it acts on is the text
        # given, not the machine — unless the text is itself a command ("run this: ls -la")
        return rule_target(m.group("payload")) != "shell"
    return target == "chat"


_MACHINE_STATE = regex_cache.compile(
    r"(?:^|\s)[~/.][\w./-]|\b\w+\.(?:py|rs|go|js|ts|json|toml|ya?ml|org|md|txt|log|sh)\b|"
    r"\b(?:disk|disks|partition|ram|cpu|load|uptime|ports?|process(?:es)?|pid|installed|"
    r"running|listening|branch|branches|repo|repository|commits?|working tree|stash|"
    r"directory|folder|kernel|battery|wi-?fi|ip address|this (?:machine|box|computer|laptop)|"
    r"right now|free space|space left)\b", re.IGNORECASE)
"""A question about the machine's state (a path or file, disk, memory, processes, ports, a
repository): what a command answers, never the notes."""
_STATE_NOW = regex_cache.compile(
    r"\b(?:left|free|used|usage|full|how (?:big|large|much space)|size of|right now|"
    r"currently|at the moment|running|listening|open|up|installed|status)\b", re.IGNORECASE)
"""Words asking how the machine is now (space left, what runs, what is installed): with a
machine word, a command's question even when no command is named; without them a question
that mentions a disk or a folder ("where does the nightly copy go besides the usb disk?")
may be about what the person wrote."""
_LIVE = regex_cache.compile(
    r"\b(?:online|on the (?:web|internet|net)|web|internet|google|current(?:ly)?|latest|"
    r"today|tonight|tomorrow|yesterday|last night|this week|right now|news|weather|forecast|"
    r"score|exchange rate|outage|price|prices|stock)\b", re.IGNORECASE)
"""A question about the world as it is now, or one that names the web: the web's, not the
notes'."""


_GTD_WORDS = regex_cache.compile(
    r"\b(?:tasks?|todos?|to-dos?|due|deadlines?|overdue|scheduled|agenda|next actions?|"
    r"waiting|inbox|projects?|done|finished|remind(?:er)?s?|errands?|calendar|someday|"
    r"maybe|tagged|contexts?|on my (?:plate|"
    r"list)|today|tomorrow|tonight|this week|next week|weekend)\b", re.IGNORECASE)
"""Words of a question over the task list ("what's due friday?"): GTD's, not the notes'."""
_GTD_LISTS = regex_cache.compile(
    r"\b(?:someday|maybe|inbox|waiting|tagged|agenda|next actions?|projects?|tasks?|todos?|"
    r"to-dos?|errands?|contexts?|on my (?:plate|list))\b|@\w", re.IGNORECASE)
"""Words naming one of the task lists ("anything in someday/maybe?"): GTD's, whatever op
the words alone read as."""
_FIRST_PERSON = regex_cache.compile(r"\b(?:i|i'm|i've|i'd|my|me|mine|we|our|us)\b", re.IGNORECASE)
_WORK_TOGETHER = regex_cache.compile(
    r"\b(?:you|you've|you'd|your|together|sessions?|chats?|conversations?|transcripts?)\b|"
    r"\b(?:did|didn't|had|hadn't|have|haven't|were|weren't)\s+we\b|"
    r"\bwe(?:'ve|'d)?\s+(?:\w+ed|did|had|were|got|went|made|found|wrote|built|came|said|"
    r"spoke|ran|set|put|chose|thought|took|gave|saw|knew|began|broke)\b", re.IGNORECASE)
"""Words of past work done with the agent (its sessions, "you", what "we" did — not "are we
using", the person's household): a question with them that the classifier reads as recall
stays recall — the notes answer what the person wrote,
recall what was done together."""


_GENERIC_I = re.compile(
    r"\b(?:how|what|when|where|which|why|who)\s+(?:[\w']+\s+){0,2}?(?:do|can|could|should|"
    r"would|shall|might|must)\s+i\b(?!\s+(?:have|own|keep|store|save|find|file)\b)"
    r"|^(?:can|could|should|would|shall|might|must)\s+i\b|\bif\s+i\b|\blike\s+i'?m\b",
    re.IGNORECASE)
"""The "I" of a how-to or advice question ("how do I convert …", "when would I pick …",
"explain like I'm five"): anyone's, not the person's own records ("do I have a note on …",
"what did I write …" stay the person's)."""


_ABOUT_NOTE = re.compile(r"\(about: [^()\n]+\)\s*$")
"""The heading at point the Emacs package adds to a question asked from a note ("how long
do I simmer the tomatoes? (about: Shakshuka / Method)"): the person points at their note."""


def is_personal(clause: str) -> bool:
    """Does the clause speak of the person's own things or past ("my", "we", "what did I
    …"), beyond the generic "I" of a how-to question, or point at one of their notes?"""
    return bool(_FIRST_PERSON.search(_GENERIC_I.sub(" ", clause))
                or _ABOUT_NOTE.search(clause))


def _asks_notes(intent: Intent, notes: Hint, forced: set[str], hint: Hint | None,
                embed: EmbedFn | None = None) -> bool:
    """Is this a question for the person's notes, read by the classifier as chat, web,
    shell, GTD or recall only for want of knowing the memex?  Syntax (a command, a URL, a slash), a
    named tool, a question about the machine's state (with a command to answer it) or the
    live world, a view of the task list and a question about a task it holds keep their
    target (a question is never a capture); a question about the
    person ("… my …", "what did I …") that would be chat goes to the notes even when they do
    not answer it (they say so, and what they hold nearest); any other one goes to the
    notes only when they answer it."""
    t, text = intent.target, intent.text
    asked = _ABOUT_NOTE.sub("", text).strip()  # the question before the heading it is about
    if t not in ("chat", "web", "shell", "gtd", "recollect") or not is_question(asked) or any(
            d in text for d in forced):
        return False
    if rule_target(text) is not None or is_pleasantry(text):
        return False
    if t == "gtd" and (_GTD_LISTS.search(text)
                       or (_GTD_WORDS.search(text) and intent.args.get("op") != "capture")
                       or (hint is not None and hint(text))):
        return False  # a view of the task list, or a question about a task it holds
    if t == "shell" and _MACHINE_STATE.search(text) and (
            intent.args.get("command") or _STATE_NOW.search(text)):
        return False
    if t == "web" and _LIVE.search(text):
        return False
    if t == "recollect" and _WORK_TOGETHER.search(text):
        return False  # past work with the agent ("that session where we …"): recall's
    if t == "chat" and is_personal(text):
        return True
    # a question the notes answer goes to them however surely the classifier reads it as
    # knowledge ("what are the two hard things in computer science?" beside the note that
    # holds them, read as chat at 0.96; "is a tomato a fruit?" at 1.0): ask the notes
    # first, and let the answerer's own threshold say whether a note holds the answer
    return notes(text)


def _web_unasked(intent: Intent, forced: set[str]) -> bool:
    """A question the classifier reads as the web's that never asks for the web: no URL,
    no named source or tool, no word of the web or of the world now (``_LIVE``)."""
    text = intent.text
    return (intent.target == "web" and not intent.args.get("url") and is_question(text)
            and not any(d in text for d in forced) and rule_target(text) is None
            and not is_pleasantry(text) and not _LIVE.search(text))


def _notes_first(intents: list[Intent], notes: Hint, forced: set[str], hint: Hint | None,
                 web: bool, embed: EmbedFn | None = None) -> list[Intent]:
    """Questions go to the memex first (``_asks_notes``).  A question read as the web's
    that the notes do not answer and that never asked for the web goes to the web only when
    ``web`` (a model is configured: it reads the pages), marked ``notes_empty`` so the reply
    says why the web was consulted; offline it stays with the notes, which say that nothing
    in them answers it and show the closest."""
    out: list[Intent] = []
    for i in intents:
        if _asks_notes(i, notes, forced, hint, embed):
            out.append(Intent("notes", extract_args("notes", i.text), i.text))
        elif _web_unasked(i, forced):
            out.append(Intent("web", {**i.args, "notes_empty": True}, i.text) if web else
                       Intent("notes", extract_args("notes", i.text), i.text))
        else:
            out.append(i)
    return out


def _labelled_whole(sentences: list[str]) -> list[str]:
    """A labelled capture holds its text as said: a question or an exclamation inside it
    ("note to self: which hinge fits? ask at the shop") does not end it — the sentence after
    stays with it, unless that one is a question or a label of its own."""
    out: list[str] = []
    for s in sentences:
        if out and CAPTURE_LABEL.match(out[-1]) and out[-1].rstrip().endswith(("?", "!")) \
                and not is_question(s) and not CAPTURE_LABEL.match(s):
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def decompose(text: str, *, embed: EmbedFn | None = None,
              hint: Hint | None = None, notes: Hint | None = None,
              web: bool = False) -> list[Intent]:
    """Split ``text`` into ordered atomic intents (empty list for blank text).

    ``embed`` maps texts to unit rows; the default is the in-process MiniLM, built on first use
    (the classifier's weights come from the cache, trained once per training set).  ``hint``
    (the router skill passes ``skills.gtd_route.hint(memex)``) marks a clause as a GTD request
    about an item the index holds: such a clause is kept whole and goes to gtd unless a rule
    for unambiguous syntax claims it.  ``notes`` (the router skill passes the notes
    answerer's test) marks a question the person's notes answer: such a question goes to
    notes rather than to chat, web, shell or a capture (``_asks_notes``: questions go to the
    memex first); with it, ``web`` says whether a question the notes do not answer may go
    to the web unasked (a model is configured: ``_notes_first``).
    """
    if not text or not text.strip():
        return []
    about = _ABOUT_NOTE.search(text)
    if about is not None and text[:about.start()].strip():
        # the heading the Emacs package names is where the question points, not text the
        # request carries: route the question, ask the notes with the heading, keep it for
        # the answer (a notes or chat reply reads it)
        suffix = about.group(0).strip()
        ask = None if notes is None else (lambda t: notes(f"{t} {suffix}"))
        return [Intent(i.target, extract_args(i.target, f"{i.text} {suffix}"), f"{i.text} {suffix}")
                if i.target in ("notes", "chat") else i
                for i in decompose(text[:about.start()].rstrip(), embed=embed, hint=hint,
                                   notes=ask, web=web)]
    clauses: list[str] = []
    sentence_of: list[int] = []
    text_ops: set[str] = set()
    labelled: set[str] = set()
    sentences, headed = _carried_texts(_labelled_whole(split_sentences(text)), embed)
    for n, sentence in enumerate(sentences):
        if CAPTURE_LABEL.match(sentence):  # "capture: …": the label is the instruction
            labelled.add(sentence)
            clauses.append(sentence)
            sentence_of.append(n)
            continue
        if sentence in headed:  # "proofread this paragraph? <its sentences>": one request
            text_ops.add(sentence)
            clauses.append(sentence)
            sentence_of.append(n)
            continue
        if is_text_operation(sentence, embed):
            text, then = _after_the_text(sentence)
            text_ops.add(text)  # the quoted or pasted text is data, not a request
            clauses.append(text)
            sentence_of.append(n)
            if then:  # "…, and remind me to send it to Jonas": a request about the result
                clauses.append(then)
                sentence_of.append(n)
            continue
        for clause in split_clauses(sentence):
            # "fetch URL. Summarize it." / "remember when X? how did we do it?": one intent
            if clauses and is_follow_up(clause) and not is_pleasantry(clauses[-1]):
                clauses[-1] = f"{clauses[-1]}; {clause}"
            else:
                parts = [clause] if _hinted(clause, hint) else _split_by_meaning(clause, embed)
                clauses.extend(parts)
                sentence_of.extend([n] * len(parts))
    clauses, sentence_of, forced = _join_directives(clauses, sentence_of)
    bodies = [strip_greeting(c) for c in clauses]
    targets = _classify_many(bodies, embed, hint)
    targets = ["chat" if c in text_ops else "gtd" if c in labelled else t
               for t, c in zip(targets, clauses, strict=True)]
    if forced:
        directive_targets = _classify_many(list(forced.values()), embed)
        for i, t in zip(forced, directive_targets, strict=True):
            if t != "chat":
                targets[i] = t
    targets, bodies, clauses, sentence_of = _join_one_request(
        targets, bodies, clauses, sentence_of, sentences)
    items, sentence_of = _join_back_references(
        list(zip(targets, bodies, clauses, strict=True)), sentence_of)
    merged = _fold_context(items, sentence_of, text_ops)

    def carries_text(clause: str) -> bool:  # an instruction about a text: its words are data
        return any(op in clause for op in text_ops)

    if hint is not None:  # a remark joined to its command ("X isn't happening, move it…")
        merged = [("gtd" if t != "gtd" and not carries_text(c) and _hinted(b, hint) else t,
                   b, c) for t, b, c in merged]
    intents = [Intent(t, extract_args(t, b), c) for t, b, c in merged]
    if notes is not None:  # a directive names the tool, a text operation is chat: kept
        kept = set(forced.values()) | {i.text for i in intents if carries_text(i.text)}
        intents = _notes_first(intents, notes, kept, hint, web, embed)
    # A bare "hi"/"thanks" next to real requests is politeness, not an intent of its own.
    if any(i.target != "chat" for i in intents):
        intents = [i for i in intents if not (i.target == "chat" and is_pleasantry(i.text))]
    return intents


def _one_request(left: tuple[str, str], right: tuple[str, str]) -> str | None:
    """The one target of two clauses cut at a bare "and"/comma that make one request, or
    None when they are two: two verbs of one command line ("check the disk usage and show
    the largest folders"), or a question about the notes and a question that goes on about
    the same notes ("what did I write about the move, and what was left to do?") — its
    dates or tasks are the notes' content, not the task list."""
    (lt, lc), (rt, rc) = left, right
    if lt == rt and lt in ("shell", "chat"):
        return lt  # one command line; one conversational turn ("what's X, explain it simply")
    asks = is_question(lc) or bool(_ASKS_NOTES.search(lc))
    if lt == "notes" and asks and is_question(rc) and rule_target(rc) is None \
            and not CAPTURE_LABEL.match(rc) and rt in ("notes", "gtd", "chat", "review"):
        return "notes"
    return None


_ASKS_NOTES = regex_cache.compile(
    r"^(?:according\s+to|in|from|based\s+on|per|going\s+by|looking\s+at)\s+(?:my|the)\b"
    r"|[,:]\s*(?:what|which|when|who|whom|where|how|why|did|do|does|is|are|was|were)\b", re.I)
"""A notes clause that asks, though it does not open with a question word: a source said
first ("according to my notes, …", "in my journal, when …") or a question after a colon."""


def _join_one_request(targets: list[str], bodies: list[str], clauses: list[str],
                      sentence_of: list[int], sentences: list[str]
                      ) -> tuple[list[str], list[str], list[str], list[int]]:
    """Join the neighbouring clauses of one sentence that are one request (``_one_request``)
    when only a bare "and" or comma is between them; "then", "also", ";" keep two."""
    out_t: list[str] = []
    out_b: list[str] = []
    out_c: list[str] = []
    out_n: list[int] = []
    for t, b, c, n in zip(targets, bodies, clauses, sentence_of, strict=True):
        if out_c and out_n[-1] == n:
            sent = " ".join(sentences[n].split()) if n < len(sentences) else ""
            start = sent.find(out_c[-1])
            at = sent.find(c, start + len(out_c[-1])) if start >= 0 else -1
            joined = _one_request((out_t[-1], out_c[-1]), (t, c)) if at >= 0 else None
            if joined is not None and not is_strong_joint(sent[start + len(out_c[-1]):at],
                                                          c):
                whole = sent[start:at + len(c)]
                out_t[-1], out_b[-1], out_c[-1] = joined, strip_greeting(whole), whole
                continue
        out_t.append(t)
        out_b.append(b)
        out_c.append(c)
        out_n.append(n)
    return out_t, out_b, out_c, out_n


_BACK_REFERENCE = regex_cache.compile(
    r"^(?:(?:and|but|oh|also|btw|by the way|plus|oh and)[,:]?\s+)*(?:"
    # a statement about the item just named: "it's an errand", "that one is for work"
    r"(?:it|that|this|that one|this one)(?:'s|’s|\s+(?:is|isn't|is not|will|won't|'ll|"
    r"needs|should|has|can|can't|goes|belongs|must|might|may|takes|shouldn't|has to)\b)"
    # or a verb acting on it: "move it into january", "make that one high priority"
    r"|[\w'-]+\s+(?:it|them|that one|this one|that|this)\b(?!\s+(?:is|was|are)\b)"
    r"|(?:c'est|es ist|das ist|es)\b)", re.IGNORECASE)
"""A clause that names no item of its own but points back at the previous one."""


def is_back_reference(clause: str) -> bool:
    """Does the clause only add to the previous clause's item ("… . it's an errand",
    "…, move it into january") rather than make a request of its own?"""
    c = clause.strip()
    return bool(_BACK_REFERENCE.match(c)) and rule_target(c) is None


def _join_back_references(items: list[tuple[str, str, str]], sentence_of: list[int]
                          ) -> tuple[list[tuple[str, str, str]], list[int]]:
    """Keep one GTD request whole: a back-referring clause beside a task ("jot down: X. it's an
    errand") is a slot of that task, not a note or a chat of its own, and a back-referring task
    command after a remark about the item ("X won't happen this year, push it to january")
    takes the remark with it (either half may read as notes or chat alone: together they are
    one GTD request).  A back reference to another tool's request ("… and save it to my
    notes") stays separate; a bare remark after any request belongs to it."""
    out: list[tuple[str, str, str]] = []
    sents: list[int] = []
    for (t, b, c), n in zip(items, sentence_of, strict=True):
        if out and is_back_reference(c):
            pt, pb, pc = out[-1]
            joined = None
            if "gtd" in (pt, t) and {pt, t} <= {"gtd", "notes", "chat", "review"}:
                joined = "gtd"  # a task and a remark on it ("… it's an errand"): one task
            elif t == "chat" and pt != "chat":
                joined = pt
            if joined is not None:
                sep = ". " if n != sents[-1] else ", "
                if pc.rstrip().endswith((".", "!", "?", ",", ";", ":")):
                    sep = " "
                out[-1] = (joined, f"{pb}{sep}{b}", f"{pc}{sep}{c}")
                continue
        out.append((t, b, c))
        sents.append(n)
    return out, sents


_ORG_STAMP = regex_cache.compile(r"[<\[]\d{4}-\d\d-\d\d[^>\]\n]{0,40}[>\]]|^\s*(?:SCHEDULED|DEADLINE|"
                        r"CLOCK|CLOSED):", re.M)
_ORDER_WORD = regex_cache.compile(
    r"^\W*(?:please\s+)?(?:remind|add|schedule|capture|put|move|set|create|make|note|todo|mark|"
    r"cancel|plan|file|log|track|remember|reschedule|postpone|push|defer|block|reserve)\b",
    re.IGNORECASE)


def _quoted_org(clause: str) -> bool:
    """A sentence of pasted Org (a timestamp, a planning or clock line) with at most a few
    words of its own and no order ("book club <2026-12-09 Wed 19:00>"): data the question
    before it asks about, never a request of its own (text is data, not a command)."""
    if not _ORG_STAMP.search(clause) or _ORDER_WORD.match(clause):
        return False
    rest = _ORG_STAMP.sub(" ", clause)
    return len(re.findall(r"[^\W\d_]+", rest)) <= 5


def _fold_context(items: list[tuple[str, str, str]], sentence_of: list[int],
                  text_ops: frozenset[str] | set[str] = frozenset()
                  ) -> list[tuple[str, str, str]]:
    """A sentence that is no tool request ("I'm flying to Oslo on Friday.") is context for
    the request in the sentence beside it, not an intent of its own: fold it into that one
    (the next sentence, else the previous).  Two such sentences in a row are one chat.  A
    question after a request ("… . also, how far is Mars?"), or an instruction about a
    text it carries (``text_ops``), is asked of the agent: a request of its own, never
    context (a question before one — "how's it going? add …" — still opens it).  Neighbouring chats are one conversational
    turn (one reply answers both)."""
    def alone(i: int) -> bool:
        return sentence_of.count(sentence_of[i]) == 1

    out: list[tuple[str, str, str]] = []
    pending: list[tuple[str, str, str]] = []
    for i, item in enumerate(items):
        if out and i > 0 and sentence_of[i] != sentence_of[i - 1] and _quoted_org(item[2]) \
                and is_question(out[-1][2]):
            t, b, c = out[-1]  # Org text pasted after a question: what the question is about
            out[-1] = (t, f"{b} {item[1]}", f"{c} {item[2]}")
            continue
        if item[0] == "chat" and alone(i) and not is_pleasantry(item[2]) and len(items) > 1 \
                and not (out and is_question(item[2])) and item[2] not in text_ops:
            pending.append(item)
            continue
        if pending:
            ctx = " ".join(p[2] for p in pending)
            item = (item[0], f"{ctx} {item[1]}", f"{ctx} {item[2]}")
            pending = []
        out.append(item)
    if pending:
        ctx = " ".join(p[2] for p in pending)
        if out:
            t, b, c = out[-1]
            out[-1] = (t, f"{b} {ctx}", f"{c} {ctx}")
        else:
            out.append(("chat", ctx, ctx))
    turns: list[tuple[str, str, str]] = []
    for t, b, c in out:  # "good morning! did you sleep well?": one turn, one reply
        if t == "chat" and turns and turns[-1][0] == "chat":
            pt, pb, pc = turns[-1]
            turns[-1] = (pt, f"{pb} {b}", f"{pc} {c}")
        else:
            turns.append((t, b, c))
    return turns
