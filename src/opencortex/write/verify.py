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
import re
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
    new_planning: frozenset[str] | None = None
    """The planning lines (``scheduled``, ``deadline``, ``closed``) the new entry has, exactly
    (None: not declared).  A line the op did not write — a tag or title from a client that
    broke the headline into a ``DEADLINE: <%%(diary sexp)>`` line — is refused."""
    new_properties: frozenset[str] | None = None
    """The property names (upper case) the new entry has, exactly (None: not declared)."""
    new_tags: tuple[str, ...] | None = None
    """The new entry's own tags, exactly (None: not declared)."""


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


_PLANNING_WORD = re.compile(r"(SCHEDULED|DEADLINE|CLOSED):")


def _declared(h: Heading, intent: Intent, lines: list[str]) -> list[str]:
    """What the new entry has beyond what the op declared (defence in depth: the writer
    validated every part, this proves the file reads back as exactly that).  Planning is
    read from the line after the headline as well as from the parse: Emacs takes
    ``DEADLINE: <%%(sexp)>`` as planning even where a stricter parser sees no date."""
    out = []
    if intent.new_planning is not None:
        have = frozenset(k for k in ("scheduled", "deadline", "closed") if getattr(h, k))
        after = lines[h.line] if 0 < h.line < len(lines) else ""
        if after.lstrip().startswith(("SCHEDULED:", "DEADLINE:", "CLOSED:")):
            have |= {w.lower() for w in _PLANNING_WORD.findall(after)}
        if have != intent.new_planning:
            out.append(f"the new entry would have planning {sorted(have)} instead of "
                       f"{sorted(intent.new_planning)}")
    if intent.new_properties is not None:
        keys = frozenset(k.upper() for k, _ in h.properties)
        if keys != intent.new_properties:
            out.append(f"the new entry would have properties {sorted(keys)} instead of "
                       f"{sorted(intent.new_properties)}")
    if intent.new_tags is not None and tuple(h.tags) != intent.new_tags:
        out.append(f"the new entry would have tags {list(h.tags)} instead of "
                   f"{list(intent.new_tags)}")
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
        problems += _declared(new.headings[j], intent, new_text.split("\n"))
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
