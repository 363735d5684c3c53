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
from typing import TYPE_CHECKING, Any

from ..atomic import HASH_PREFIX, content_hash
from ..org.model import Heading, OrgDocument, Timestamp
from .agenda import agenda_window
from .agenda_stamps import agenda_record

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    """One embedding: float32, unit length."""

__all__ = ["PASSAGE_OVERLAP", "PASSAGE_WORDS", "Embed", "FileRows", "Node", "NodeLink",
           "PassageRow", "content_hash",
           "embed_hash", "embed_node_rows", "embed_text", "file_rows", "heading_keys",
           "node_key", "passages"]



def _iso(ts: Timestamp | None) -> str | None:
    if ts is None:
        return None
    return ts.start.strftime("%Y-%m-%dT%H:%M") if ts.has_time else ts.start.strftime("%Y-%m-%d")


def embed_text(outline: list[str], title: str, body: str) -> str:
    """The text a model embeds for a node: its outline path, title and body."""
    head = " / ".join([*outline, title])
    return f"{head}\n{body}" if body else head


PASSAGE_WORDS = 150
"""Words per passage, outline prefix included: MiniLM's window is 256 word pieces, about
1.3–1.6 per English word, so a passage this long is embedded whole, not truncated."""
PASSAGE_OVERLAP = 30
"""Words a passage repeats from the end of the one before (a fact cut at a boundary is
whole in one of the two)."""


def passages(outline: list[str], title: str, body: str, line: int, body_line: int
             ) -> list[tuple[int, str]]:
    """The ``(line, text)`` passages a model embeds for a node.

    The first is always the node's whole text (``embed_text``, hash = ``embed_hash``): the
    model reads its first window, as it always did, so an index made before passages keeps
    every vector it has.  A node longer than that window gets more passages for the rest:
    the text is cut at line starts (a single over-long line at word boundaries) into runs of
    at most ``PASSAGE_WORDS`` words overlapping by ``PASSAGE_OVERLAP``; the first run is the
    part the whole-text passage already covers, the others are embedded, each prefixed
    with the outline path and title and carrying the file line it starts on."""
    whole = embed_text(outline, title, body)
    if len(whole.split()) <= PASSAGE_WORDS:
        return [(line, whole)]
    head = " / ".join([*outline, title])
    budget = max(32, PASSAGE_WORDS - len(head.split()))
    overlap = min(PASSAGE_OVERLAP, budget // 3)
    # (file line, words) pieces: whole lines, over-long lines cut into budget-sized runs
    pieces: list[tuple[int, list[str]]] = []
    for i, text in enumerate(body.split("\n")):
        words = text.split()
        step = budget - overlap
        if len(words) <= budget:
            if words:
                pieces.append((body_line + i, words))
            continue
        for j in range(0, len(words), step):
            pieces.append((body_line + i, words[j:j + budget]))
            if j + budget >= len(words):
                break
    out: list[tuple[int, str]] = []
    s = 0
    while s < len(pieces):
        e, n = s, 0
        while e < len(pieces) and (e == s or n + len(pieces[e][1]) <= budget):
            n += len(pieces[e][1])
            e += 1
        if out:  # (the first run is what the whole-text passage covers)
            text = " ".join(w for _, ws in pieces[s:e] for w in ws)
            out.append((pieces[s][0], f"{head}\n{text}"))
        else:
            out.append((line, whole))
        if e >= len(pieces):
            break
        # step back over whole pieces worth at most ``overlap`` words, or the last piece
        # alone if it is longer but under half a passage (always move on)
        back, nb = e, 0
        while back - 1 > s and nb + len(pieces[back - 1][1]) <= overlap:
            back -= 1
            nb += len(pieces[back][1])
        if back == e and e - 1 > s and len(pieces[e - 1][1]) <= budget // 2:
            back = e - 1
        s = back
    return out


PassageRow = tuple[str, str, str, str, int, int, int]
"""A passage to embed: (hash, outline JSON, title, body, seq, line, body line)."""
Embed = Callable[[list[str]], "npt.ArrayLike"]
"""An embedder's batch call: texts in, one vector per text out."""


def embed_node_rows(rows: Sequence[PassageRow], embed: Embed, dim: int,
                    put: Callable[[list[tuple[str, Vector]]], None], batch: int = 32,
                    progress: Callable[[int, int], None] | None = None) -> int:
    """Embed pending ``(hash, outline JSON, title, body, seq, line, body line)`` passage
    rows batch by batch (the text is cut again from the node: passages are not stored
    twice) and hand each batch's ``(hash, float32 vector)`` pairs to ``put`` (which
    commits them), so an interruption keeps what was done. Every store's vectors go
    through here."""
    import numpy as np

    done = 0
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        texts = []
        for _h, o, t, b, seq, ln, bl in chunk:
            ps = passages(json.loads(o), t, b, ln, bl)
            texts.append(ps[min(seq, len(ps) - 1)][1])
        vecs = np.asarray(embed(texts), dtype="<f4")
        if vecs.shape != (len(chunk), dim):
            from ..errors import OpenCortexError

            raise OpenCortexError(
                f"embedder returned shape {vecs.shape}, expected ({len(chunk)}, {dim}): the "
                "model's dimension changed? configure the right model/dimension")
        put([(r[0], v) for r, v in zip(chunk, vecs, strict=True)])
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
    embed_hash, agenda, agenda_lo, agenda_hi, agenda_pend, agenda_sexps)"""
    links: list[tuple] = field(default_factory=list)
    """(node_idx, type, path, description, search)"""
    passages: list[tuple] = field(default_factory=list)
    """(node_idx, seq, line, hash, body_line): what the model embeds, passage by passage"""


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
    hidden: list[bool] = []
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
        # Org's agenda skips archived and COMMENT subtrees whole (org-agenda-skip)
        hidden.append(h.comment or "ARCHIVE" in tags or (p is not None and hidden[p]))
        agenda = agenda_record(doc, h, hidden[-1])
        window = agenda_window(agenda, h.todo_type == "done") if agenda else (None,) * 3
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
            json.dumps(agenda, ensure_ascii=False) if agenda else None,
            *window, int(str(agenda.get("sexp", 0))) if agenda else 0,
        ))
        for ln in h.links:
            rows.links.append((h.index, ln.type, ln.path, ln.description, ln.search))
        bl = _body_line(doc.text, h) if h.body else h.line + 1
        for seq, (pline, ptext) in enumerate(passages(outline, h.title, h.body, h.line, bl)):
            rows.passages.append((h.index, seq, pline, embed_hash(ptext), bl))
    if _has_surrogates(doc.text):
        # invalid UTF-8 bytes survive in the file (surrogate-escaped); the index gets U+FFFD
        rows.nodes = [tuple(_clean(x) for x in r) for r in rows.nodes]
        rows.links = [tuple(_clean(x) for x in r) for r in rows.links]
        rows.title = _clean(rows.title)
        rows.filetags = [_clean(t) for t in rows.filetags]
    return rows


def _body_line(text: str, h: Heading) -> int:
    """The file line of the body's first line (the body has its leading blank lines
    stripped, so it is found from ``body_start``)."""
    first = h.body.split("\n", 1)[0]
    pos = text.find(first, h.body_start, h.end) if first else -1
    if pos < 0:
        pos = h.body_start
    return h.line + text.count("\n", h.start, pos)


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
