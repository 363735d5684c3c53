"""The verified write: compare the whole file's parse before and after an edit.

A write op declares what it means to change (an :class:`Intent`): which existing entries,
which of their fields, how many new entries it inserts, whether the file-level settings may
change.  Everything else -- every other entry's outline position, title, TODO state,
priority, tags, properties, planning, body, and the file's keywords (``#+TODO``,
``#+STARTUP``, ``#+PROPERTY``…) and TODO sequences -- must parse identically, or the write
is refused with a :class:`VerifyError` naming what would have changed.  One place, so that no
write op can forget it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import VerifyError
from ..org.model import Heading, OrgDocument
from ..org.parser import parse

__all__ = ["ENTRY_FIELDS", "Intent", "verify_write"]

ENTRY_FIELDS = ("outline", "level", "stars", "title", "todo", "priority", "tags", "comment",
                "properties", "scheduled", "deadline", "closed", "body")


@dataclass(frozen=True, slots=True)
class Intent:
    """What one write op means to change."""

    changed: frozenset[int] = frozenset()
    """Indices (in the file before) of the existing entries the op edits."""
    fields: frozenset[str] | None = None
    """Which :data:`ENTRY_FIELDS` of those entries may change (None: any but the outline)."""
    added: int = 0
    """New entries the op inserts: the first one ``check`` accepts, then its descendants."""
    settings: bool = False
    """An explicit settings edit: the file's keywords and TODO sequences may change."""


def _fingerprint(doc: OrgDocument, h: Heading) -> dict[str, object]:
    body = hashlib.sha256(h.body.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return {
        "outline": tuple(doc.outline_path(h)), "level": h.level, "stars": h.stars,
        "title": h.title, "todo": h.todo, "priority": h.priority, "tags": tuple(h.tags),
        "comment": h.comment, "properties": tuple(h.properties),
        "scheduled": h.scheduled.raw if h.scheduled else None,
        "deadline": h.deadline.raw if h.deadline else None,
        "closed": h.closed.raw if h.closed else None, "body": body,
    }


def _file_facts(doc: OrgDocument) -> dict[str, object]:
    pre = doc.text[:doc.preamble_end] if doc.headings else doc.text
    return {"keywords": {k: tuple(v) for k, v in doc.keywords.items()},
            "TODO keywords": tuple(doc.todo_keywords),
            "DONE keywords": tuple(doc.done_keywords),
            "text before the first headline": pre.rstrip()}


def _show(v: object) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _entry_diff(doc: OrgDocument, h: Heading, a: dict[str, object], b: dict[str, object],
                allowed: frozenset[str] | None) -> list[str]:
    out = []
    for f in ENTRY_FIELDS:
        if a[f] == b[f] or (allowed is not None and f in allowed) or \
                (allowed is None and f != "outline"):
            continue
        what = "body text" if f == "body" else f"{f} {_show(a[f])} -> {_show(b[f])}"
        out.append(f"entry {h.title!r} (line {h.line}): {what}")
    return out


def verify_write(old: OrgDocument, new_text: str, intent: Intent,
                 check: Callable[[Heading], bool], what: str,
                 target: int | None = None) -> OrgDocument:
    """Parse ``new_text`` and prove the edit is the intended one (see the module doc).

    ``target``: for an in-place edit, the index of the edited entry (``check`` must accept
    it); for an insertion, ``check`` finds the new entry.  Returns the new parse."""
    new = parse(new_text, old.path)
    olds = [_fingerprint(old, h) for h in old.headings]
    news = [_fingerprint(new, h) for h in new.headings]
    problems: list[str] = []
    if intent.added:
        j = next((i for i, h in enumerate(new.headings) if check(h)), None)
        if j is None:
            raise VerifyError(f"{what}: the new entry would not parse as intended; nothing "
                              "was written (is the title Org syntax, e.g. a leading TODO "
                              "keyword, priority cookie or COMMENT?)")
        top = new.headings[j].level
        span = range(j, j + intent.added)
        if j + intent.added > len(news) or any(new.headings[i].level <= top for i in span[1:]):
            problems.append(f"the new entry would parse as {len(news) - len(olds)} entries "
                            f"instead of {intent.added}")
        rest = [i for i in range(len(news)) if i not in span]
    else:
        rest = list(range(len(news)))
        if target is not None and (target >= len(news) or not check(new.headings[target])):
            raise VerifyError(f"{what}: the edited file would not parse as intended; "
                              "nothing was written (please report this with the file)")
    if len(rest) != len(olds):
        problems.append(f"the file would have {len(news)} entries instead of "
                        f"{len(olds) + intent.added}")
    else:
        for i, k in enumerate(rest):
            allowed = intent.fields if i in intent.changed else frozenset()
            problems += _entry_diff(old, old.headings[i], olds[i], news[k], allowed)
    if not intent.settings:
        fa, fb = _file_facts(old), _file_facts(new)
        for key, a in fa.items():
            if a != fb[key]:
                if key == "keywords":
                    b = fb[key]
                    assert isinstance(a, dict) and isinstance(b, dict)  # see _file_facts
                    ks = sorted(set(a) ^ set(b) | {k for k in a if a[k] != b.get(k)})
                    problems.append("the file's keywords " + ", ".join(f"#+{k}" for k in ks))
                else:
                    problems.append(f"the file's {key} {_show(a)} -> {_show(fb[key])}")
    if problems:
        shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more"
                                           if len(problems) > 6 else "")
        raise VerifyError(f"{what}: refused, nothing was written: the edit would also change "
                          f"{shown}")
    return new
