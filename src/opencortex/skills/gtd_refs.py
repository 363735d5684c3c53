"""Which existing entry a request means: an ID, ``FILE:LINE``, ``FILE::Outline``, a quoted or
exact title, or a partial / paraphrased title ("the NAS thing") matched by stemmed words,
weighted by how rare each word is among the memex's titles.  Open tasks are preferred over
finished ones and over notes; two close candidates are an ambiguity, never a guess."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .gtd_slots import words

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["MIN_COVER", "TITLE_COVER", "Resolution", "all_nodes", "cite", "named", "resolve_context",
           "resolve_meaning",
           "resolve_ref", "score_nodes"]

AMBIGUOUS = 0.85
"""A runner-up scoring at least this share of the best makes the reference ambiguous."""
STRONG_QUERY = 0.55
STRONG_TITLE = 0.3
"""A match is strong (safe to act on without an explicit verb) when it covers at least
this share of the request's words and of the title's words (idf-weighted)."""

_HEAD_NOUNS = frozenset(words("idea ideas reminder business matter bit chore job errand "
                               "plan", keep_stop=True))
"""Generic head nouns a reference is phrased with ("the WebAssembly idea", "the tap job"):
no identity of their own, so ignored unless some title has the word."""

_DO_VERBS = frozenset(words("deal handle tackle do work look sort start begin continue get "
                            "attend happen happens happening go take focus spend reserve block "
                            "pencil slot", keep_stop=True))
"""Verbs that say to do something without saying what ("deal with the restic report", "get
to the tap washer"): no identity of their own either, so ignored unless some title has
the word."""

MIN_COVER = 0.5
"""The open task's title must cover at least this share (idf-weighted) of the request's own
words: a title word or two in passing is no reference."""

TITLE_COVER = 0.6
"""…or the request must name this share of the title's words (and half MIN_COVER of its own
are the title's: "scrap the X build of Y, not worth it" names "Compile Y to X")."""


def cite(n: Node) -> str:
    return f"{n.file}:{n.line}" + (f" id:{n.id}" if n.id else "")


def all_nodes(memex: Memex) -> list[Node]:
    """Every headline in the index (which never holds session records), read once per index generation
    (every GTD-shaped request looks through them all)."""
    held: dict[str, tuple[str, list[Node]]] = memex.derived("gtd-all-nodes", dict)
    gen = memex.store.generation()
    got = held.get("v")
    if got is None or got[0] != gen:
        got = held["v"] = (gen, memex.store.find([]))
    return list(got[1])


@dataclass
class Scored:
    node: Node
    score: float
    q_cover: float
    t_cover: float


@dataclass
class Resolution:
    node: Node | None = None
    candidates: list[Node] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    why: str = ""
    strong: bool = False
    exact: bool = False
    q_cover: float = 0.0
    """How much of the request's words the best title covers (idf-weighted)."""
    t_cover: float = 0.0
    """How much of the best title's words the request names (idf-weighted)."""

    @property
    def ambiguous(self) -> bool:
        return self.node is None and len(self.candidates) > 1


def _kind_weight(n: Node) -> float:
    if n.todo and n.todo_type != "done":
        return 1.0
    if n.todo:
        return 0.7
    return 0.5


@functools.lru_cache(maxsize=8192)
def _title_words(title: str) -> frozenset[str]:
    """A title's stemmed words (cached: the router's hint and the plan score the same
    titles for one request)."""
    return frozenset(words(title))


def _compound_parts(w: str, vocab: Counter[str]) -> set[str]:
    """``w`` itself, or — when no title has it — the title words it is the head or the tail
    of ("spätzle" in "Käsespätzle", "backup" in "backups-offsite"): a compound said in part;
    a word of four letters only as a head ("repo" for "repository", "docs" for "documentation")."""
    if w in vocab or len(w) < 4 or w.isdigit():
        return {w}
    hits = {v for v in vocab if (len(v) > len(w) and len(w) >= 5 and (v.startswith(w)
                                                                      or v.endswith(w)))
            or (len(w) == 4 and len(v) >= 8 and v.startswith(w))}  # "repo": "repositori",
    # never "read": "reader" (a four-letter stem is a word of its own, not a clipping)
    return hits if 0 < len(hits) <= 3 else {w}


def score_nodes(nodes: list[Node], query: str, *, among: list[Node] | None = None) -> list[Scored]:
    """Nodes sharing words with ``query``, best first; word rarity is counted over ``among``
    (default: ``nodes``), so narrowing the candidates does not reweigh the words."""
    q = set(words(query))
    if not q:
        return []
    titles = {n.key: _title_words(n.title) for n in nodes}
    base = among if among is not None else nodes
    df = Counter(w for n in base for w in _title_words(n.title))
    q = {v for w in q for v in _compound_parts(w, df)}
    total = max(len(base), 1)

    q = {w for w in q if w in df or (w not in _HEAD_NOUNS and w not in _DO_VERBS)} or q

    def idf(w: str) -> float:
        return math.log(1 + total / (1 + df.get(w, 0)))

    q_mass = sum(idf(w) for w in q)
    q_nums = {w for w in q if w.isdigit()}
    out: list[Scored] = []
    for n in nodes:
        t = titles[n.key]
        hit = q & t
        if not hit:
            continue
        if q_nums and not q_nums & t and any(w.isdigit() for w in t):
            continue  # "invoice 17" is not "invoice 3": a different number names another item
        h = sum(idf(w) for w in hit)
        qc, tc = h / q_mass, h / max(sum(idf(w) for w in t), 1e-9)
        f = 2 * qc * tc / (qc + tc)
        out.append(Scored(n, f * _kind_weight(n), qc, tc))
    out.sort(key=lambda s: (-s.score, s.node.file, s.node.line))
    return out


_ID = re.compile(r"^(?:id:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_LOC = re.compile(r"^[\w./-]+\.org(?::\d+|::.+)$")


def _explicit(text: str) -> str | None:
    """An ID, FILE:LINE, FILE::Outline or quoted title inside ``text``."""
    for tok in re.findall(r"\S+", text):
        tok = tok.strip(".,;!?()")
        if _ID.match(tok) or _LOC.match(tok):
            return tok
    m = re.search(r"[\"“«]([^\"”»]{3,})[\"”»]", text)
    return m.group(1).strip() if m else None


def resolve_ref(memex: Memex, text: str, *, nodes: list[Node] | None = None,
                tasks_only: bool = False, open_only: bool = False) -> Resolution:
    """The entry ``text`` refers to, or why none could be chosen."""
    from ..errors import NodeNotFoundError

    if ex := _explicit(text):
        try:
            n = memex.resolve(ex)
            return Resolution(n, [n], [ex], strong=True, exact=True, q_cover=1.0, t_cover=1.0)
        except NodeNotFoundError as e:
            hits = memex.store.nodes_by_ref(ex)
            if len(hits) > 1:
                open_ = [h for h in hits if h.todo and h.todo_type != "done"]
                if len(open_) == 1:
                    return Resolution(open_[0], [open_[0]], [ex], strong=True, exact=True,
                                      q_cover=1.0)
                return Resolution(None, hits, [ex], why=str(e))
            if _ID.match(ex) or _LOC.match(ex):
                return Resolution(None, [], [ex], why=str(e))
    pool = nodes if nodes is not None else all_nodes(memex)
    everything = pool
    if tasks_only:
        pool = [n for n in pool if n.todo]
    if open_only:
        pool = [n for n in pool if n.todo and n.todo_type != "done"]
    searched = sorted(set(words(text)))
    exact = [n for n in pool if n.title.casefold() == text.strip().casefold()]
    if exact:
        best = sorted(exact, key=_kind_weight, reverse=True)
        return Resolution(best[0], best, searched, strong=True, exact=True, q_cover=1.0,
                          t_cover=1.0)
    scored = score_nodes(pool, text, among=everything)
    if not scored:
        return Resolution(None, [], searched, why="no title shares a word with "
                          + (" ".join(searched) or repr(text)))
    top = scored[0]
    close = [s for s in scored if s.score >= AMBIGUOUS * top.score
             or (abs(s.q_cover - top.q_cover) < 0.01 and _kind_weight(s.node)
                 == _kind_weight(top.node))]  # the same words matched: no reason to choose
    strong = (top.q_cover >= STRONG_QUERY and top.t_cover >= STRONG_TITLE) or (
        top.q_cover >= 0.9 and top.t_cover >= 0.2)  # every word said is in that one title
    if len(close) > 1:
        return Resolution(None, [s.node for s in close[:6]], searched, strong=strong,
                          why="several titles match equally well", q_cover=top.q_cover,
                          t_cover=top.t_cover)
    return Resolution(top.node, [top.node], searched, strong=strong, q_cover=top.q_cover,
                      t_cover=top.t_cover)


def named(r: Resolution) -> bool:
    """The request names that title: most of the request's words are the title's, or most
    of the title's (rarer) words are said and they are a fair part of the request."""
    return r.exact or r.strong or r.q_cover >= MIN_COVER or (
        r.t_cover >= TITLE_COVER and r.q_cover >= MIN_COVER / 2)


MEANING_NEAR = 0.45
"""A title at least this near (MiniLM cosine) to the phrase, sharing a word with it and
clearly nearer than the runner-up, is what the phrase means ("the jujutsu trial" / "Try
Jujutsu (jj) for the book repository": the words differ in form, not in sense)."""
MEANING_SURE = 0.6
"""Without a shared word, only this near and twice as clear of the runner-up."""
MEANING_MARGIN = 0.1
"""How much nearer than the second title the first must be (else no one title is meant)."""


def _title_vectors(memex: Memex, titles: list[str], embed) -> list:
    """Each title's vector, embedded once per title and embedder (kept beside the memex:
    titles rarely change, so a request embeds only the new ones)."""
    held: dict[tuple[str, str], object] = memex.derived("gtd-title-vectors", dict)
    name = str(getattr(embed, "name", "") or type(embed).__name__)
    missing = list(dict.fromkeys(t for t in titles if (name, t) not in held))
    if missing:
        for t, v in zip(missing, embed.embed(missing), strict=True):
            held[(name, t)] = v
    return [held[(name, t)] for t in titles]


def resolve_meaning(memex: Memex, text: str, nodes: list[Node]) -> Resolution:
    """The open task ``text`` means when its words name none outright: the title nearest in
    meaning (the memex's embedder), if it is near, clear of the runner-up and — unless very
    near — shares a word with ``text``.  An empty Resolution otherwise, or when no embedder
    can run (a lookup never fails a request)."""
    import numpy as np

    pool = [n for n in nodes if n.todo and n.todo_type != "done"]
    said = set(words(text)) - _HEAD_NOUNS - _DO_VERBS
    if not pool or not said:
        return Resolution(searched=sorted(said))
    try:
        from ..embed import get_embedder

        embed = get_embedder(memex.settings.embedder)
        rows = np.asarray(_title_vectors(memex, [n.title for n in pool], embed),
                          dtype=np.float32)
        q = np.asarray(embed.embed([text]), dtype=np.float32)[0]
    except Exception:  # no embedder here: the words alone decide
        return Resolution(searched=sorted(said))
    sims = rows @ q
    order = np.argsort(-sims, kind="stable")
    best = float(sims[order[0]])
    margin = best - (float(sims[order[1]]) if len(order) > 1 else 0.0)
    node = pool[int(order[0])]
    tw = _title_words(node.title)
    shares = bool(said & tw)
    lead = re.match(r"\s*([a-z]+)", node.title, re.I)
    own = tw - _DO_VERBS - (set(words(lead.group(1))) if lead else set())
    if len(own) == 1 and own <= said and len(said - tw) >= 2:
        # a one-word title is a part of a longer phrase naming something else ("the
        # allotment rent form" holds "Pay rent"'s word, yet means a form, not the rent)
        return Resolution(searched=sorted(said))
    if (best >= MEANING_NEAR and shares and margin >= MEANING_MARGIN) or (
            best >= MEANING_SURE and margin >= 2 * MEANING_MARGIN):
        return Resolution(node, [node], sorted(said), why=f"nearest in meaning ({best:.2f})",
                          strong=True, q_cover=MIN_COVER, t_cover=STRONG_TITLE)
    return Resolution(searched=sorted(said))


CONTEXT_COVER = 0.6
"""An open task's context (title, outline path, project file, body) must hold this share of
a phrase's words (idf-weighted) to be what the phrase means without naming the title."""
CONTEXT_MARGIN = 0.75
"""…and the runner-up may reach at most this share of the best score (else no one task)."""
CONTEXT_WORDS = 2
"""…and at least this many of the phrase's words must be found there."""

_PART_WORDS = frozenset(words("section part step piece bit stuff one project work side "
                              "milestone chapter sub subtask fix check write-up", keep_stop=True))
"""Words a reference uses for a piece of something ("the section 3 thing under the thesis
project", "the clock step of the invoice work"): they place an entry, they name none."""


def _context_words(n: Node) -> frozenset[str]:
    """The words an entry is known by beyond its title: its outline path, its project file's
    name, its body."""
    base = re.sub(r"[-_/]", " ", n.file.rsplit("/", 1)[-1].removesuffix(".org"))
    return frozenset(words(" ".join([n.title, *n.outline, base, n.body or ""])))


def task_contexts(memex: Memex) -> list[tuple[Node, frozenset[str]]]:
    """Every open task with its context words, read once per index generation."""
    held: dict[str, tuple[str, list[tuple[Node, frozenset[str]]]]] = memex.derived(
        "gtd-task-contexts", dict)
    gen = memex.store.generation()
    got = held.get("v")
    if got is None or got[0] != gen:
        rows = [n for n in memex.store.find([], with_body=True)
                if n.todo and n.todo_type != "done"]
        got = held["v"] = (gen, [(n, _context_words(n)) for n in rows])
    return list(got[1])


def resolve_context(memex: Memex, text: str) -> Resolution:
    """The open task ``text`` names by its outline context, body or a part of it rather than
    by its title ("the task about the 48 reallocated sectors", "the promo-packet write-up"):
    the one whose context words hold most of the phrase's (idf-weighted, rarer words count
    more), clearly ahead of the next.  An empty Resolution when none or two fit."""
    said = set(words(text)) - _HEAD_NOUNS - _DO_VERBS - _PART_WORDS
    docs = task_contexts(memex)
    if len(said) < CONTEXT_WORDS or not docs:
        return Resolution(searched=sorted(said))
    df = Counter(w for _, ws in docs for w in ws)
    said = {v for w in said for v in _compound_parts(w, df)}
    total = len(docs)

    def idf(w: str) -> float:
        return math.log(1 + total / (1 + df.get(w, 0)))

    mass = sum(idf(w) for w in said)
    scored = sorted(((sum(idf(w) for w in said & ws) / mass, len(said & ws), n)
                     for n, ws in docs), key=lambda x: (-x[0], x[2].file, x[2].line))
    best, hits, node = scored[0]
    second = scored[1][0] if len(scored) > 1 else 0.0
    if best >= CONTEXT_COVER and hits >= CONTEXT_WORDS and second <= CONTEXT_MARGIN * best:
        return Resolution(node, [node], sorted(said), why=f"its context holds {best:.2f} of "
                          "the words", strong=True, q_cover=best, t_cover=STRONG_TITLE)
    return Resolution(searched=sorted(said))
