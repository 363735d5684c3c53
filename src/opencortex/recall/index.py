"""The record index: sessions, commits and notes the past left, held in the index store so a
pass over 10,000 sessions answers in a second or two.

Incremental like the memex index: transcript files by (mtime, size), git roots by branch
tips (only commits not reachable from the tips seen last time are read), notes by the
memex index's own file states. The index holds a bounded gist of each record's text
(``omitted`` says how much it left out); it finds and orders candidates and is never
evidence — ``recall.ground`` re-opens the record itself."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory.dialect import SQLITE, Dialect
from ..memory.migrations import apply_migrations
from ..memory.nodes import embed_hash
from .migrations import RECALL
from .records import Record
from .sources import SOURCES
from .sources import git as gitsrc

if TYPE_CHECKING:
    from ..embed.base import Embedder
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["Hit", "IndexedRecord", "RecordIndex", "RefreshSummary", "Root"]

PERSON_CAP = 16_000
OTHER_CAP = 32_000
_PATHS = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w{1,5}\b|\b[\w-]+\.(?:py|js|ts|tsx|go|rs|rb|java|"
                    r"c|h|cpp|md|org|toml|yaml|yml|json|sql|sh|el|cfg|ini|html|css)\b")
_TS = re.compile(r"[<\[](\d{4}-\d{2}-\d{2})(?: [^\]>\d]+)?(?: (\d{1,2}):(\d{2}))?")
_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


_VERSION_KEY = re.compile(r"\d+(?:\.\d+)+(?:-[a-z]+\d*)?")
"""A cue term that is a version key (``cue.version_key``): "1.0", "2.3.1", "1.1-rc1"."""


@dataclass(frozen=True)
class Root:
    """One place records are read from: ``kind`` is a transcript source (claude-code, codex,
    gemini, aider, opencode, opencortex), ``git`` or ``notes`` (the memex)."""

    kind: str
    path: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.path}"


@dataclass
class IndexedRecord:
    """A row of the record index: what it says of a record (a gist, never evidence)."""

    id: int
    file: str
    source: str
    kind: str
    root: str
    session_id: str
    locator: str
    handle: str
    title: str | None
    cwd: str | None
    branch: str | None
    parent_id: str | None
    author: str | None
    started: dt.datetime | None
    ended: dt.datetime | None
    paths: list[str]
    turns: int
    person_turns: int
    chars: int
    omitted: int
    receipt: dict[str, Any]

    @property
    def gist(self) -> str:
        return self.title or self.session_id


@dataclass
class Hit:
    record: IndexedRecord
    score: float
    matched: list[str]
    """Cue terms the record's indexed text carries (title/person/other/paths)."""
    semantic: float = 0.0
    """Cosine of the record's gist to the cue (0 when not measured)."""


@dataclass
class RefreshSummary:
    files_seen: int = 0
    files_read: int = 0
    records_added: int = 0
    removed: int = 0
    commits_added: int = 0
    notes_added: int = 0
    embedded: int = 0
    skipped: int = 0
    """FIFOs, sockets, devices in a transcript folder: never opened (they would block)."""
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    """Wall time of the whole refresh as the caller saw it (the sync, waiting for the lock,
    reading the roots, embedding the gists): what ``recall --index-only`` reports."""
    read_seconds: float = 0.0
    """Of that, reading the roots into the index."""
    embed_seconds: float = 0.0
    """Of that, embedding the new records' gists."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_COLS = ("id, file, source, kind, root, session_id, locator, handle, title, cwd, branch, "
         "parent_id, author, started, ended, paths, turns, person_turns, chars, omitted, receipt")


def _ts(t: dt.datetime | None) -> float | None:
    return t.timestamp() if t else None


def _dt(x: float | None) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(x, dt.UTC) if x is not None else None


def _row(r: Sequence[Any]) -> IndexedRecord:
    return IndexedRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                         r[11], r[12], _dt(r[13]), _dt(r[14]),
                         [p for p in r[15].split("\n") if p], r[16], r[17], r[18], r[19],
                         json.loads(r[20] or "{}"))


def _cap(parts: Iterable[str], cap: int) -> tuple[str, int]:
    text = "\n".join(parts)
    return (text, 0) if len(text) <= cap else (text[:cap], len(text) - cap)


def fts_term(term: str) -> str:
    """One FTS5 expression for a cue term: a quoted token or phrase (no syntax leaks)."""
    words = re.findall(r"\w+", term)
    return '"' + " ".join(words).replace('"', "") + '"' if words else ""


class RecordIndex:
    """Record rows + FTS5 in the SQLite index store (tables from ``recall.migrations``)."""

    dialect: Dialect = SQLITE
    """How this database spells what SQL engines spell differently (``memory.dialect``)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.still_pending = 0  # gists left without a vector by the last embed_pending
        self._migrate()

    def _migrate(self) -> None:
        """Create or upgrade recall's tables (its own migration set)."""
        apply_migrations(self.db, [RECALL])

    # -- the SQL dialect: what a store other than SQLite overrides (recall.pg_index) -----
    def q(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (``?`` placeholders); returns an iterable cursor."""
        return self.db.execute(self.dialect.sql(sql), list(params))

    def _where(self, head: str, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``head`` followed by "``col`` is one of ``values``" in this dialect."""
        cond, args = self.dialect.in_(col, values)
        return f"{head} {cond}", args

    def _fts_put(self, rid: int, title: str, person: str, other: str, paths: str) -> None:
        self.q("INSERT INTO rec_fts (rowid, title, person, other, paths) VALUES (?,?,?,?,?)",
               (rid, title, person, other, paths))

    def _fts_drop(self, ids: Sequence[int]) -> None:
        self.q(*self._where("DELETE FROM rec_fts WHERE", "rowid", ids))

    def _fts_ids(self, strong: bool, term: str) -> set[int]:
        """Records whose title/person/paths (``strong``) or other text carry ``term``."""
        expr = fts_term(term)
        if not expr:
            return set()
        cols = "{title person paths}" if strong else "{other}"
        return {r[0] for r in self.q("SELECT rowid FROM rec_fts WHERE rec_fts MATCH ?",
                                     (f"{cols} : {expr}",))}

    def _put_vectors(self, model: str, dim: int, rows: list[tuple[str, Any]]) -> None:
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
                                [(h, model, dim, v.tobytes()) for h, v in rows])

    @classmethod
    def for_memex(cls, memex: Memex) -> RecordIndex:
        """The record index of ``memex``: in its SQLite index; with a PostgreSQL store, by
        default in this machine's local SQLite file (``Memex.local_db``: a team's store
        should not hold one person's transcripts), or in the store itself with
        ``[recall] index = "store"`` / ``OPENCORTEX_RECALL_INDEX=store`` (a person whose
        history outgrows a laptop). Derived and disposable either way."""
        where = memex.settings.recall.index
        store = memex.store
        if where == "store" and not isinstance(getattr(store, "db", None), sqlite3.Connection):
            from .pg_index import PgRecordIndex

            return PgRecordIndex(store)
        return cls(memex.local_db)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: all of a root's changes land together or not at all."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- refresh ---------------------------------------------------------------------------
    def refresh(self, roots: Sequence[Root], memex: Memex | None = None,
                progress: Callable[[int, int], None] | None = None,
                archive: Any = None) -> RefreshSummary:
        """Bring the index up to date with every root (one transaction per root, so a
        reader never sees half of one). With an ``archive`` (recall.archive.Archive), a
        transcript whose original is gone keeps its records, read from the archived copy."""
        t0 = time.perf_counter()
        s = RefreshSummary()
        for root in roots:
            try:
                if root.kind == "git":
                    self._refresh_git(root, s)
                elif root.kind == "notes":
                    if memex is not None:
                        self._refresh_notes(root, memex, s)
                else:
                    self._refresh_transcripts(root, s, progress, archive)
            except gitsrc.GitError as e:
                s.failed.append(f"{root}: {e}")
        s.seconds = s.read_seconds = time.perf_counter() - t0
        return s

    def _files(self, source: str, root: str) -> dict[str, tuple[int, int]]:
        return {p: (m, z) for p, m, z in self.q(
            "SELECT path, mtime_ns, size FROM rec_files WHERE source = ? AND root = ?",
            (source, root))}

    def _drop_file(self, path: str) -> None:
        ids = [r[0] for r in self.q("SELECT id FROM rec_records WHERE file = ?",
                                             (path,))]
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            self._fts_drop(chunk)
            self.q(*self._where("DELETE FROM rec_views WHERE", "record_id", chunk))
            self.q(*self._where("DELETE FROM rec_records WHERE", "id", chunk))
        self.q("DELETE FROM rec_files WHERE path = ?", (path,))

    def _insert(self, file: str, boundary: str, kind: str, rec: Record, title: str | None,
                person: str, other: str, paths: list[str], omitted: int,
                author: str | None = None, tags: str = "", body: str = "") -> None:
        # tags are searched and read for meaning with the title, but never become its words
        named = f"{title or ''} {tags}".strip() or None
        gist = _gist(named, person or other)
        rid = self.q(
            "INSERT INTO rec_records (file, boundary, source, kind, root, session_id, locator, "
            "handle, title, cwd, branch, parent_id, author, started, ended, paths, turns, "
            "person_turns, chars, omitted, receipt, gist, embed_hash) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
            (file, boundary, rec.source, kind, rec.root, rec.session_id, rec.locator, rec.handle,
             title, rec.cwd, rec.branch, rec.parent_id, author, _ts(rec.started),
             _ts(rec.ended), "\n".join(paths), len(rec.turns), len(rec.person_turns),
             len(person) + len(other) + omitted, omitted,
             json.dumps(rec.receipt.to_dict()), gist, embed_hash(gist) if gist else None)
        ).fetchone()[0]
        self._fts_put(rid, named or "", person, other, " ".join(paths))
        views = body_views(gist, body)
        for v in views:
            self.q("INSERT INTO rec_views (record_id, hash, text) VALUES (?,?,?)",
                   (rid, embed_hash(v), v))

    def _put_record(self, file: str, boundary: str, rec: Record) -> None:
        person, om1 = _cap((t.text for t in rec.turns if t.origin == "person"), PERSON_CAP)
        other, om2 = _cap((t.text for t in rec.turns if t.origin in ("assistant", "tool")),
                          OTHER_CAP)
        paths = list(dict.fromkeys(_PATHS.findall(person + "\n" + other)))[:200]
        self._insert(file, boundary, "session", rec, rec.title, person, other, paths,
                     om1 + om2)

    def _refresh_transcripts(self, root: Root, s: RefreshSummary,
                             progress: Callable[[int, int], None] | None,
                             archive: Any = None) -> None:
        source = SOURCES[root.kind]
        known = self._files(root.kind, root.path)
        found = source.discover([Path(root.path)])
        todo: list[tuple[str, os.stat_result]] = []
        seen: set[str] = set()
        for fp in found:
            key = os.path.abspath(fp)  # plain strings: pathlib costs more than the stat here
            seen.add(key)
            try:
                st = os.stat(fp)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                s.skipped += 1
                seen.discard(key)
                continue
            if known.get(key) != (st.st_mtime_ns, st.st_size):
                todo.append((key, st))
        s.files_seen += len(found)
        gone = [p for p in known if p not in seen]
        archived: list[tuple[str, Any]] = []
        if archive is not None:
            kept = archive.missing(root.kind, root.path, seen)
            archived = [(p, e) for p, e in kept.items() if known.get(p) != (e.mtime_ns, e.size)]
            gone = [p for p in gone if p not in kept]
        if not todo and not gone and not archived:
            return
        with self._transaction():
            for p in gone:
                self._drop_file(p)
                s.removed += 1
            for p, e in archived:  # the original is gone: its archived copy stands in
                self._drop_file(p)
                try:
                    recs = archive.read_records(root.kind, p) or []
                except OSError as err:
                    s.failed.append(f"{p}: archived copy unreadable: {err}")
                    continue
                for rec in recs:
                    self._put_record(p, root.path, rec)
                    s.records_added += 1
                self.q("INSERT INTO rec_files VALUES (?,?,?,?,?,'')",
                       (p, root.kind, root.path, e.mtime_ns, e.size))
                s.files_read += 1
            for n, (key, st) in enumerate(todo, 1):
                self._drop_file(key)
                for rec in source.read(Path(key)):
                    if rec.receipt.state not in ("succeeded", "empty"):
                        s.failed.append(f"{key}: {rec.receipt.state} {rec.receipt.detail or ''}")
                    self._put_record(key, root.path, rec)
                    s.records_added += 1
                self.q("INSERT INTO rec_files VALUES (?,?,?,?,?,'')",
                                (key, root.kind, root.path, st.st_mtime_ns, st.st_size))
                s.files_read += 1
                if progress and n % 200 == 0:
                    progress(n, len(todo))

    def _refresh_git(self, root: Root, s: RefreshSummary) -> None:
        key = f"git:{root.path}"
        tips = gitsrc.branch_tips(root.path)
        row = self.q("SELECT state FROM rec_files WHERE path = ?", (key,)).fetchone()
        old = json.loads(row[0]) if row and row[0] else {}
        if old == tips:
            return
        exclude = sorted(set(old.values()))
        heads = sorted(set(tips.values()))
        try:
            commits = list(gitsrc.log(root.path, exclude, heads))
            full = False
        except gitsrc.GitError:  # an old tip vanished (history rewritten): read it all again
            commits, full = list(gitsrc.log(root.path, None, heads)), True
        with self._transaction():
            if full or not tips or not old:  # a first read, or the state forgotten: anew
                self._drop_file(key)
            have = {r[0] for r in self.q(
                "SELECT session_id FROM rec_records WHERE file = ?", (key,))}
            for c in commits:
                if c.sha in have:
                    continue
                rec = Record("git", c.sha, root.path, f"{root.path}@{c.sha}", c.subject,
                             root.path, None, c.when, c.when, [],
                             gitsrc.reopen(root.path, c.sha),
                             _commit_receipt(root.path, c.sha))
                self._insert(key, root.path, "commit", rec, c.subject, "", c.body, c.paths,
                             0, author=c.author, body=c.body)
                s.commits_added += 1
            self.q("INSERT INTO rec_files VALUES (?,?,?,?,?,?) ON CONFLICT (path) DO UPDATE "
                   "SET state = excluded.state", (key, "git", root.path, 0, 0,
                                                   json.dumps(tips)))

    def _refresh_notes(self, root: Root, memex: Memex, s: RefreshSummary) -> None:
        store = memex.store
        is_record = memex.settings.record_filter()
        states = {p: st for p, st in store.file_states().items() if not is_record(p)}
        known = self._files("notes", root.path)
        changed = [p for p, st in states.items()
                   if known.get(f"notes:{p}") != (st[0], st[1])]
        gone = [p for p in known if p.removeprefix("notes:") not in states]
        if not changed and not gone:
            return
        with self._transaction():
            for p in gone:
                self._drop_file(p)
                s.removed += 1
            for rel in changed:
                key = f"notes:{rel}"
                self._drop_file(key)
                for node in store.file_nodes(rel, with_body=True):
                    body = node.body or ""
                    when = note_time(node)
                    loc = f"{root.path}/{rel}:{node.line}"
                    handle = f"id:{node.id}" if node.id else loc
                    from .records import Receipt

                    title = " / ".join([*node.outline, node.title]) or rel
                    rec = Record("notes", node.key, root.path, loc, title,
                                 None, None, when, when, [], handle,
                                 Receipt("notes", root.path, node.key, loc, None, None,
                                         "opencortex.recall.notes@1", "succeeded"))
                    text, om = _cap([body], OTHER_CAP)
                    tags = " ".join(node.tags)
                    self._insert(key, root.path, "note", rec, title, "", text,
                                 list(dict.fromkeys(_PATHS.findall(text)))[:50], om, tags=tags)
                    s.notes_added += 1
                st = states[rel]
                self.q("INSERT INTO rec_files VALUES (?,?,?,?,?,'')",
                                (key, "notes", root.path, st[0], st[1]))

    # -- reading ---------------------------------------------------------------------------
    def has_records(self) -> bool:
        """Whether any refresh ever indexed a record (a recall ran here)."""
        return self.q("SELECT 1 FROM rec_records LIMIT 1").fetchone() is not None

    def counts(self) -> dict[str, int]:
        return {k: n for k, n in self.q(
            "SELECT kind, count(*) FROM rec_records GROUP BY kind")}

    def scope(self, roots: Sequence[Root], window: tuple[float, float] | None
              ) -> tuple[set[int], int, int]:
        """Ids of records inside the boundary (roots × time window; unknown times are
        inside), with the count and characters of those the window leaves out."""
        if not roots:
            return set(), 0, 0
        cond = " OR ".join("(source = ? AND boundary = ?)" for _ in roots)
        params: list[Any] = []
        for r in roots:
            params += [r.kind, r.path]
        inside: set[int] = set()
        out_n = out_chars = 0
        for i, started, ended, chars in self.q(
                f"SELECT id, started, ended, chars FROM rec_records WHERE {cond}", params):
            if window is None or started is None or (
                    (ended if ended is not None else started) >= window[0]
                    and started < window[1]):
                inside.add(i)
            else:
                out_n += 1
                out_chars += chars
        return inside, out_n, out_chars

    def present_ids(self, conversation: str | None, since_iso: str) -> set[int]:
        """OpenCortex conversation records that are the present: the conversation the
        recall runs in, and any begun after the recall started (the person's current
        words are cue, never evidence)."""
        since = dt.datetime.fromisoformat(since_iso).timestamp()
        return {r[0] for r in self.q(
            "SELECT id FROM rec_records WHERE source = 'opencortex' AND "
            "(session_id = ? OR started >= ?)", (conversation or "", since))}

    def search(self, terms: Sequence[str], scope: set[int], limit: int = 200,
               person_weight: float = 1.5) -> list[Hit]:
        """Records in ``scope`` carrying the most of ``terms``, rarer terms counting more
        (idf), words in the person's own turns and titles more than the rest."""
        n_docs = max(1, len(scope))
        per_rec: dict[int, dict[str, float]] = {}
        found: list[tuple[str, float, set[int], set[int]]] = []
        for term in terms:
            if _VERSION_KEY.fullmatch(term):  # a release: the subjects naming that version
                strong, weak = self._version_ids(term) & scope, set()
            else:
                strong = self._fts_ids(True, term) & scope
                weak = self._fts_ids(False, term) & scope
            df = len(strong | weak)
            if df:
                found.append((term, math.log(1 + n_docs / df), strong, weak - strong))
        norm = self._length_norm(set().union(*(w for *_, w in found)) if found else set())
        for term, idf, strong, weak in found:
            for i in strong:
                per_rec.setdefault(i, {})[term] = idf * person_weight
            for i in weak:  # BM25's length normalisation: a long body is many chances
                per_rec.setdefault(i, {})[term] = idf * norm.get(i, 1.0)
        ranked = sorted(per_rec.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))[:limit]
        rows = self.get([i for i, _ in ranked])
        return [Hit(rows[i], sum(m.values()), list(m)) for i, m in ranked if i in rows]

    def _version_ids(self, key: str) -> set[int]:
        """Records whose title names the release ``key`` (``cue.version_key``): "1.0" is
        the subject's "v1.0.0" or "1.0.0", never "1.0.2" nor "11.0"."""
        from .cue import versions

        head = key.split(".", 1)[0]
        return {i for i, title in self.q("SELECT id, title FROM rec_records WHERE title LIKE ?",
                                         (f"%{head}.%",))
                if title and key in versions(title)}

    def _length_norm(self, ids: set[int], k1: float = 1.2, b: float = 0.75
                     ) -> dict[int, float]:
        """BM25's weight of one occurrence in a record of its length (1.0 at the average
        length, less in a longer one: a long merge body does not win by volume)."""
        if not ids:
            return {}
        # one scan of two integer columns: cheaper than the average plus lookups by id
        rows = self.q("SELECT id, chars FROM rec_records").fetchall()
        avg = (sum(c or 0 for _, c in rows) / len(rows) if rows else 0.0) or 1.0
        return {i: (k1 + 1) / (1 + k1 * (1 - b + b * (c or 0) / avg))
                for i, c in rows if i in ids}

    def get(self, ids: Sequence[int]) -> dict[int, IndexedRecord]:
        out: dict[int, IndexedRecord] = {}
        for i in range(0, len(ids), 500):
            chunk = list(ids[i:i + 500])
            for r in self.q(*self._where(f"SELECT {_COLS} FROM rec_records WHERE", "id",
                                         chunk)):
                out[r[0]] = _row(r)
        return out

    def near(self, rec: IndexedRecord, scope: set[int], hours: float = 3.0
             ) -> list[IndexedRecord]:
        """Records sharing ``rec``'s working directory (or repository) whose time lies
        within ``hours`` of its span: candidates to join into one recognizable."""
        if rec.started is None or not rec.cwd:
            return []
        lo = rec.started.timestamp() - hours * 3600
        hi = (rec.ended or rec.started).timestamp() + hours * 3600
        rows = self.q(
            f"SELECT {_COLS} FROM rec_records WHERE id != ? AND started BETWEEN ? AND ? "
            "AND (cwd = ? OR root = ? OR (parent_id IS NOT NULL AND parent_id = ?)) "
            "ORDER BY started LIMIT 50",
            (rec.id, lo, hi, rec.cwd, rec.cwd, rec.session_id))
        return [r for r in map(_row, rows) if r.id in scope]

    def children(self, rec: IndexedRecord) -> list[IndexedRecord]:
        rows = self.q(f"SELECT {_COLS} FROM rec_records WHERE source = ? AND "
                               "parent_id = ? AND id != ?",
                               (rec.source, rec.session_id, rec.id))
        return [_row(r) for r in rows]

    # -- semantic ----------------------------------------------------------------------
    def pending_gists(self, model: str, dim: int, limit: int | None = None
                      ) -> list[tuple[str, str]]:
        """(hash, gist) of record gists without a vector for (model, dim)."""
        sql = ("SELECT x.h, min(x.t) FROM (SELECT embed_hash AS h, gist AS t FROM rec_records "
               "WHERE embed_hash IS NOT NULL UNION ALL SELECT hash, text FROM rec_views) x "
               "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = x.h AND "
               "e.model = ? AND e.dim = ?) GROUP BY x.h")
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.q(sql, (model, dim)).fetchall()

    def embed_pending(self, embedder: Embedder, limit: int | None = None, batch: int = 64,
                      progress: Callable[[int, int], None] | None = None,
                      first: Sequence[IndexedRecord] | None = None) -> int:
        """Embed record gists that have no vector yet (content-addressed: the shared
        ``embeddings`` table, so a gist is never embedded twice), at most ``limit``.
        With ``first`` (a pass's keyword hits): their gists, so what a pass weighs is never
        decided by which vectors happen to exist — and the others too only when all that
        is pending fits the ``limit`` (a small history is finished in passing; a large one
        is left to the heartbeat and ``recall --index-only``, not to a person's wait)."""
        import numpy as np

        rows = sorted(self.pending_gists(embedder.name, embedder.dim))
        total = len(rows)
        if first is not None and limit is not None and total > limit:
            ids = [r.id for r in first]
            want = {h for h, in self.q(*self._where(
                "SELECT embed_hash FROM rec_records WHERE", "id", ids))} | {h for h, in self.q(
                *self._where("SELECT hash FROM rec_views WHERE", "record_id", ids))
            } if first else set()
            rows = [r for r in rows if r[0] in want]
        rows = rows[:limit] if limit else rows
        self.still_pending = total - len(rows)
        rows = sorted(rows, key=lambda r: len(r[1]))  # similar lengths batch with less padding
        for i in range(0, len(rows), batch):
            chunk = rows[i:i + batch]
            vecs = np.asarray(embedder.embed([g for _, g in chunk]), dtype="<f4")
            self._put_vectors(embedder.name, embedder.dim,
                              [(h, v) for (h, _), v in zip(chunk, vecs, strict=True)])
            if progress:
                progress(min(i + batch, len(rows)), len(rows))
        return len(rows)

    def dense(self, query: Any, scope: set[int], model: str, dim: int, k: int = 50
              ) -> list[tuple[int, float]]:
        """Records in ``scope`` nearest the query vector: (id, cosine of the record's best
        view — its gist or a chunk of its body), best first.  The best view, not a mean:
        a cue recalls one thing a record says, and a long record says many."""
        import numpy as np

        ids: list[int] = []
        blobs: list[bytes] = []
        want = dim * 4
        for i, blob in self.q(
                "SELECT r.id, e.vec FROM rec_records r JOIN embeddings e ON e.hash = "
                "r.embed_hash AND e.model = ? AND e.dim = ? UNION ALL SELECT v.record_id, "
                "e.vec FROM rec_views v JOIN embeddings e ON e.hash = v.hash AND e.model = ? "
                "AND e.dim = ?", (model, dim, model, dim)):
            if i in scope and len(blob) == want:
                ids.append(i)
                blobs.append(blob)
        if not ids:
            return []
        m = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dim)
        scores = m @ np.asarray(query, dtype="<f4").reshape(dim)
        best: dict[int, float] = {}
        for j in np.argsort(-scores):  # best first: a record's first row is its best view
            i = ids[j]
            if i not in best:
                best[i] = float(scores[j])
                if len(best) >= k:
                    break
        return list(best.items())

    def roots_indexed(self) -> list[tuple[str, str, int, int]]:
        """(source, configured root, records, characters) for every root the index holds."""
        return list(self.q("SELECT source, boundary, count(*), sum(chars) FROM "
                                    "rec_records GROUP BY source, boundary ORDER BY 1, 2"))


VIEW_WIDTH = 300
"""Characters of one view: about what MiniLM reads (it truncates at 256 word pieces)."""
MAX_VIEWS = 6
"""Views a record gets beside its gist: a merge's long body stays a few vectors."""
_TRAILER = re.compile(r"^\s*[\w-]+-by:\s", re.I | re.M)


def body_views(gist: str, body: str, width: int = VIEW_WIDTH, cap: int = MAX_VIEWS
               ) -> list[str]:
    """A record's body as views the gist does not already hold: paragraphs (joined lines,
    trailers like ``Signed-off-by:`` left out), cut between words at ``width``.  A chunk
    the gist contains adds no meaning and no vector (a one-line body is its gist's)."""
    have = " ".join(gist.split())
    out: list[str] = []
    for para in re.split(r"\n\s*\n", body):
        text = " ".join(" ".join(line for line in para.splitlines()
                                 if not _TRAILER.match(line)).split())
        while text:
            cut = len(text) if len(text) <= width else (text.rfind(" ", 0, width) + 1 or width)
            piece, text = text[:cut].strip(), text[cut:].strip()
            if len(piece) >= 12 and piece not in have and piece not in out:
                out.append(piece)
            if len(out) >= cap:
                return out
    return out


def _gist(title: str | None, text: str, width: int = 300) -> str:
    """What a record is about, for the semantic index: its title and its opening words."""
    head = " ".join(text.split())[:width]
    return (f"{title}. {head}" if title and not head.startswith(title[:40]) else head or
            (title or "")).strip()


def _commit_receipt(root: str, sha: str) -> Any:
    from .records import Receipt

    return Receipt("git", root, sha, f"{root}@{sha}", None, None, gitsrc.EXTRACTOR,
                   "succeeded", skipped_lines=0, omitted_chars=0)


def note_time(node: Node) -> dt.datetime | None:
    """When a note's past happened, as the note says: CLOSED, a CREATED property, the
    first timestamp in its title or body, or a datetree day in its outline; else None."""
    from .records import parse_time

    for raw in (node.closed, node.properties.get("CREATED"), node.title, node.body or ""):
        if raw:
            m = _TS.search(raw)
            if m:
                t = parse_time(m.group(1) + (f"T{int(m.group(2)):02d}:{m.group(3)}"
                                             if m.group(2) else "T12:00"))
                if t:
                    return t
    for part in reversed(node.outline):
        m = _DAY.search(part)
        if m:
            return parse_time(f"{m.group(0)}T12:00")
    return None
