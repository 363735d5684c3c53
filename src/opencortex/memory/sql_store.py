"""The one index-store implementation over SQL: every read, the query compiler, the write
journal and the generation counter, written once with ``?`` placeholders and the few
engine-specific pieces asked of a ``Dialect``. ``SqliteStore`` and ``PgStore`` add only
what truly differs: the connection, transactions and locks, bulk writes, and the rows the
keyword and vector engines (``retrieval.keyword``, ``retrieval.vectors``) ask for."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .dialect import Dialect
from .nodes import Node, NodeLink
from .query import DATE_FIELDS, Predicate, QuerySyntaxError, date_condition

__all__ = ["NODE_COLS", "JournalRow", "SqlStore", "node_from_row"]

NODE_COLS = (
    "n.key, f.path, n.line, n.level, n.title, n.org_id, n.todo, n.todo_type, n.priority, "
    "n.tags, n.local_tags, n.outline, n.properties, n.category, n.scheduled_raw, "
    "n.deadline_raw, n.closed_raw, n.byte_start, n.byte_end"
)
_NODES = "nodes n JOIN files f ON f.id = n.file_id"
_LINK_COLS = "l.type, l.path, l.description, l.search, l.target_key, n.key, n.title"


def node_from_row(r: Sequence[Any], body: str | None = None) -> Node:
    return Node(
        key=r[0], file=r[1], line=r[2], level=r[3], title=r[4], id=r[5], todo=r[6],
        todo_type=r[7], priority=r[8], tags=r[9].split(), local_tags=r[10].split(),
        outline=json.loads(r[11]), properties=json.loads(r[12]), category=r[13],
        scheduled=r[14], deadline=r[15], closed=r[16], byte_start=r[17], byte_end=r[18],
        body=body,
    )


@dataclass(slots=True)
class JournalRow:
    id: int
    at: float
    op: str
    description: str
    path: str
    before_hash: str | None
    after_hash: str
    undone_at: float | None
    batch: str | None


class SqlStore:
    """Files, nodes, links, the journal and meta in SQL tables of the same shape on every
    engine (``migrations``). Subclasses set ``db`` (a DB-API connection whose ``execute``
    returns a cursor) and ``dialect``, and implement transactions and ``put_file``."""

    dialect: Dialect
    db: Any
    path: str

    def q(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement written with ``?`` placeholders; returns the cursor."""
        return self.db.execute(self.dialect.sql(sql), list(params))

    def insert_id(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one INSERT into a table with an ``id`` key; the new row's id (PostgreSQL:
        ``RETURNING id``; SQLite overrides with the cheaper ``lastrowid``)."""
        return int(self.q(f"{sql} RETURNING id", params).fetchone()[0])

    def _query_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's errors that mean "this query cannot run" (a user's bad query)."""
        return ()

    # -- transactions (per engine) ------------------------------------------------
    def begin(self) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def rollback(self) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction: commit at the end of the block, roll back on error."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def sync_lock(self) -> contextlib.AbstractContextManager[None]:
        """Held for a whole sync (from reading file states to commit); a store whose
        write transactions already serialise its writers needs nothing more."""
        return contextlib.nullcontext()

    def clear(self) -> None:
        """Empty the index (``index --rebuild``): files, nodes, links, passages.  The
        journal (undo history) and the vectors stay."""
        with self.transaction():
            self._clear_tables()
            self.bump_generation()

    def _clear_tables(self) -> None:
        for table in ("links", "passages", "nodes", "files"):
            self.q(f"DELETE FROM {table}")

    # -- sync ----------------------------------------------------------------
    def file_states(self) -> dict[str, tuple[int, int, str]]:
        return {p: (m, s, h) for p, m, s, h in
                self.q("SELECT path, mtime_ns, size, hash FROM files")}

    def _file_id(self, relpath: str) -> int | None:
        row = self.q("SELECT id FROM files WHERE path = ?", (relpath,)).fetchone()
        return row[0] if row else None

    def _delete_file_rows(self, file_id: int) -> None:
        for table in ("links", "passages", "nodes"):
            self.q(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))

    def _put_file_meta(self, relpath: str, meta: tuple[Any, ...]) -> int:
        """Insert or update one file's row (clearing its old rows); returns its id."""
        file_id = self._file_id(relpath)
        if file_id is not None:
            self._delete_file_rows(file_id)
            self.q("UPDATE files SET mtime_ns=?, size=?, hash=?, title=?, filetags=?, "
                   "todo_keywords=?, done_keywords=?, errors=?, node_count=?, indexed_at=? "
                   "WHERE id=?", (*meta, file_id))
            return file_id
        return self.insert_id(
            "INSERT INTO files (path, mtime_ns, size, hash, title, filetags, todo_keywords, "
            "done_keywords, errors, node_count, indexed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (relpath, *meta))

    def _next_node_id(self) -> int:
        return self.q("SELECT coalesce(max(id), 0) + 1 FROM nodes").fetchone()[0]

    def touch_file(self, relpath: str, state: tuple[int, int, str]) -> None:
        """Record a new (mtime, size) for a file whose content hash did not change."""
        self.q("UPDATE files SET mtime_ns=?, size=? WHERE path=?",
               (state[0], state[1], relpath))

    def remove_files(self, relpaths: Iterable[str]) -> None:
        for p in relpaths:
            file_id = self._file_id(p)
            if file_id is not None:
                self._delete_file_rows(file_id)
                self.q("DELETE FROM files WHERE id = ?", (file_id,))

    def _file_link_targets(self) -> Iterable[tuple[Any, str | None, str | None]]:
        """(link row, its current target, the heading a ``file:…::*Heading`` link names)."""
        import posixpath

        rows = self.q(
            f"SELECT l.{self.dialect.rowid}, f.path, l.path, l.search, l.target_key FROM links l "
            "JOIN files f ON f.id = l.file_id WHERE l.type = 'file' AND l.search LIKE '*%'"
        ).fetchall()
        for lid, src, target, search, old in rows:
            tpath = posixpath.normpath(posixpath.join(posixpath.dirname(src), target))
            hit = self.q(
                "SELECT n.key FROM nodes n JOIN files f ON f.id = n.file_id "
                "WHERE f.path = ? AND n.title = ? ORDER BY n.idx LIMIT 1",
                (tpath, search[1:].strip())).fetchone()
            yield lid, old, hit[0] if hit else None

    def resolve_links(self) -> None:
        """Point id: links at the node holding that ID, and file links with a
        ``::*Heading`` search at that heading in the target file.  Only rows whose
        target changes are written (an UPDATE of every link would rewrite them all)."""
        rid = self.dialect.rowid
        self.q(f"UPDATE links SET target_key = t.k FROM (SELECT l2.{rid} AS lid, (SELECT "
               "'id:' || n.org_id FROM nodes n WHERE n.org_id = l2.path LIMIT 1) AS k "
               "FROM links l2 WHERE l2.type = 'id') t "
               f"WHERE links.{rid} = t.lid AND {self.dialect.distinct('links.target_key', 't.k')}")
        for lid, old, new in self._file_link_targets():
            if new != old:
                self.q(f"UPDATE links SET target_key = ? WHERE {rid} = ?", (new, lid))

    def generation(self) -> str:
        """A value that changes whenever nodes or vectors change — unique to this index
        database, so caches of a deleted and rebuilt index are never mistaken for it."""
        sql = "SELECT key, value FROM meta WHERE key IN ('generation', 'instance')"
        rows = dict(self.q(sql).fetchall())
        if "instance" not in rows:
            import uuid

            self.q(self.dialect.upsert("meta", ("key", "value"), ("key",), ""),
                   ("instance", uuid.uuid4().hex))
            rows = dict(self.q(sql).fetchall())
        return f"{rows['instance']}:{rows.get('generation', '0')}"

    def bump_generation(self) -> None:
        """Call inside the transaction that changed nodes or vectors."""
        self.q(self.dialect.upsert(
            "meta", ("key", "value"), ("key",),
            "value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)"), ("generation", "1"))

    def counts(self) -> dict[str, int]:
        r = self.q(
            "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM nodes), "
            "(SELECT count(*) FROM links), "
            "(SELECT count(*) FROM nodes WHERE org_id IS NOT NULL)").fetchone()
        return {"files": r[0], "nodes": r[1], "links": r[2], "ids": r[3]}

    def file_errors(self) -> dict[str, list[str]]:
        return {p: json.loads(e) for p, e in
                self.q("SELECT path, errors FROM files WHERE errors != '[]'")}

    # -- queries ---------------------------------------------------------------
    def find(self, predicates: Sequence[Predicate], limit: int | None = None,
             order: str = "file", today: dt.date | None = None,
             with_body: bool = False) -> list[Node]:
        """Nodes matching every predicate.  ``order``: file | rank | closed | scheduled | deadline."""
        d = self.dialect
        today = today or dt.date.today()
        where: list[str] = []
        params: list[Any] = []
        text = None
        for p in predicates:
            if p.field == "text" and not p.negate and text is None:
                text = d.text_match(p.values)
                where.append(text.where)
                params.extend(text.params)
                continue
            sql, args = self._compile(p, today)
            where.append(sql)
            params.extend(args)
        by_file = "f.path, n.idx"
        order_sql = {
            "file": by_file,
            "rank": text.rank if text else by_file,
            "closed": f"{d.nulls('n.closed', desc=True)}, {by_file}",
            "scheduled": f"{d.nulls('n.scheduled')}, {by_file}",
            "deadline": f"{d.nulls('n.deadline')}, {by_file}",
        }.get(order)
        if order_sql is None:
            raise QuerySyntaxError(f"unknown order {order!r}")
        if order == "rank" and text:
            params.extend(text.rank_params)
        sql = (f"SELECT {NODE_COLS}{', n.body' if with_body else ''} "
               f"FROM {text.frm if text else _NODES} "
               f"WHERE {' AND '.join(where) or 'true'} ORDER BY {order_sql}")
        if limit:
            sql += f" LIMIT {int(limit)}"
        try:
            rows = self.q(sql, params).fetchall()
        except self._query_errors() as e:
            raise QuerySyntaxError(f"query failed: {e}") from e
        return [node_from_row(r, r[19] if with_body else None) for r in rows]

    def _compile(self, p: Predicate, today: dt.date) -> tuple[str, list[Any]]:
        """One predicate as a condition over ``n`` (nodes) and ``f`` (files); a negated
        one is true where the condition is not (NULL included: ``-todo:DONE`` keeps the
        headings without a keyword, as org-ql's ``(not (todo "DONE"))`` does)."""
        sql, args = self._condition(p, today)
        return (f"(({sql}) IS NOT TRUE)", args) if p.negate else (sql, args)

    def _condition(self, p: Predicate, today: dt.date) -> tuple[str, list[Any]]:
        d = self.dialect
        if p.field == "any":
            return self._join(" OR ", [
                self._join(" AND ", [self._compile(q, today) for q in g]) for g in p.groups])
        v = list(p.values)
        f = p.field
        if f == "todo":
            return d.in_("n.todo", v) if v else ("n.todo_type = 'todo'", [])
        if f == "done":
            return "n.todo_type = 'done'", []
        if f == "open":  # not done (a node without a keyword is open)
            return "coalesce(n.todo_type, '') != 'done'", []
        if f == "archived":
            return "n.archived != 0", []
        if f == "project":  # tagged project locally, or an outermost Project category
            return (f"({d.has_word('n.local_tags')} OR (lower(n.category) = 'project' "
                    "AND n.parent_idx IS NULL))", [" project "])
        if f == "tags":
            if not v:
                return "n.tags != ''", []
            return ("(" + " OR ".join(d.has_word("n.tags") for _ in v) + ")",
                    [f" {t.strip(':')} " for t in v])
        if f == "heading":
            return self._join(" AND ", [d.contains_ci("n.title", w) for w in v])
        if f == "id":
            return d.in_("n.org_id", v)
        if f == "file":
            return self._join(" OR ", [self._join(" OR ", [d.glob("f.path", w),
                                                            d.contains_ci("f.path", w)])
                                       for w in v])
        if f == "priority":
            return d.in_("n.priority", [x.upper() for x in v])
        if f == "level":
            return d.in_("n.level", [int(x) for x in v])
        if f == "category":
            return d.in_("n.category", v)
        if f == "prop":
            key, eq, val = v[0].partition("=")
            cond = (f"EXISTS (SELECT 1 FROM {d.json_each('n.properties')} j "
                    "WHERE upper(j.key) = upper(?)")
            return (cond + " AND j.value = ?)", [key, val]) if eq else (cond + ")", [key])
        if f in DATE_FIELDS:
            return date_condition(f, v[0] if v else "any", today, "?")
        if f == "text":
            return d.text_not(v)
        raise QuerySyntaxError(f"unknown predicate {f!r}")

    @staticmethod
    def _join(op: str, parts: Sequence[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
        return "(" + op.join(s for s, _ in parts) + ")", [a for _, args in parts for a in args]

    def select(self, where: str, params: Sequence[Any] = (), order: str = "f.path, n.idx",
               with_body: bool = False) -> list[Node]:
        """Nodes matching a SQL condition over ``n`` (nodes) and ``f`` (files), ``?``
        placeholders (memory's own seam; callers elsewhere use ``find`` and friends)."""
        if where.strip() in ("1", "1=1"):
            where = "true"
        rows = self.q(f"SELECT {NODE_COLS}{', n.body' if with_body else ''} FROM {_NODES} "
                      f"WHERE {where} ORDER BY {order}", params)
        return [node_from_row(r, r[19] if with_body else None) for r in rows]

    def vocabulary(self) -> tuple[list[str], list[str]]:
        """The TODO keywords of every indexed file (``#+TODO`` lines, else TODO/DONE)
        and the priorities in use (Org's A, B, C always), for checking a query."""
        kws: dict[str, None] = {}
        for todo, done in self.q("SELECT todo_keywords, done_keywords FROM files"):
            kws.update(dict.fromkeys([*json.loads(todo), *json.loads(done)]))
        pris = {r[0] for r in self.q("SELECT DISTINCT priority FROM nodes "
                                     "WHERE priority IS NOT NULL")}
        return list(kws or {"TODO": None, "DONE": None}), sorted({"A", "B", "C"} | pris)

    def agenda_rows(self, first: int | None = None, last: int | None = None,
                    today: int | None = None) -> list[tuple[Any, ...]]:
        """``(file, line, title, todo, todo_type, category, priority, tags, agenda JSON)``
        of the headings the agenda may list (``agenda.rows_from_records``), file order;
        with day ordinals ``first``..``last`` (and ``today``), only those that can reach
        those days (``agenda.agenda_window``)."""
        where, args = "n.agenda IS NOT NULL", []
        if first is not None and last is not None:
            reach = "(n.agenda_hi >= ? AND n.agenda_lo <= ?)"
            args = [first, last]
            if today is not None and first <= today <= last:
                reach = f"({reach} OR n.agenda_pend <= ?)"
                args.append(today)
            where = reach
        return [tuple(r) for r in self.q(
            "SELECT f.path, n.line, n.title, n.todo, n.todo_type, n.category, n.priority, "
            f"n.tags, n.agenda FROM {_NODES} WHERE {where} ORDER BY f.path, n.idx", args)]

    def agenda_sexps(self) -> int:
        """Diary sexps in the memex (the agenda never evaluates them; it says how many)."""
        return int(self.q("SELECT coalesce(sum(agenda_sexps), 0) FROM nodes "
                          "WHERE agenda_sexps > 0").fetchone()[0])

    def all_nodes(self, with_body: bool = False) -> list[Node]:
        """Every node, in file order."""
        return self.select("true", with_body=with_body)

    def file_nodes(self, relpath: str, with_body: bool = False) -> list[Node]:
        """The nodes of one file (memex-relative path), in file order."""
        return self.select("f.path = ?", [relpath], with_body=with_body)

    def nodes_by_keys(self, keys: Sequence[str], with_body: bool = True) -> dict[str, Node]:
        """Nodes by key (the first one for a key shared by duplicate IDs)."""
        out: dict[str, Node] = {}
        for i in range(0, len(keys), 500):
            cond, args = self.dialect.in_("n.key", list(keys[i:i + 500]))
            for n in self.select(cond, args, order="n.id", with_body=with_body):
                out.setdefault(n.key, n)
        return out

    def nodes_by_ref(self, ref: str) -> list[Node]:
        """Nodes a person may mean by ``ref``: an ID (``id:`` optional), a node key
        (``file.org::Outline/Title``), ``file.org:LINE`` (the node containing that line)
        or an exact title (case-insensitive)."""
        ref = ref.strip()
        oid = ref[3:] if ref.startswith("id:") else ref
        rows = self.select("n.org_id = ?", (oid,), order="n.id")
        if not rows and "::" in ref:
            rows = self.select("n.key = ?", (ref,), order="n.id")
        if not rows and ":" in ref:
            path, _, line = ref.rpartition(":")
            if line.isascii() and line.isdigit() and int(line) < 2**31:
                rows = self.select("f.path = ? AND n.line <= ?", (path, int(line)),
                                   order="n.line DESC LIMIT 1")
        if not rows:
            rows = self.select(self.dialect.eq_nocase("n.title"), (ref,))
        return rows

    def _links(self, where: str, params: Sequence[Any], order: str) -> list[NodeLink]:
        return [NodeLink(*r) for r in self.q(
            f"SELECT {_LINK_COLS} FROM links l JOIN nodes n ON n.id = l.source_id "
            f"WHERE {where} ORDER BY {order}", params)]

    def links_from(self, key: str) -> list[NodeLink]:
        return self._links("n.key = ?", (key,), f"l.{self.dialect.rowid}")

    def backlinks(self, key: str) -> list[NodeLink]:
        return self._links("l.target_key = ?", (key,), f"n.key, l.{self.dialect.rowid}")

    def dangling_links(self) -> list[NodeLink]:
        return self._links("l.type = 'id' AND l.target_key IS NULL", (),
                           f"l.{self.dialect.rowid}")

    # -- the write journal -------------------------------------------------------
    def journal_add(self, op: str, description: str, path: str, before_hash: str | None,
                    after_hash: str, before_data: bytes | None, before_mode: int | None,
                    batch: str | None = None) -> int:
        return self.insert_id(
            "INSERT INTO journal (at, op, description, path, before_hash, after_hash, "
            "before_data, before_mode, batch) VALUES (?,?,?,?,?,?,?,?,?)",
            (time.time(), op, description, os.fspath(path), before_hash, after_hash,
             before_data, before_mode, batch))

    def journal(self, limit: int = 20, include_undone: bool = False) -> list[JournalRow]:
        cond = "" if include_undone else "WHERE undone_at IS NULL "
        return [JournalRow(*r) for r in self.q(
            "SELECT id, at, op, description, path, before_hash, after_hash, undone_at, batch "
            f"FROM journal {cond}ORDER BY id DESC LIMIT ?", (limit,))]

    def journal_before(self, entry_id: int) -> tuple[bytes | None, int | None]:
        row = self.q("SELECT before_data, before_mode FROM journal WHERE id = ?",
                     (entry_id,)).fetchone()
        if not row:
            return None, None
        return (bytes(row[0]) if row[0] is not None else None), row[1]

    def journal_mark_undone(self, entry_id: int) -> None:
        self.q("UPDATE journal SET undone_at = ? WHERE id = ?", (time.time(), entry_id))

    # -- the keyword engine's sync state (which file hashes an external engine holds) ----
    def keyword_synced(self) -> dict[str, str]:
        return dict(self.q("SELECT path, hash FROM keyword_sync").fetchall())

    def keyword_sync_reset(self) -> None:
        self.q("DELETE FROM keyword_sync")

    def keyword_sync_record(self, removed: Iterable[str],
                            changed: Iterable[tuple[str, str]]) -> None:
        """Record what the engine now holds, in one transaction."""
        with self.transaction():
            for p in removed:
                self.q("DELETE FROM keyword_sync WHERE path = ?", (p,))
            up = self.dialect.upsert("keyword_sync", ("path", "hash"), ("path",))
            for p, h in changed:
                self.q(up, (p, h))

    def files_hashed(self) -> list[tuple[int, str, str]]:
        """(id, path, hash) of every indexed file."""
        return self.q("SELECT id, path, hash FROM files").fetchall()

    def keyword_docs(self, file_id: int) -> list[tuple[int, str, str, str, str, str]]:
        """(row id, key, outline JSON, title, tags, body) of one file's nodes."""
        return self.q("SELECT id, key, outline, title, tags, body FROM nodes WHERE file_id = ?",
                      (file_id,)).fetchall()

    def node_keys(self, ids: Sequence[int]) -> dict[int, str]:
        """Row id -> node key for the ids that still exist (a keyword engine's hits)."""
        if not ids:
            return {}
        where, params = self.dialect.in_("id", list(ids))
        return dict(self.q(f"SELECT id, key FROM nodes WHERE {where}", params).fetchall())

    # -- the vector engines' counts (the rows themselves are each engine's own) ----------
    def embedding_counts(self, model: str, dim: int) -> tuple[int, int]:
        """(nodes, nodes with a vector of this model and dim for every passage)."""
        nodes = self.q("SELECT count(*) FROM nodes").fetchone()[0]
        pending = self.q(
            "SELECT count(DISTINCT p.node_id) FROM passages p WHERE NOT EXISTS (SELECT 1 "
            "FROM embeddings e WHERE e.hash = p.hash AND e.model = ? AND e.dim = ?)",
            (model, dim)).fetchone()[0]
        return nodes, nodes - pending

    def embedding_passage_count(self, model: str, dim: int) -> int:
        """Passages with a vector of this model and dim (what a full search ranks)."""
        return self.q("SELECT count(*) FROM passages p JOIN embeddings e ON e.hash = p.hash "
                      "AND e.model = ? AND e.dim = ?", (model, dim)).fetchone()[0]
