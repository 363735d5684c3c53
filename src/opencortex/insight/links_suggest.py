"""Which notes should link to the one you are on: notes close to it in meaning (the node
vectors, MiniLM offline) that neither link to it nor are linked from it, each with the
passage that makes them close. Applying one adds an ``id:`` link (creating the target's ID
if it has none) through the guarded writer — two journaled, undoable writes.

A "note" for linking is a file's top-level entry with everything under it: a link from
or to anywhere inside either note counts as an existing link."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..memex import Memex
    from ..memory.nodes import Node

__all__ = ["Suggestion", "apply", "suggest"]

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


@dataclass
class Suggestion:
    key: str
    id: str | None
    title: str
    file: str
    line: int
    score: float
    passage: str
    passage_line: int
    passage_score: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _root_of(n: Node, by_file: dict[str, list[Node]]) -> Node:
    """The top-level entry whose subtree holds ``n``."""
    best = n
    for x in by_file.get(n.file, []):
        if x.line <= n.line and x.level == 1:
            best = x
    return best


def _subtree(root: Node, by_file: dict[str, list[Node]]) -> list[Node]:
    nodes = by_file.get(root.file, [])
    out, inside = [], False
    for x in nodes:
        if x.key == root.key:
            inside = True
        elif inside and x.level <= root.level:
            break
        if inside:
            out.append(x)
    return out


def _passages(text: str) -> list[str]:
    out = []
    for part in _SPLIT.split(text or ""):
        s = " ".join(part.split())
        if len(s) >= 25 and not s.startswith((":", "#+")):
            out.append(s[:400])
    return out[:40]


def _line_of(memex: Memex, node: Node, passage: str) -> int:
    """The line of ``node``'s file where the passage begins (the node's line if unsure)."""
    try:
        lines = (Path(memex.root) / node.file).read_text(encoding="utf-8").splitlines()
    except OSError:
        return node.line
    head = passage.split()[:5]
    for i in range(node.line - 1, len(lines)):
        if head and " ".join(lines[i].split()).startswith(" ".join(head)[:30]):
            return i + 1
    return node.line


def suggest(memex: Memex, ref: str, k: int = 5, embedder: Any = None,
            hide: Any = None) -> tuple[Node, list[Suggestion]]:
    """(the node, up to ``k`` suggestions, nearest first).  ``hide(tags)``: True for a
    node the asking client may not see (it is neither the node asked about nor listed)."""
    import numpy as np

    from ..errors import NodeNotFoundError
    from ..retrieval.hybrid import retriever_for

    node = memex.resolve(ref)
    if hide is not None and hide(node.tags):
        raise NodeNotFoundError(f"no node matches {ref!r} that this client may see "
                                "(private notes are withheld from it)")
    r = retriever_for(memex)
    if embedder is not None:
        r._embedder = embedder
    r.vectors.embed_pending(lambda texts: r.embedder.embed(texts))
    nodes = memex.store.all_nodes(with_body=True)  # never the agent's records (Settings)
    by_file: dict[str, list[Node]] = {}
    for n in nodes:
        by_file.setdefault(n.file, []).append(n)
    for v in by_file.values():
        v.sort(key=lambda n: n.line)
    by_key = {n.key: n for n in nodes}
    # what the client may not see is never a suggestion (the outline above keeps it, so
    # roots and links are still judged on the whole file)
    offer = {key for key, n in by_key.items() if hide is None or not hide(n.tags)}
    me = _root_of(by_key.get(node.key, node), by_file)
    mine = _subtree(me, by_file)
    linked_roots = {me.key}
    for x in mine:
        for ln in memex.store.links_from(x.key):
            t = by_key.get(ln.target_key or "")
            if t is not None:
                linked_roots.add(_root_of(t, by_file).key)
        for ln in memex.store.backlinks(x.key):
            s = by_key.get(ln.source_key or "")
            if s is not None:
                linked_roots.add(_root_of(s, by_file).key)
    text = f"{node.title}\n{by_key.get(node.key, node).body or ''}"[:2000]
    qv = np.asarray(r.embedder.embed([text])[0], dtype=np.float32)
    picked: list[tuple[Node, float]] = []
    seen_roots: set[str] = set()
    for key, score in r.vectors.search(qv, 200):
        c = by_key.get(key)
        if c is None or key not in offer:
            continue
        root = _root_of(c, by_file)
        if root.key in linked_roots or root.key in seen_roots:
            continue
        seen_roots.add(root.key)
        picked.append((c, score))
        if len(picked) >= k:
            break
    segs: list[tuple[int, str]] = []
    for i, (c, _) in enumerate(picked):
        for p in _passages(c.body or "") or [c.title]:
            segs.append((i, p))
    best: dict[int, tuple[float, str]] = {}
    if segs:
        vecs = np.asarray(r.embedder.embed([s for _, s in segs]), dtype=np.float32)
        for (i, p), v in zip(segs, vecs @ qv, strict=True):
            if i not in best or float(v) > best[i][0]:
                best[i] = (float(v), p)
    out = []
    for i, (c, score) in enumerate(picked):
        ps, passage = best.get(i, (0.0, c.title))
        out.append(Suggestion(c.key, c.id, c.title, c.file, c.line, round(score, 4), passage,
                              _line_of(memex, c, passage), round(ps, 4)))
    _remember(memex, node.key, out)
    return node, out


def _state(memex: Memex) -> Path:
    return Path(memex.settings.state_dir) / "links" / "last-suggestions.json"


def _remember(memex: Memex, key: str, out: list[Suggestion]) -> None:
    p = _state(memex)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps({"node": key, "root": str(memex.root),
                               "suggestions": [s.to_dict() for s in out]}), encoding="utf-8")
    tmp.replace(p)


def apply(memex: Memex, ref: str, n: int, k: int = 5, hide: Any = None) -> dict[str, Any]:
    """Link suggestion ``n`` (1-based, as last listed for this node) from the node: the
    target gets an ID if it has none, the node a "See also" link. Returns what was written.
    ``hide``: as for :func:`suggest` (the last listing may be another client's)."""
    from ..errors import NodeNotFoundError, OpenCortexError

    node = memex.resolve(ref)
    if hide is not None and hide(node.tags):
        raise NodeNotFoundError(f"no node matches {ref!r} that this client may see")
    try:
        last = json.loads(_state(memex).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = {}
    if last.get("node") == node.key and last.get("root") == str(memex.root) and \
            hide is None:
        cands = [Suggestion(**d) for d in last["suggestions"]]
    else:
        cands = suggest(memex, ref, k, hide=hide)[1]
    if not 1 <= n <= len(cands):
        raise OpenCortexError(f"--apply {n}: there are {len(cands)} suggestions; list them "
                              f"with `opencortex links suggest {ref}` and pick one")
    c = cands[n - 1]
    target = memex.resolve(c.key)
    if hide is not None and hide(target.tags):  # tagged private since it was listed
        raise NodeNotFoundError(f"suggestion {n} is no longer one this client may see")
    prev = memex.writer.batch  # inside the pipeline: the signal's batch (undone together)
    batch = prev or f"links-{uuid.uuid4().hex[:8]}"
    memex.writer.batch = batch
    writes = []
    try:
        tid = target.id
        if not tid:
            tid = str(uuid.uuid4())
            writes.append(memex.set_property(c.key, "ID", tid, person=True))  # our own id
        label = re.sub(r"[\[\]]", "", target.title)
        writes.append(memex.append(f"id:{node.id}" if node.id else node.key,
                                   f"- See also: [[id:{tid}][{label}]]"))
    finally:
        memex.writer.batch = prev
    return {"node": node.key, "linked": {"key": c.key, "id": tid, "title": target.title},
            "batch": batch, "writes": [w.to_dict() for w in writes]}
