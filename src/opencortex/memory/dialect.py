"""The SQL dialects of the index store: what SQLite and PostgreSQL spell differently.

One store implementation (``sql_store.SqlStore``) and recall's record index write their SQL
once, with ``?`` placeholders, and ask the dialect for the few pieces that differ:
placeholders, ``IN``/``ANY``, the full-text predicate and rank, JSON access, glob and
case-insensitive matching, null ordering and upserts. Everything else is the same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .query import QuerySyntaxError

__all__ = ["FTS_CONFIG", "POSTGRES", "RANK_WEIGHTS", "SQLITE", "Dialect", "PgDialect",
           "SqliteDialect", "TextMatch", "fts_match", "glob_regex", "like_escape",
           "pg_tsquery"]

FTS_CONFIG = "english"
RANK_WEIGHTS = "{0.0, 0.67, 0.67, 1.0}"
"""ts_rank_cd weights {D, C, B, A}: body and tags 1, title + outline 1.5 (scaled to PG's
at most 1), near the tantivy boosts chosen on the dev sets (text 1 + title 0.5)."""

_NODES = "nodes n JOIN files f ON f.id = n.file_id"


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


def pg_tsquery(words: Sequence[str], op: str = "&&", prefixes: Sequence[str] = (),
               mark: str = "%s") -> tuple[str, list[str]]:
    """A tsquery SQL expression (and its parameters) from user words: each word or
    multi-word token through ``websearch_to_tsquery`` as a quoted phrase, ``word*`` (or
    ``prefixes``) as a prefix match; combined with ``op`` (``&&`` all, ``||`` any).
    ``mark``: the placeholder (psycopg's ``%s``, or ``?`` inside dialect-neutral SQL)."""
    parts: list[str] = []
    params: list[str] = []
    for w in [*words, *(p + "*" for p in prefixes)]:
        prefix = w.endswith("*") and len(w) > 1
        w = (w.rstrip("*") if prefix else w).replace('"', " ").strip()
        if not w:
            continue
        if prefix:
            lexemes = re.findall(r"\w+", w.lower())
            if not lexemes:
                continue
            parts.append(f"to_tsquery('{FTS_CONFIG}', {mark})")
            params.append(" <-> ".join([*lexemes[:-1], lexemes[-1] + ":*"]))
        else:
            parts.append(f"websearch_to_tsquery('{FTS_CONFIG}', {mark})")
            params.append(f'"{w}"')
    if not parts:
        raise QuerySyntaxError("empty full-text query")
    return "(" + f" {op} ".join(parts) + ")", params


def glob_regex(pattern: str) -> str:
    """An SQLite GLOB pattern (``*``, ``?``, ``[...]``; case-sensitive) as a POSIX regex."""
    out, i = ["^"], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out.append(r"\[")
            else:
                inner = pattern[i + 1:j]
                out.append("[" + ("^" + inner[1:] if inner.startswith("^") else inner) + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out) + "$"


def like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True, slots=True)
class TextMatch:
    """A positive full-text predicate: the FROM clause it needs, its WHERE condition and
    the ORDER BY that ranks by it (each with its parameters, ``?`` placeholders)."""

    frm: str
    where: str
    params: list[Any]
    rank: str
    rank_params: list[Any]


class Dialect:
    """What one SQL engine spells its own way. SQL handed to ``sql()`` uses ``?``."""

    name = ""
    rowid = "rowid"
    """The links table's row order column."""

    def sql(self, text: str) -> str:
        """``text`` with ``?`` placeholders in the driver's own style."""
        return text

    def in_(self, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``col`` is one of ``values``."""
        return f"{col} IN ({','.join('?' * len(values))})", list(values)

    def has_word(self, col: str) -> str:
        """A space-separated list column holds the word (parameter: ``' word '``)."""
        raise NotImplementedError

    def contains_ci(self, col: str, sub: str) -> tuple[str, list[Any]]:
        """``col`` contains ``sub``, ASCII case-insensitively."""
        raise NotImplementedError

    def glob(self, col: str, pattern: str) -> tuple[str, list[Any]]:
        """``col`` matches an SQLite GLOB pattern (case-sensitive)."""
        raise NotImplementedError

    def json_each(self, col: str) -> str:
        """A table of (key, value) text rows of the JSON object in ``col``."""
        raise NotImplementedError

    def eq_nocase(self, col: str) -> str:
        """``col`` equals the parameter, ignoring case."""
        raise NotImplementedError

    def distinct(self, a: str, b: str) -> str:
        """``a`` differs from ``b``, NULL counting as a value."""
        return f"{a} IS DISTINCT FROM {b}"

    def nulls(self, expr: str, desc: bool = False) -> str:
        """ORDER BY ``expr`` with NULLs where SQLite puts them (first ascending, last
        descending)."""
        return f"{expr} DESC" if desc else expr

    def upsert(self, table: str, cols: Sequence[str], key: Sequence[str],
               update: str | None = None) -> str:
        """INSERT of ``cols`` that, on a conflict over ``key``, sets ``update`` (default:
        every other column to the new row's); ``update=""`` keeps the old row."""
        marks = ",".join("?" * len(cols))
        head = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks}) "
        if update is None:
            update = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in key)
        if not update:
            return head + f"ON CONFLICT ({', '.join(key)}) DO NOTHING"
        return head + f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {update}"

    def text_match(self, words: Sequence[str]) -> TextMatch:
        raise NotImplementedError

    def text_not(self, words: Sequence[str]) -> tuple[str, list[Any]]:
        """The condition a negated full-text predicate wraps in NOT."""
        raise NotImplementedError


class SqliteDialect(Dialect):
    """SQLite: FTS5 (``nodes_fts``, BM25), ``json_each``, GLOB, ``?`` natively."""

    name = "sqlite"

    def has_word(self, col: str) -> str:
        return f"instr(' ' || {col} || ' ', ?) > 0"

    def contains_ci(self, col: str, sub: str) -> tuple[str, list[Any]]:
        return f"{col} LIKE ?", [f"%{sub}%"]  # SQLite's LIKE ignores ASCII case

    def glob(self, col: str, pattern: str) -> tuple[str, list[Any]]:
        return f"{col} GLOB ?", [pattern]

    def json_each(self, col: str) -> str:
        return f"json_each({col})"

    def eq_nocase(self, col: str) -> str:
        return f"{col} = ? COLLATE NOCASE"

    def distinct(self, a: str, b: str) -> str:
        return f"{a} IS NOT {b}"  # IS DISTINCT FROM needs SQLite 3.39

    def text_match(self, words: Sequence[str]) -> TextMatch:
        return TextMatch(
            "nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid JOIN files f ON f.id = n.file_id",
            "nodes_fts MATCH ?", [fts_match(words)], "bm25(nodes_fts, 10.0, 5.0, 1.0)", [])

    def text_not(self, words: Sequence[str]) -> tuple[str, list[Any]]:
        return "n.id IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?)", [fts_match(words)]


class PgDialect(Dialect):
    """PostgreSQL: a stored ``tsvector`` (``n.tsv``, ``ts_rank_cd``), jsonb, POSIX regex,
    ``= ANY(array)``, psycopg's ``%s``."""

    name = "postgresql"
    rowid = "id"

    def sql(self, text: str) -> str:
        return text.replace("%", "%%").replace("?", "%s")

    def in_(self, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{col} = ANY(?)", [list(values)]

    def has_word(self, col: str) -> str:
        return f"strpos(' ' || {col} || ' ', ?) > 0"

    def contains_ci(self, col: str, sub: str) -> tuple[str, list[Any]]:
        return f"{col} ILIKE ?", [f"%{like_escape(sub)}%"]

    def glob(self, col: str, pattern: str) -> tuple[str, list[Any]]:
        return f"{col} ~ ?", [glob_regex(pattern)]

    def json_each(self, col: str) -> str:
        return f"jsonb_each_text({col}::jsonb)"

    def eq_nocase(self, col: str) -> str:
        return f"lower({col}) = lower(?)"

    def nulls(self, expr: str, desc: bool = False) -> str:
        return f"{expr} DESC NULLS LAST" if desc else f"{expr} NULLS FIRST"

    def text_match(self, words: Sequence[str]) -> TextMatch:
        q, args = pg_tsquery(words, mark="?")
        return TextMatch(_NODES, f"n.tsv @@ {q}", args,
                         f"ts_rank_cd('{RANK_WEIGHTS}', n.tsv, {q}) DESC, f.path, n.idx",
                         list(args))

    def text_not(self, words: Sequence[str]) -> tuple[str, list[Any]]:
        q, args = pg_tsquery(words, mark="?")
        return f"n.tsv @@ {q}", args


SQLITE = SqliteDialect()
POSTGRES = PgDialect()
