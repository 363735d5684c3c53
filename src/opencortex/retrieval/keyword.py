"""Ranked keyword search: BM25 over a node's whole text (outline path, title, tags and
body, English stemming), plus boosted title and tags fields; the query's words are OR-ed
and scored (a node need not hold them all), phrases and ``prefix*`` as written.  The boosts
were chosen by cross-validation on public dev sets (``bench/retrieval_tune.py``).

The engine is tantivy (Rust, block-max WAND): about a millisecond at 100k nodes where
SQLite FTS5 OR-queries take ~20 ms.  Two things keep it there: the query is one flat OR of
(field, word) term clauses — tantivy only runs block-max WAND over a flat disjunction of
terms; the parser's per-word sub-disjunctions across fields made it score every matching
document (9 ms at 100k) — and hits are read through numeric fast fields (the node's row
id, resolved to keys in one SQLite query, and a hash of the key that proves the id still
names that node; if not, the stored key) instead of a stored-document fetch per hit.  Its index lives beside the SQLite index, is derived
from it (never from the files directly) and is disposable: it is brought up to date
file by file from ``files.hash``, and rebuilt from scratch if missing or unreadable.
Structured filters (todo:, tags:, dates…) go through the SQLite store, which also has
FTS5 for ranked search inside a filtered set.

With the PostgreSQL store there is nothing to build: ``PgKeywordEngine`` parses the query
the same way and asks the store's own full text (a weighted ``tsvector``, ``ts_rank_cd``:
``PgStore.keyword_search``).  ``engine_for`` picks one by the store's dialect.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..memory.store import IndexStore, RankedFullText, store_dialect

if TYPE_CHECKING:
    from ..memex import Memex

__all__ = ["KeywordEngine", "KeywordHit", "PgKeywordEngine", "TantivyEngine", "engine_for",
           "query_terms"]

FIELD_BOOSTS = {"text": 1.0, "title": 0.5, "outline": 0.25, "tags": 0.0}
"""``text`` holds the title, tags and body (one BM25 document per node: this is what beat
per-field scoring); ``title``, ``outline`` (the ancestors' titles) and ``tags`` add on top
of it with these boosts (0: not searched)."""
SCHEMA_VERSION = "5"
_STOP = frozenset("""a an and are as at be but by can do does for from how i if in into is
it its of on or so such that the their then there these they this to was what when where
which who why will with you your my me we our""".split())


@dataclass(slots=True)
class KeywordHit:
    key: str
    score: float


class KeywordEngine(Protocol):
    def sync(self, store: IndexStore, progress: Callable[[int, int], None] | None = None
             ) -> int: ...
    def search(self, query: str, k: int = 10) -> list[KeywordHit]: ...


def engine_for(memex: Memex) -> KeywordEngine:
    """The keyword engine for a memex's store, by the store's dialect (known from settings:
    the store stays unopened): tantivy files beside a SQLite index, or the PostgreSQL
    store's own full text."""
    kind = store_dialect(memex.settings.store_url or memex.settings.index_path).name
    if kind == "postgresql":
        return PgKeywordEngine(lambda: cast(RankedFullText, memex.store))
    base = memex.settings.index_path
    return TantivyEngine(base.with_name(base.name + ".tantivy"), store=lambda: memex.store)


def query_terms(query: str) -> tuple[list[str], list[str], list[str]]:
    """(words, phrases, prefixes) of a free-text query: ``"a phrase"``, ``pref*``;
    English stop words are dropped from the loose words (not from phrases)."""
    phrases = [p.strip() for p in re.findall(r'"([^"]+)"', query) if p.strip()]
    rest = re.sub(r'"[^"]*"?', " ", query)
    words, prefixes = [], []
    for tok in re.findall(r"[\w][\w'’.-]*\*?", rest):
        tok = tok.strip(".-'’")
        if tok.endswith("*") and len(tok) > 2:
            prefixes.append(tok[:-1].lower())
        elif tok and tok.lower() not in _STOP:
            words.append(tok.rstrip("*"))
    if not words and not phrases and not prefixes:  # a query of stop words only
        words = [t for t in re.findall(r"\w+", rest)]
    return words, phrases, prefixes


class TantivyEngine:
    """BM25 over title/tags/body in a tantivy index at ``path`` (a directory).
    ``store``: the SQLite store the index is derived from (it maps hits' row ids to node
    keys); ``sync`` remembers the store it is given."""

    def __init__(self, path: str | Path, boosts: dict[str, float] | None = None,
                 store: Callable[[], IndexStore] | None = None) -> None:
        self.path = Path(path)
        self._index: Any = None
        self._store = store
        self.boosts = {f: b for f, b in (boosts or FIELD_BOOSTS).items() if b > 0}

    # -- building ---------------------------------------------------------------
    def _schema(self) -> Any:
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_text_field("key", stored=True, tokenizer_name="raw")
        sb.add_text_field("file", stored=False, tokenizer_name="raw")
        sb.add_integer_field("nid", stored=False, indexed=False, fast=True)  # nodes.id
        sb.add_integer_field("khash", stored=False, indexed=False, fast=True)  # _khash(key)
        for f in FIELD_BOOSTS:
            sb.add_text_field(f, stored=False, tokenizer_name="en_stem")
        return sb.build()

    def _open(self, store: IndexStore | None = None) -> Any:
        if self._index is not None:
            return self._index
        import tantivy

        marker = self.path / "OPENCORTEX_SCHEMA"
        ok = marker.exists() and marker.read_text().strip() == SCHEMA_VERSION
        if ok:
            try:
                self._index = tantivy.Index(self._schema(), path=str(self.path), reuse=True)
                return self._index
            except Exception:  # unreadable: rebuild below (it is derived data)
                ok = False
        if store is None:
            return None
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)
        store.keyword_sync_reset()
        self._index = tantivy.Index(self._schema(), path=str(self.path), reuse=False)
        marker.write_text(SCHEMA_VERSION)
        return self._index

    def sync(self, store: IndexStore,
             progress: Callable[[int, int], None] | None = None) -> int:
        """Bring the engine up to date with the store; returns files re-indexed."""
        import tantivy

        if self._store is None:
            self._store = lambda: store
        index = self._open(store)
        have = store.keyword_synced()
        files = store.files_hashed()
        changed = [(fid, p, h) for fid, p, h in files if have.get(p) != h]
        live = {p for _, p, _ in files}
        removed = [p for p in have if p not in live]
        if not changed and not removed:
            return 0
        writer = index.writer(heap_size=256_000_000, num_threads=1)
        for p in removed:
            writer.delete_documents_by_term("file", p)
        for i, (fid, p, _h) in enumerate(changed, 1):
            if p in have:
                writer.delete_documents_by_term("file", p)
            for nid, key, outline, title, tags, body in store.keyword_docs(fid):
                writer.add_document(tantivy.Document(
                    key=key, file=p, nid=nid, khash=_khash(key), title=title, tags=tags,
                    outline=" / ".join(json.loads(outline)),
                    text=f"{title}\n{tags}\n{body}"))
            if progress:
                progress(i, len(changed))
        writer.commit()
        writer.wait_merging_threads()
        store.keyword_sync_record(removed, [(p, h) for _, p, h in changed])
        index.reload()
        return len(changed) + len(removed)

    # -- searching ------------------------------------------------------------
    def _query(self, query: str) -> Any:
        """One flat OR of boosted (field, term) clauses: words and phrases on every
        searched field, ``prefix*`` as prefix terms (the same sum of scores as the parser's
        per-word groups, but flat, so tantivy can skip with block-max WAND)."""
        import tantivy

        index = self._index
        words, phrases, prefixes = query_terms(query)
        parts = []
        # a literal given twice counts once (as the query parser had it; "cell cells"
        # is two literals, both scored)
        for quoted in dict.fromkeys(f'"{t.replace(chr(92), " ")}"' for t in [*words, *phrases]):
            for f, b in self.boosts.items():
                q, _errors = index.parse_query_lenient(quoted, [f])
                parts.append(q if b == 1.0 else tantivy.Query.boost_query(q, b))
        schema = index.schema
        for p in prefixes:
            for f, b in self.boosts.items():
                q = tantivy.Query.fuzzy_term_query(schema, f, p, distance=0, prefix=True)
                parts.append(q if b == 1.0 else tantivy.Query.boost_query(q, b))
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in parts])

    def search(self, query: str, k: int = 10) -> list[KeywordHit]:
        if self._open() is None:
            return []
        q = self._query(query)
        if q is None:
            return []
        searcher = self._index.searcher()
        hits = searcher.search(q, k, count=False).hits
        if not hits:
            return []
        if self._store is None:  # no store to map row ids: the stored keys (slower)
            return [KeywordHit(searcher.doc(addr)["key"][0], float(score))
                    for score, addr in hits]
        addrs = [addr for _, addr in hits]
        nids = searcher.fast_field_values("nid", addrs)
        key_of = self._store().node_keys(nids)
        out = []
        for (score, addr), nid, h in zip(hits, nids, searcher.fast_field_values("khash", addrs),
                                         strict=True):
            key = key_of.get(nid)
            if key is None or _khash(key) != h:  # ids renumbered since: the stored key
                key = searcher.doc(addr)["key"][0]
            out.append(KeywordHit(key, float(score)))
        return out


def _khash(key: str) -> int:
    """A signed 64-bit hash of a node key: checks a row id still names the same node."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little",
                          signed=True)


class PgKeywordEngine:
    """The keyword engine on PostgreSQL: nothing to build (the tsvector is written in
    the same transaction as the nodes); the query is parsed as for tantivy and ranked in
    the server."""

    def __init__(self, store: Callable[[], RankedFullText]) -> None:
        self._store = store

    def sync(self, store: IndexStore, progress: Callable[[int, int], None] | None = None
             ) -> int:
        return 0

    def search(self, query: str, k: int = 10) -> list[KeywordHit]:
        words, phrases, prefixes = query_terms(query)
        return [KeywordHit(key, s) for key, s in
                self._store().keyword_search([*words, *phrases], prefixes, k)]
