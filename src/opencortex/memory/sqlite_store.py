"""The SQLite index store (stdlib ``sqlite3``, WAL, FTS5)."""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IndexStoreError
from .migrations import apply_migrations
from .nodes import FileRows, Node, NodeLink
from .query import DATE_FIELDS, Predicate, QuerySyntaxError, date_condition

__all__ = ["JournalRow", "SqliteStore", "fts_match"]

_NODE_COLS = (
    "n.key, f.path, n.line, n.level, n.title, n.org_id, n.todo, n.todo_type, n.priority, "
    "n.tags, n.local_tags, n.outline, n.properties, n.category, n.scheduled_raw, "
    "n.deadline_raw, n.closed_raw, n.byte_start, n.byte_end"
)


def _node(r: Sequence[Any], body: str | None = None) -> Node:
    return Node(
        key=r[0], file=r[1], line=r[2], level=r[3], title=r[4], id=r[5], todo=r[6],
        todo_type=r[7], priority=r[8], tags=r[9].split(), local_tags=r[10].split(),
        outline=json.loads(r[11]), properties=json.loads(r[12]), category=r[13],
        scheduled=r[14], deadline=r[15], closed=r[16], byte_start=r[17], byte_end=r[18],
        body=body,
    )


def fts_match(words: Sequence[str], op: str = "AND") -> str:
    """An FTS5 MATCH expression from user words: each quoted (so no FTS syntax leaks
    through), ``word*`` kept as a prefix query, multi-word tokens as phrases."""
    parts = []
    for w in words:
        prefix = w.endswith("*") and len(w) > 1
        w = w.rstrip("*") if prefix else w
        w = w.replace('"', '""').strip()
        if not w:
            continue
        parts.append(f'"{w}"' + ("*" if prefix else ""))
    if not parts:
        raise QuerySyntaxError("empty full-text query")
    return f" {op} ".join(parts)


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


class SqliteStore:
    """The index in one SQLite file: files, nodes, links, FTS5 and the write journal."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            self.db.execute("PRAGMA cache_size=-65536")
            apply_migrations(self.db)
        except sqlite3.DatabaseError as e:
            raise IndexStoreError(
                f"{self.path}: not a usable index ({e}). The index is disposable: "
                "delete the file or run `opencortex index --rebuild`.") from e

    # -- transactions -------------------------------------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.close()

    # -- sync ----------------------------------------------------------------
    def file_states(self) -> dict[str, tuple[int, int, str]]:
        return {p: (m, s, h) for p, m, s, h in
                self.db.execute("SELECT path, mtime_ns, size, hash FROM files")}

    def _delete_file_rows(self, file_id: int) -> None:
        db = self.db
        db.execute(
            "INSERT INTO nodes_fts(nodes_fts, rowid, title, tags, body) "
            "SELECT 'delete', id, title, tags, body FROM nodes WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM passages WHERE file_id = ?", (file_id,))
        db.execute("DELETE FROM nodes WHERE file_id = ?", (file_id,))

    def put_file(self, rows: FileRows, state: tuple[int, int, str]) -> int:
        """Replace everything indexed for one file (call inside begin/commit)."""
        db = self.db
        mtime_ns, size, h = state
        cur = db.execute("SELECT id FROM files WHERE path = ?", (rows.relpath,)).fetchone()
        meta = (mtime_ns, size, h, rows.title, " ".join(rows.filetags),
                json.dumps(rows.todo_keywords), json.dumps(rows.done_keywords),
                json.dumps(rows.errors), len(rows.nodes), time.time())
        if cur:
            file_id = cur[0]
            self._delete_file_rows(file_id)
            db.execute(
                "UPDATE files SET mtime_ns=?, size=?, hash=?, title=?, filetags=?, "
                "todo_keywords=?, done_keywords=?, errors=?, node_count=?, indexed_at=? "
                "WHERE id=?", (*meta, file_id))
        else:
            file_id = db.execute(
                "INSERT INTO files (path, mtime_ns, size, hash, title, filetags, todo_keywords, "
                "done_keywords, errors, node_count, indexed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (rows.relpath, *meta)).lastrowid
        if not rows.nodes:
            return file_id
        first = (db.execute("SELECT coalesce(max(id), 0) + 1 FROM nodes").fetchone()[0])
        db.executemany(
            "INSERT INTO nodes (id, file_id, idx, key, org_id, level, line, title, todo, "
            "todo_type, priority, local_tags, tags, outline, properties, category, scheduled, "
            "scheduled_raw, deadline, deadline_raw, closed, closed_raw, body, byte_start, "
            "byte_end, parent_idx, archived, embed_hash) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(first + i, file_id, *r) for i, r in enumerate(rows.nodes)])
        db.executemany(
            "INSERT INTO nodes_fts (rowid, title, tags, body) VALUES (?,?,?,?)",
            [(first + i, r[5], r[10], r[20]) for i, r in enumerate(rows.nodes)])
        if rows.links:
            db.executemany(
                "INSERT INTO links (source_id, file_id, type, path, description, search) "
                "VALUES (?,?,?,?,?,?)",
                [(first + ni, file_id, t, p, d, s) for ni, t, p, d, s in rows.links])
        if rows.passages:
            db.executemany(
                "INSERT INTO passages (node_id, file_id, seq, line, hash, body_line) "
                "VALUES (?,?,?,?,?,?)",
                [(first + ni, file_id, q, ln, h, bl) for ni, q, ln, h, bl in rows.passages])
        return file_id

    def touch_file(self, relpath: str, state: tuple[int, int, str]) -> None:
        """Record a new (mtime, size) for a file whose content hash did not change."""
        self.db.execute("UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                        (state[0], state[1], relpath))

    def remove_files(self, relpaths: Iterable[str]) -> None:
        for p in relpaths:
            row = self.db.execute("SELECT id FROM files WHERE path = ?", (p,)).fetchone()
            if row:
                self._delete_file_rows(row[0])
                self.db.execute("DELETE FROM files WHERE id = ?", (row[0],))

    def resolve_links(self) -> None:
        """Point id: links at the node holding that ID, and file links with a
        ``::*Heading`` search at that heading in the target file."""
        db = self.db
        db.execute(
            "UPDATE links SET target_key = (SELECT 'id:' || org_id FROM nodes "
            "WHERE nodes.org_id = links.path LIMIT 1) WHERE type = 'id'")
        rows = db.execute(
            "SELECT l.rowid, f.path, l.path, l.search FROM links l JOIN files f "
            "ON f.id = l.file_id WHERE l.type = 'file' AND l.search LIKE '*%'").fetchall()
        for rowid, src, target, search in rows:
            tpath = posixpath.normpath(posixpath.join(posixpath.dirname(src), target))
            hit = db.execute(
                "SELECT n.key FROM nodes n JOIN files f ON f.id = n.file_id "
                "WHERE f.path = ? AND n.title = ? ORDER BY n.idx LIMIT 1",
                (tpath, search[1:].strip())).fetchone()
            db.execute("UPDATE links SET target_key = ? WHERE rowid = ?",
                       (hit[0] if hit else None, rowid))

    def generation(self) -> str:
        """A value that changes whenever nodes or vectors change — unique to this index
        database, so caches of a deleted and rebuilt index are never mistaken for it."""
        rows = dict(self.db.execute(
            "SELECT key, value FROM meta WHERE key IN ('generation', 'instance')"))
        if "instance" not in rows:
            import uuid

            rows["instance"] = uuid.uuid4().hex
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('instance', ?)",
                            (rows["instance"],))
            rows = dict(self.db.execute(
                "SELECT key, value FROM meta WHERE key IN ('generation', 'instance')"))
        return f"{rows['instance']}:{rows.get('generation', '0')}"

    def bump_generation(self) -> None:
        """Call inside the transaction that changed nodes or vectors."""
        self.db.execute(
            "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
            "SET value = CAST(value AS INTEGER) + 1")

    def counts(self) -> dict[str, int]:
        q = self.db.execute
        return {
            "files": q("SELECT count(*) FROM files").fetchone()[0],
            "nodes": q("SELECT count(*) FROM nodes").fetchone()[0],
            "links": q("SELECT count(*) FROM links").fetchone()[0],
            "ids": q("SELECT count(*) FROM nodes WHERE org_id IS NOT NULL").fetchone()[0],
        }

    def file_errors(self) -> dict[str, list[str]]:
        return {p: json.loads(e) for p, e in
                self.db.execute("SELECT path, errors FROM files WHERE errors != '[]'")}

    # -- queries ---------------------------------------------------------------
    def find(self, predicates: Sequence[Predicate], limit: int | None = None,
             order: str = "file", today: dt.date | None = None,
             with_body: bool = False) -> list[Node]:
        """Nodes matching every predicate.  ``order``: file | rank | closed | scheduled | deadline."""
        today = today or dt.date.today()
        where: list[str] = []
        params: list[Any] = []
        text_match: str | None = None
        for p in predicates:
            sql, args = self._compile(p, today)
            if p.field == "text" and not p.negate:
                text_match = args[0]
                continue
            where.append(f"NOT ({sql})" if p.negate else sql)
            params.extend(args)
        frm = "nodes n JOIN files f ON f.id = n.file_id"
        if text_match is not None:
            frm = "nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid JOIN files f ON f.id = n.file_id"
            where.insert(0, "nodes_fts MATCH ?")
            params.insert(0, text_match)
        order_sql = {
            "file": "f.path, n.idx",
            "rank": "bm25(nodes_fts, 10.0, 5.0, 1.0)" if text_match else "f.path, n.idx",
            "closed": "n.closed DESC, f.path, n.idx",
            "scheduled": "n.scheduled, f.path, n.idx",
            "deadline": "n.deadline, f.path, n.idx",
        }.get(order)
        if order_sql is None:
            raise QuerySyntaxError(f"unknown order {order!r}")
        sql = (f"SELECT {_NODE_COLS}{', n.body' if with_body else ''} FROM {frm} "
               f"WHERE {' AND '.join(where) or '1'} ORDER BY {order_sql}")
        if limit:
            sql += f" LIMIT {int(limit)}"
        try:
            rows = self.db.execute(sql, params).fetchall()
        except sqlite3.OperationalError as e:
            raise QuerySyntaxError(f"query failed: {e}") from e
        return [_node(r, r[19] if with_body else None) for r in rows]

    def _compile(self, p: Predicate, today: dt.date) -> tuple[str, list[Any]]:
        v = list(p.values)
        f = p.field
        if f == "todo":
            if not v:
                return "n.todo_type = 'todo'", []
            return f"n.todo IN ({','.join('?' * len(v))})", v
        if f == "done":
            return "n.todo_type = 'done'", []
        if f == "tags":
            if not v:
                return "n.tags != ''", []
            return ("(" + " OR ".join("instr(' ' || n.tags || ' ', ?) > 0" for _ in v) + ")",
                    [f" {t.strip(':')} " for t in v])
        if f == "heading":
            return ("(" + " AND ".join("n.title LIKE ?" for _ in v) + ")",
                    [f"%{w}%" for w in v])
        if f == "id":
            return f"n.org_id IN ({','.join('?' * len(v))})", v
        if f == "file":
            return ("(" + " OR ".join("(f.path GLOB ? OR f.path LIKE ?)" for _ in v) + ")",
                    [x for w in v for x in (w, f"%{w}%")])
        if f == "priority":
            return f"n.priority IN ({','.join('?' * len(v))})", [x.upper() for x in v]
        if f == "level":
            return f"n.level IN ({','.join('?' * len(v))})", [int(x) for x in v]
        if f == "category":
            return f"n.category IN ({','.join('?' * len(v))})", v
        if f == "prop":
            key, eq, val = v[0].partition("=")
            if eq:
                return ("EXISTS (SELECT 1 FROM json_each(n.properties) j "
                        "WHERE upper(j.key) = upper(?) AND j.value = ?)", [key, val])
            return ("EXISTS (SELECT 1 FROM json_each(n.properties) j "
                    "WHERE upper(j.key) = upper(?))", [key])
        if f in DATE_FIELDS:
            return date_condition(f, v[0] if v else "any", today, "?")
        if f == "text":
            if p.negate:
                return ("n.id IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?)",
                        [fts_match(v)])
            return "", [fts_match(v)]
        raise QuerySyntaxError(f"unknown predicate {f!r}")

    def select(self, where: str, params: Sequence[Any] = (), order: str = "f.path, n.idx",
               with_body: bool = False) -> list[Node]:
        """Nodes matching a SQL condition over ``n`` (nodes) and ``f`` (files)."""
        rows = self.db.execute(
            f"SELECT {_NODE_COLS}{', n.body' if with_body else ''} FROM nodes n "
            f"JOIN files f ON f.id = n.file_id WHERE {where} ORDER BY {order}", params)
        return [_node(r, r[19] if with_body else None) for r in rows]

    def nodes_by_keys(self, keys: Sequence[str], with_body: bool = True) -> dict[str, Node]:
        """Nodes by key (the first one for a key shared by duplicate IDs)."""
        out: dict[str, Node] = {}
        for i in range(0, len(keys), 500):
            chunk = list(keys[i:i + 500])
            marks = ",".join("?" * len(chunk))
            for n in self.select(f"n.key IN ({marks})", chunk, order="n.id",
                                 with_body=with_body):
                out.setdefault(n.key, n)
        return out

    def nodes_by_ref(self, ref: str) -> list[Node]:
        """Nodes a person may mean by ``ref``: an ID (``id:`` optional), a node key
        (``file.org::Outline/Title``), ``file.org:LINE`` (the node containing that line)
        or an exact title (case-insensitive)."""
        ref = ref.strip()
        q = self.db.execute
        base = f"SELECT {_NODE_COLS} FROM nodes n JOIN files f ON f.id = n.file_id WHERE "
        oid = ref[3:] if ref.startswith("id:") else ref
        rows = q(base + "n.org_id = ?", (oid,)).fetchall()
        if not rows and "::" in ref:
            rows = q(base + "n.key = ?", (ref,)).fetchall()
        if not rows and ":" in ref:
            path, _, line = ref.rpartition(":")
            if line.isascii() and line.isdigit() and int(line) < 2**31:
                rows = q(base + "f.path = ? AND n.line <= ? ORDER BY n.line DESC LIMIT 1",
                         (path, int(line))).fetchall()
        if not rows:
            rows = q(base + "n.title = ? COLLATE NOCASE ORDER BY f.path, n.idx",
                     (ref,)).fetchall()
        return [_node(r) for r in rows]

    def links_from(self, key: str) -> list[NodeLink]:
        return [NodeLink(*r) for r in self.db.execute(
            "SELECT l.type, l.path, l.description, l.search, l.target_key, n.key, n.title "
            "FROM links l JOIN nodes n ON n.id = l.source_id WHERE n.key = ? "
            "ORDER BY l.rowid", (key,))]

    def backlinks(self, key: str) -> list[NodeLink]:
        return [NodeLink(*r) for r in self.db.execute(
            "SELECT l.type, l.path, l.description, l.search, l.target_key, n.key, n.title "
            "FROM links l JOIN nodes n ON n.id = l.source_id WHERE l.target_key = ? "
            "ORDER BY n.key", (key,))]

    def dangling_links(self) -> list[NodeLink]:
        return [NodeLink(*r) for r in self.db.execute(
            "SELECT l.type, l.path, l.description, l.search, l.target_key, n.key, n.title "
            "FROM links l JOIN nodes n ON n.id = l.source_id "
            "WHERE l.type = 'id' AND l.target_key IS NULL")]

    # -- the write journal -------------------------------------------------------
    def journal_add(self, op: str, description: str, path: str, before_hash: str | None,
                    after_hash: str, before_data: bytes | None, before_mode: int | None,
                    batch: str | None = None) -> int:
        return self.db.execute(
            "INSERT INTO journal (at, op, description, path, before_hash, after_hash, "
            "before_data, before_mode, batch) VALUES (?,?,?,?,?,?,?,?,?)",
            (time.time(), op, description, os.fspath(path), before_hash, after_hash,
             before_data, before_mode, batch)).lastrowid or 0

    def journal(self, limit: int = 20, include_undone: bool = False) -> list[JournalRow]:
        cond = "" if include_undone else "WHERE undone_at IS NULL "
        return [JournalRow(*r) for r in self.db.execute(
            "SELECT id, at, op, description, path, before_hash, after_hash, undone_at, batch "
            f"FROM journal {cond}ORDER BY id DESC LIMIT ?", (limit,))]

    def journal_before(self, entry_id: int) -> tuple[bytes | None, int | None]:
        row = self.db.execute("SELECT before_data, before_mode FROM journal WHERE id = ?",
                              (entry_id,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def journal_mark_undone(self, entry_id: int) -> None:
        self.db.execute("UPDATE journal SET undone_at = ? WHERE id = ?", (time.time(), entry_id))
