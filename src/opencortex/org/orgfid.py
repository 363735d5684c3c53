"""orgfid adapter: this parser's view of a file in the schema of compare.py.

Used to measure agreement with Emacs (``/work/shared/tools/orgfid/compare.py
--parser opencortex.org.orgfid:dump``).
"""

from __future__ import annotations

import hashlib

from .model import Heading, Link, OrgDocument
from .parser import parse_file

__all__ = ["PARSER_DIST", "dump", "records"]

PARSER_DIST = "opencortex"


def _links(links: list[Link]) -> list[list[str]]:
    return [[lk.type, lk.path, lk.format] for lk in links]


def _hash(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _id(h: Heading) -> str | None:
    # org-element's :ID is the *last* ID line of the drawer (plist built by push)
    val = None
    for k, v in h.properties:
        if k.upper() == "ID":
            val = v
    return val


def records(doc: OrgDocument) -> list[dict]:
    """orgfid records (file record first, then one per headline)."""
    kw = {k: list(v) for k, v in doc.keywords.items()}
    out: list[dict] = [{
        "type": "file",
        "headline_count": len(doc.headings),
        "keywords": kw,
        "todo_keywords": list(doc.todo_keywords),
        "done_keywords": list(doc.done_keywords),
        "links": _links(doc.preamble_links),
    }]
    for h in doc.headings:
        out.append({
            "type": "headline",
            "index": h.index,
            "line": h.line,
            "level": h.level,
            "title": h.title,
            "todo": h.todo,
            "priority": h.priority,
            "tags": list(h.tags),
            "comment": h.comment,
            "id": _id(h),
            "properties": [[k, v] for k, v in h.properties],
            "scheduled": h.scheduled.raw if h.scheduled else None,
            "deadline": h.deadline.raw if h.deadline else None,
            "closed": h.closed.raw if h.closed else None,
            "body_len": len(h.body),
            "body_hash": _hash(h.body),
            "body": h.body,
            "links": _links(h.links),
        })
    return out


def dump(path: str) -> list[dict]:
    """Parse ``path`` and return its orgfid records."""
    return records(parse_file(path))
