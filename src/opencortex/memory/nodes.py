"""Index records: what one parsed file contributes to the index, as plain rows.

``file_rows`` runs in worker processes during a sync, so it returns plain tuples and
dicts (cheap to pickle), not parser objects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ..org.model import Heading, OrgDocument, Timestamp

__all__ = ["FileRows", "Node", "NodeLink", "content_hash", "embed_hash", "embed_node_rows",
           "embed_text", "file_rows", "heading_keys",
           "node_key"]

HASH_PREFIX = "b2:"


def content_hash(data: bytes) -> str:
    """Tagged hash of a file's bytes, so a change of algorithm is detectable."""
    return HASH_PREFIX + hashlib.blake2b(data, digest_size=16).hexdigest()


def _iso(ts: Timestamp | None) -> str | None:
    if ts is None:
        return None
    return ts.start.strftime("%Y-%m-%dT%H:%M") if ts.has_time else ts.start.strftime("%Y-%m-%d")


def embed_text(outline: list[str], title: str, body: str) -> str:
    """The text a model embeds for a node: its outline path, title and body."""
    head = " / ".join([*outline, title])
    return f"{head}\n{body}" if body else head


def embed_node_rows(rows: Sequence[tuple[str, str, str, str]],
                    embed: Callable[[list[str]], Any], dim: int,
                    put: Callable[[list[tuple[str, Any]]], None], batch: int = 32,
                    progress: Callable[[int, int], None] | None = None) -> int:
    """Embed pending ``(embed_hash, outline JSON, title, body)`` rows batch by batch and
    hand each batch's ``(hash, float32 vector)`` pairs to ``put`` (which commits them), so
    an interruption keeps what was done. Every store's vectors go through here."""
    import numpy as np

    done = 0
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        vecs = np.asarray(embed([embed_text(json.loads(o), t, b) for _, o, t, b in chunk]),
                          dtype="<f4")
        if vecs.shape != (len(chunk), dim):
            from ..errors import OpenCortexError

            raise OpenCortexError(
                f"embedder returned shape {vecs.shape}, expected ({len(chunk)}, {dim}): the "
                "model's dimension changed? configure the right model/dimension")
        put([(h, v) for (h, _, _, _), v in zip(chunk, vecs, strict=True)])
        done += len(chunk)
        if progress:
            progress(done, len(rows))
    return done


def embed_hash(text: str) -> str:
    return HASH_PREFIX + hashlib.blake2b(text.encode("utf-8", "replace"),
                                         digest_size=16).hexdigest()


def node_key(relpath: str, outline: list[str], title: str, org_id: str | None) -> str:
    """Stable identity: the Org ID, else file + outline path."""
    if org_id:
        return "id:" + org_id
    return relpath + "::" + "/".join([*outline, title])


@dataclass(slots=True)
class NodeLink:
    type: str
    path: str
    description: str | None = None
    search: str | None = None
    target_key: str | None = None
    """The node the link resolves to (id: links, file links with a heading search)."""
    source_key: str | None = None
    source_title: str | None = None


@dataclass(slots=True)
class Node:
    """A headline as the index knows it (what queries return)."""

    key: str
    file: str
    line: int
    level: int
    title: str
    id: str | None = None
    todo: str | None = None
    todo_type: str | None = None
    priority: str | None = None
    tags: list[str] = field(default_factory=list)
    """All tags: inherited, FILETAGS and local."""
    local_tags: list[str] = field(default_factory=list)
    outline: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    category: str | None = None
    scheduled: str | None = None
    deadline: str | None = None
    closed: str | None = None
    body: str | None = None
    byte_start: int = 0
    byte_end: int = 0

    def to_dict(self, with_body: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_body:
            d.pop("body")
        return d


@dataclass(slots=True)
class FileRows:
    """Everything one file puts in the index."""

    relpath: str
    title: str | None
    filetags: list[str]
    todo_keywords: list[str]
    done_keywords: list[str]
    errors: list[str]
    nodes: list[tuple] = field(default_factory=list)
    """(idx, key, org_id, level, line, title, todo, todo_type, priority, local_tags, tags,
    outline_json, properties_json, category, scheduled, scheduled_raw, deadline,
    deadline_raw, closed, closed_raw, body, byte_start, byte_end, parent_idx, archived,
    embed_hash)"""
    links: list[tuple] = field(default_factory=list)
    """(node_idx, type, path, description, search)"""


def heading_keys(doc: OrgDocument, relpath: str) -> list[str]:
    """The node key of every heading, in order (duplicates without ID get ``#2``...)."""
    keys: list[str] = []
    outlines: list[list[str]] = []
    seen: dict[str, int] = {}
    for h in doc.headings:
        p = h.parent
        outline = [*outlines[p], doc.headings[p].title] if p is not None else []
        outlines.append(outline)
        key = node_key(relpath, outline, h.title, h.id)
        n = seen.get(key, 0)
        seen[key] = n + 1
        if n and not h.id:
            key = f"{key}#{n + 1}"
        keys.append(key)
    return keys


def file_rows(doc: OrgDocument, relpath: str) -> FileRows:
    """Flatten a parsed document into index rows (tags and category inherited as Org does)."""
    filetags = doc.filetags
    cat_kw = doc.keywords.get("CATEGORY")
    file_category = cat_kw[-1].strip() if cat_kw else PurePosixPath(relpath).stem
    rows = FileRows(relpath, doc.title, filetags, list(doc.todo_keywords),
                    list(doc.done_keywords), list(doc.errors))
    all_tags: list[list[str]] = []
    categories: list[str] = []
    outlines: list[list[str]] = []
    keys = heading_keys(doc, relpath)
    to_bytes = doc.byte_offset
    ascii_text = doc.text.isascii()
    for h in doc.headings:
        p = h.parent
        inherited = all_tags[p] if p is not None else filetags
        tags = list(dict.fromkeys([*inherited, *h.tags]))
        all_tags.append(tags)
        cat = h.get("CATEGORY") or (categories[p] if p is not None else file_category)
        categories.append(cat)
        outline = [*outlines[p], doc.headings[p].title] if p is not None else []
        outlines.append(outline)
        key = keys[h.index]
        bstart, bend = (h.start, h.end) if ascii_text else (to_bytes(h.start), to_bytes(h.end))
        rows.nodes.append((
            h.index, key, h.id, h.level, h.line, h.title, h.todo, h.todo_type, h.priority,
            " ".join(h.tags), " ".join(tags), json.dumps(outline, ensure_ascii=False),
            json.dumps(dict(_props(h)), ensure_ascii=False), cat,
            _iso(h.scheduled), h.scheduled.raw if h.scheduled else None,
            _iso(h.deadline), h.deadline.raw if h.deadline else None,
            _iso(h.closed), h.closed.raw if h.closed else None,
            h.body, bstart, bend, p, int(h.archived or "ARCHIVE" in tags),
            embed_hash(embed_text(outline, h.title, h.body)),
        ))
        for ln in h.links:
            rows.links.append((h.index, ln.type, ln.path, ln.description, ln.search))
    if _has_surrogates(doc.text):
        # invalid UTF-8 bytes survive in the file (surrogate-escaped); the index gets U+FFFD
        rows.nodes = [tuple(_clean(x) for x in r) for r in rows.nodes]
        rows.links = [tuple(_clean(x) for x in r) for r in rows.links]
        rows.title = _clean(rows.title)
        rows.filetags = [_clean(t) for t in rows.filetags]
    return rows


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _clean(x: Any) -> Any:
    if isinstance(x, str):
        return x.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return x


def _props(h: Heading) -> list[tuple[str, str]]:
    # Org reads the first of repeated keys; keep that one (keys as written).
    seen: set[str] = set()
    out = []
    for k, v in h.properties:
        if k.upper() not in seen:
            seen.add(k.upper())
            out.append((k, v))
    return out
