"""Stage 2 of reading: the full text of chosen nodes, following their links.

Breadth-first from the requested nodes along ``id:``, ``file:`` and internal links
(``[[*Heading]]``, ``[[#custom-id]]``, fuzzy titles) up to ``depth`` hops, each node
read once (cycle-safe), until the token budget is spent; what did not fit is listed,
never silently dropped.  Text comes from the files themselves (the freshest view),
located by node key in a fresh parse.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..memex import Memex
from ..memory.nodes import heading_keys
from ..org.model import Heading, Link, OrgDocument
from ..org.parser import parse_file

__all__ = ["ReadNode", "ReadResult", "deep_read", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """~4 characters a token (English prose with BPE tokenizers); cheap and stable."""
    return (len(text) + 3) // 4


@dataclass(slots=True)
class ReadNode:
    key: str
    id: str | None
    file: str
    line: int
    outline: list[str]
    title: str
    depth: int
    via: str | None
    """The node whose link led here (None for a requested node)."""
    tokens: int
    text: str
    truncated: bool = False
    backlinks: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ReadResult:
    nodes: list[ReadNode]
    omitted: list[dict[str, Any]]
    budget: int
    used: int

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": [asdict(n) for n in self.nodes], "omitted": self.omitted,
                "budget": self.budget, "used": self.used}


class _Files:
    """Parsed files, each read once per deep read."""

    def __init__(self, memex: Memex) -> None:
        self.memex = memex
        self.docs: dict[str, tuple[OrgDocument, list[str]] | None] = {}

    def get(self, rel: str) -> tuple[OrgDocument, list[str]] | None:
        if rel not in self.docs:
            p = self.memex.root / rel
            try:
                doc = parse_file(str(p))
                self.docs[rel] = (doc, heading_keys(doc, rel))
            except OSError:
                self.docs[rel] = None
        return self.docs[rel]

    def tags(self, rel: str) -> list[list[str]]:
        """Each heading's tags as the file on disk says (inherited and FILETAGS): the
        index may hold a client's unsaved buffer, so privacy is judged on the text read."""
        got = self.get(rel)
        if got is None:
            return []
        doc = got[0]
        out: list[list[str]] = []
        for h in doc.headings:
            above = out[h.parent] if h.parent is not None else doc.filetags
            out.append([*above, *h.tags])
        return out


def _subtree_links(doc: OrgDocument, h: Heading) -> list[Any]:
    out = []
    for x in doc.headings[h.index:]:
        if x.start >= h.subtree_end:
            break
        out.extend(x.links)
    return out


def _resolve(memex: Memex, files: _Files, rel: str, doc: OrgDocument, keys: list[str],
             link: Link) -> str | None:
    """The node key a link points at, or None (web links, missing targets)."""
    t = link.type
    if t == "id":
        hits = memex.store.nodes_by_ref(link.path)
        return hits[0].key if hits else None
    if t in ("file", "file+sys", "file+emacs"):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), link.path))
        if target.startswith("../") or not target.endswith(".org"):
            return None
        got = files.get(target)
        if not got or not got[0].headings:
            return None
        tdoc, tkeys = got
        if link.search:
            k = _find_in(tdoc, tkeys, link.search)
            if k:
                return k
        return tkeys[0]
    if t in ("fuzzy", "custom-id"):
        return _find_in(doc, keys, ("#" if t == "custom-id" else "") + link.path)
    return None


def _find_in(doc: OrgDocument, keys: list[str], search: str) -> str | None:
    s = search.strip()
    if s.startswith("#"):
        for h in doc.headings:
            if h.get("CUSTOM_ID") == s[1:]:
                return keys[h.index]
        return None
    title = s[1:].strip() if s.startswith("*") else s
    for h in doc.headings:
        if h.title == title:
            return keys[h.index]
    return None


WITHHELD = "[a private entry is withheld here]\n"
_Hide = Callable[[Iterable[str]], bool]


def _visible_subtree(memex: Memex, doc: OrgDocument, keys: list[str], h: Heading,
                     hide: _Hide, disk: list[list[str]]) -> tuple[str, list[Heading]]:
    """The subtree text of ``h`` with every hidden descendant cut out (a marker line in
    its place), and the headings whose text remains."""
    inner = [x for x in doc.headings[h.index + 1:] if x.start < h.subtree_end]
    rows = memex.store.nodes_by_keys([keys[x.index] for x in inner], with_body=False)
    parts: list[str] = []
    kept = [h]
    pos, cut_end = h.start, -1
    for x in inner:
        if x.start < cut_end:
            continue
        n = rows.get(keys[x.index])
        if n is None or hide(n.tags) or hide(disk[x.index]):
            parts.append(doc.text[pos:x.start])
            parts.append(WITHHELD)
            pos = cut_end = x.subtree_end
        else:
            kept.append(x)
    parts.append(doc.text[pos:h.subtree_end])
    return "".join(parts), kept


def deep_read(memex: Memex, refs: list[str], depth: int = 1, budget: int = 4000, *,
              hide: _Hide | None = None) -> ReadResult:
    """Read ``refs`` in full, then what they link to, within ``budget`` tokens.

    ``hide`` (given by ``opencortex.access`` for clients that may not see private notes):
    a node whose tags it is true for is neither returned nor named (its title and key
    stay out of ``omitted`` and backlinks), and its subtree is cut out of its parent's."""
    files = _Files(memex)
    queue: deque[tuple[str, int, str | None]] = deque()
    seen: set[str] = set()
    out: list[ReadNode] = []
    omitted: list[dict[str, Any]] = []
    for r in refs:
        n = memex.resolve(r)
        if hide is not None and hide(n.tags):
            omitted.append({"ref": r, "reason": "private: withheld from this client"})
            continue
        if n.key not in seen:
            seen.add(n.key)
            queue.append((n.key, 0, None))
    used = 0
    full = False
    while queue:
        key, d, via = queue.popleft()
        node = memex.store.nodes_by_keys([key], with_body=False).get(key)
        got = files.get(node.file) if node else None
        if node is None or got is None or key not in got[1]:
            omitted.append({"key": key, "reason": "not found (run `opencortex index`)"})
            continue
        doc, keys = got
        h = doc.headings[keys.index(key)]
        disk = files.tags(node.file) if hide is not None else []
        if hide is not None and (hide(node.tags) or hide(disk[h.index])):
            omitted.append({"reason": "private: withheld from this client", "depth": d})
            continue
        if hide is None:
            text, kept = doc.text[h.start:h.subtree_end], None
        else:
            text, kept = _visible_subtree(memex, doc, keys, h, hide, disk)
        text = text.rstrip() + "\n"
        tokens = estimate_tokens(text)
        truncated = False
        if full or used + tokens > budget:
            if d == 0 and not out and not full:  # the one asked for: give what fits
                text = text[: max(0, (budget - used) * 4)]
                tokens, truncated = estimate_tokens(text), True
            else:
                full = True
                omitted.append({"key": key, "title": node.title, "file": node.file,
                                "line": node.line, "tokens": tokens, "depth": d,
                                "reason": "token budget"})
                continue
        used += tokens
        links_in = memex.store.backlinks(key)
        if hide is not None and links_in:
            src = memex.store.nodes_by_keys([b.source_key for b in links_in if b.source_key],
                                            with_body=False)
            links_in = [b for b in links_in
                        if b.source_key in src and not hide(src[b.source_key].tags)]
        back = [{"key": b.source_key, "title": b.source_title} for b in links_in]
        out.append(ReadNode(key, node.id, node.file, node.line, [*node.outline, node.title],
                            node.title, d, via, tokens, text, truncated, back))
        if d >= depth:
            continue
        inside = {keys[x.index] for x in doc.headings[h.index:]
                  if x.start < h.subtree_end}  # already in this text
        links = _subtree_links(doc, h) if kept is None else [
            ln for x in kept for ln in x.links]
        for link in links:
            target = _resolve(memex, files, node.file, doc, keys, link)
            if target and target not in seen and target not in inside:
                seen.add(target)
                queue.append((target, d + 1, key))
    return ReadResult(out, omitted, budget, used)
