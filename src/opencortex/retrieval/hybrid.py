"""Search: sparse (BM25), dense (embeddings, best passage per node) and hybrid (a weighted
fusion of the two lists' scaled scores, ``retrieval.fusion``), as one Retriever over a
Memex.  Link expansion (one hop along id:/file: links from the top hits) is there but off
in hybrid search: it did not help on the dev sets (``bench/retrieval_tune.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import OpenCortexError
from ..memex import Memex
from ..memory.incremental import Progress
from ..memory.nodes import Node
from .fusion import fuse
from .keyword import engine_for, query_terms
from .vectors import VectorIndex, VectorStatus, vector_index

if TYPE_CHECKING:
    from ..embed.base import Embedder

__all__ = ["Retriever", "SearchHit", "SearchResult"]

EXPAND = False
"""Link expansion in hybrid search (measured: it did not help on the dev sets)."""
EXPAND_FROM = 3
"""Link expansion follows the links of this many top hits."""
EXPAND_DISCOUNT = 0.5
QUERY_VECTORS = 256
"""Query vectors a Retriever keeps (``Retriever.query_vector``)."""


@dataclass(slots=True)
class SearchHit:
    id: str | None
    key: str
    file: str
    line: int
    outline: list[str]
    """Ancestor titles, then the node's own title."""
    title: str
    score: float
    snippet: str
    why: dict[str, Any] = field(default_factory=dict)
    match_line: int | None = None
    """The file line of the passage dense search matched (``file:LINE`` is a reference
    ``read`` and citations accept); None for a sparse-only hit."""

    def to_dict(self) -> dict[str, Any]:
        # built field by field: dataclasses.asdict deep-copied every value through its
        # generic machinery, a third of a /v1/search request's CPU (cProfile, 10 hits)
        return {"id": self.id, "key": self.key, "file": self.file, "line": self.line,
                "outline": list(self.outline), "title": self.title, "score": self.score,
                "snippet": self.snippet, "why": _copied(self.why),
                "match_line": self.match_line}


def _copied(value: Any) -> Any:
    """A copy of plain data (dicts, lists, tuples of scalars), as ``asdict`` gave."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_copied(v) for v in value)
    return value


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str
    hits: list[SearchHit]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "mode": self.mode,
                "hits": [h.to_dict() for h in self.hits], "notes": self.notes}


def snippet(body: str, query: str | re.Pattern[str] | None, width: int = 160) -> str:
    """The part of the body around the first query word it contains (``query``: the
    text, or ``query_pattern(text)`` made once for many bodies)."""
    text = " ".join((body or "").split())
    if not text:
        return ""
    pattern = query_pattern(query) if isinstance(query, str) else query
    m = pattern.search(text) if pattern is not None else None
    start = max(0, m.start() - width // 3) if m else 0
    start, end = _whole_links(text, start, min(len(text), start + width))
    out = text[start:end]
    return ("…" if start else "") + out + ("…" if end < len(text) else "")


_LINKS = re.compile(r"\[\[[^\]\[]*\](?:\[[^\]]*\])?\]|\b[a-z][\w+.-]*:[^\s\]\[]+",
                    re.I)


def _whole_links(text: str, start: int, end: int) -> tuple[int, int]:
    """Cut points that keep every link whole: a link (``[[…]]`` or a plain ``id:…``)
    crossing the start begins the excerpt; one crossing the end is left out (or, when it
    is all the excerpt would hold, kept whole) -- never a link cut by "…"."""
    for lk in _LINKS.finditer(text, max(0, start - 300), min(len(text), end + 300)):
        if lk.start() < start < lk.end():
            start = lk.start()
        if lk.start() < end < lk.end():
            end = lk.start() if lk.start() > start else lk.end()
    return start, end


def query_pattern(query: str) -> re.Pattern[str] | None:
    """One case-blind alternation of the query's phrases, words and prefixes: its
    leftmost match is the earliest of any of them."""
    words, phrases, prefixes = query_terms(query)
    terms = [t for t in [*phrases, *words, *prefixes] if t]
    return re.compile("|".join(map(re.escape, terms)), re.I) if terms else None


class Retriever:
    """Sparse, dense and hybrid search over a memex's index."""

    def __init__(self, memex: Memex, embedder: Embedder | None = None) -> None:
        self.memex = memex
        base = memex.settings.index_path
        self.keyword = engine_for(memex)  # tantivy beside SQLite; PostgreSQL's own full text
        self._embedder = embedder
        self._vectors: VectorIndex | None = None
        self._status: tuple[str, VectorStatus] | None = None  # (store generation, status)
        self._kw_generation: str | None = None
        self._cache_dir = base.with_name(base.name + ".vectors")
        self._query_vectors: dict[str, Any] = {}
        self._query_vectors_of: Any = None

    # -- the parts ---------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from ..embed import get_embedder

            self._embedder = get_embedder(self.memex.settings.embedder)
        return self._embedder

    @property
    def vectors(self) -> VectorIndex:
        if self._vectors is None:
            name, dim = self._model_id()
            self._vectors = vector_index(self.memex.store, name, dim, self._cache_dir)
        return self._vectors

    def _model_id(self) -> tuple[str, int]:
        """(model name, dimension) without loading the model when it is the built-in one:
        knowing whether vectors exist must not cost a model load."""
        if self._embedder is not None:
            return self._embedder.name, self._embedder.dim
        spec = (self.memex.settings.embedder or "minilm").strip()
        if spec.split(":", 1)[0].lower() in ("minilm", "all-minilm-l6-v2"):
            from ..embed.minilm import MiniLMEmbedder

            return MiniLMEmbedder.name, MiniLMEmbedder.dim
        e = self.embedder
        return e.name, e.dim

    def sync(self, embed: bool = False, progress: Progress | None = None) -> dict[str, Any]:
        """Index sync + keyword engine (+ vectors for new/changed nodes when ``embed``)."""
        s = self.memex.sync(progress=progress)
        out: dict[str, Any] = {**s.to_dict(), "keyword_files": self.keyword.sync(self.memex.store)}
        if embed:
            out["embedded"] = self.vectors.embed_pending(
                lambda texts: self.embedder.embed(texts), progress=progress)
            out["vectors"] = {**asdict(self.vectors.status()),
                              "passages": self.vectors.passage_count()}
        return out

    def sparse(self, query: str, k: int) -> list[tuple[str, float]]:
        gen = self.memex.store.generation()
        if gen != self._kw_generation:  # the index changed: bring the keyword engine along
            self.keyword.sync(self.memex.store)
            self._kw_generation = gen
        return [(h.key, h.score) for h in self.keyword.search(query, k)]

    def vector_status(self) -> VectorStatus:
        """Vector coverage, recomputed only when the index changed (it is a full count)."""
        gen = self.memex.store.generation()
        if self._status is None or self._status[0] != gen:
            self._status = (gen, self.vectors.status())
        return self._status[1]

    def dense(self, query: str, k: int) -> list[tuple[str, float]]:
        return [(key, s) for key, s, _ in self.dense_passages(query, k)]

    def dense_passages(self, query: str, k: int) -> list[tuple[str, float, int]]:
        """Top-k nodes by their best passage: ``(key, cosine, that passage's line)``."""
        return self.vectors.search_passages(self.query_vector(query), k)

    def query_vector(self, text: str) -> Any:
        """The embedder's vector of one query, kept for the last ``QUERY_VECTORS`` queries:
        a notes question is embedded by the search that finds its notes and again to score
        their sentences (and the router's test, then the reply, ask the same question),
        and a text's vector under one model never changes."""
        emb = self.embedder
        if self._query_vectors_of is not emb:  # for this embedder only (one may be swapped in)
            self._query_vectors = {}
            self._query_vectors_of = emb
        memo = self._query_vectors
        got = memo.get(text)
        if got is None:
            got = emb.embed([text])[0]
            if len(memo) >= QUERY_VECTORS:
                memo.clear()
            memo[text] = got
        return got

    # -- search ------------------------------------------------------------------
    def search(self, query: str, mode: str | None = None, k: int = 10,
               filters: str | None = None,
               exclude_files: tuple[str, ...] = (),
               hide: Callable[[Node], bool] | None = None) -> SearchResult:
        """``filters``: the structured part of ``opencortex query`` (``todo:NEXT
        tags:work closed:-7`` …): only nodes matching it are ranked.  ``hide``: nodes it
        is true for are never returned (privacy, applied by ``opencortex.access``)."""
        notes: list[str] = []
        allowed: set[str] | None = None
        if filters and filters.strip():
            allowed = {n.key for n in self.memex.query(filters)}
        if mode in (None, "hybrid", "dense"):
            try:
                st = self.vector_status()
            except OpenCortexError as e:  # no usable embedder: say so, answer from sparse
                notes.append(f"dense search unavailable ({e}); answering from sparse search")
                st = None
                mode = "sparse"
            if st is None:
                pass
            elif st.embedded == 0:
                if mode == "dense":
                    notes.append(f"no vectors for {st.model} yet: run `opencortex index "
                                 "--embed`; answering from sparse search")
                elif mode is None:
                    notes.append("vectors not ready: sparse search only "
                                 "(run `opencortex index --embed`)")
                mode = "sparse"
            elif st.pending:
                notes.append(f"vectors cover {st.embedded} of {st.nodes} nodes; "
                             "the rest are found by keyword only until embedded")
        mode = mode or "hybrid"
        deep = max(k * 5, 50) if allowed is None else max(k * 50, 1000)
        sparse = self.sparse(query, deep) if mode in ("sparse", "hybrid") else []
        dense_p = self.dense_passages(query, deep) if mode in ("dense", "hybrid") else []
        lines = {key: ln for key, _, ln in dense_p}
        dense = [(key, s) for key, s, _ in dense_p]
        if allowed is not None:
            sparse = [x for x in sparse if x[0] in allowed]
            dense = [x for x in dense if x[0] in allowed]
        if exclude_files:  # e.g. the agent's own conversation records, for a notes answer
            skip = {n.key for n in self.memex.store.nodes_by_keys(
                list({key for key, _ in [*sparse, *dense]}), with_body=False).values()
                if n.file.startswith(exclude_files)}
            sparse = [x for x in sparse if x[0] not in skip]
            dense = [x for x in dense if x[0] not in skip]
        scores: dict[str, float] = {}
        why: dict[str, dict[str, Any]] = {}
        if mode == "hybrid":
            for rank, (key, _) in enumerate(sparse, 1):
                why.setdefault(key, {})["sparse_rank"] = rank
            for rank, (key, _) in enumerate(dense, 1):
                why.setdefault(key, {})["dense_rank"] = rank
            scores = dict(fuse(sparse, dense))
            if EXPAND:
                self._expand(scores, why, allowed)
        else:
            name = "sparse_rank" if mode == "sparse" else "dense_rank"
            for rank, (key, s) in enumerate(sparse or dense, 1):
                scores[key] = s
                why[key] = {name: rank}
        ordered = sorted(scores.items(), key=lambda kv: -kv[1])
        if hide is None:
            ranked = ordered[:k]
            nodes = self.memex.store.nodes_by_keys([key for key, _ in ranked])
        else:  # look further down, a page at a time, so hidden hits leave no gap
            ranked, nodes, i = [], {}, 0
            while len(ranked) < k and i < len(ordered):
                page = ordered[i:i + (k if i == 0 else k + 4)]
                i += len(page)
                got = self.memex.store.nodes_by_keys([key for key, _ in page])
                nodes.update(got)
                ranked += [(key, s) for key, s in page if key in got and not hide(got[key])]
            ranked = ranked[:k]
        hits = []
        pattern = query_pattern(query)
        for key, score in ranked:
            n = nodes.get(key)
            if n is None:
                continue
            w = {"sparse_rank": None, "dense_rank": None, "linked_from": None, **why[key]}
            hit = self._hit(n, score, pattern, w)
            hit.match_line = lines.get(key)
            hits.append(hit)
        return SearchResult(query, mode, hits, notes)

    def _expand(self, scores: dict[str, float], why: dict[str, dict[str, Any]],
                allowed: set[str] | None = None) -> None:
        """One hop along id:/file: links (both directions) from the top fused hits."""
        store = self.memex.store
        top = sorted(scores.items(), key=lambda kv: -kv[1])[:EXPAND_FROM]
        for key, s in top:
            linked = [ln.target_key for ln in store.links_from(key) if ln.target_key]
            linked += [ln.source_key for ln in store.backlinks(key) if ln.source_key]
            for other in linked:
                if other and other not in scores and (allowed is None or other in allowed):
                    scores[other] = s * EXPAND_DISCOUNT
                    why[other] = {"linked_from": key}

    @staticmethod
    def _hit(n: Node, score: float, pattern: re.Pattern[str] | None,
             why: dict[str, Any]) -> SearchHit:
        return SearchHit(n.id, n.key, n.file, n.line, [*n.outline, n.title], n.title,
                         round(score, 6), snippet(n.body or "", pattern), why)

    def close(self) -> None:
        self.memex.close()


def retriever_for(memex: Memex) -> Retriever:
    """The one Retriever of a Memex, built on first use and kept while it is open."""
    return memex.derived("retriever", lambda: Retriever(memex))
