"""Plain data types the Org parser produces.

These are the boundary between parsing and everything downstream (index, retrieval,
write-back), so they carry both the *meaning* of each element (as Emacs's org-element
sees it) and the *exact spans* needed to edit a file without touching other bytes.

Offsets are character offsets into ``OrgDocument.text``: the file's bytes decoded as
UTF-8 with ``surrogateescape``, so ``text.encode("utf-8", "surrogateescape")`` gives
back the original bytes exactly, invalid sequences included.  Spans are half-open
``(start, end)``.  ``OrgDocument.byte_offset`` converts to byte offsets.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

__all__ = ["Heading", "Link", "OrgDocument", "Timestamp"]


@dataclass(slots=True)
class Timestamp:
    """An Org timestamp such as ``<2026-11-30 Mon 10:00 +1w -2d>``."""

    raw: str
    active: bool
    start: dt.datetime
    """Start; midnight when the timestamp has no time (see ``has_time``)."""
    has_time: bool = False
    end: dt.datetime | None = None
    """End of a range (``<a>--<b>`` or ``10:00-11:00``), else None."""
    repeater: str | None = None
    """Repeater cookie as written: ``+1w``, ``++2d``, ``.+1m`` (with ``/3d`` habit part kept)."""
    warning: str | None = None
    """Warning delay as written: ``-2d`` or ``--2d``."""

    @property
    def date(self) -> dt.date:
        return self.start.date()


@dataclass(slots=True)
class Link:
    """A link object as org-element reports it."""

    type: str
    """As Org names it: https, file, id, fuzzy, custom-id, coderef, radio, ..."""
    path: str
    """Without the type prefix; without ``::search`` for file links."""
    raw: str
    """The link text exactly as it appears in the source."""
    description: str | None = None
    format: str = "bracket"
    """bracket | plain | angle | radio"""
    search: str | None = None
    """The ``::search`` option of file links, if any."""
    offset: int = 0
    """Character offset of ``raw`` in the document text."""


@dataclass(slots=True)
class Heading:
    """One headline and its own section (up to the next headline of any level)."""

    index: int
    """0-based position in document order."""
    level: int
    """org-element ``:level``: the number of stars, except under ``#+STARTUP: odd``
    (``org-odd-levels-only``), where Emacs gives ``stars // 2 + 1``: 1, 2, 2, 3, 3, ...
    for 1, 2, 3, 4, 5 stars."""
    stars: int
    line: int
    """1-based line of the headline."""
    title: str
    """org-element ``:raw-value``: without stars, TODO keyword, priority cookie, COMMENT, tags."""
    todo: str | None = None
    todo_type: str | None = None
    """"todo" or "done" (from the file's keyword sets), None without a keyword."""
    priority: str | None = None
    tags: list[str] = field(default_factory=list)
    """Local tags only, in order."""
    comment: bool = False
    archived: bool = False
    """Has the ARCHIVE tag."""
    properties: list[tuple[str, str]] = field(default_factory=list)
    """Property drawer right after the headline/planning line: keys as written, values trimmed."""
    scheduled: Timestamp | None = None
    deadline: Timestamp | None = None
    closed: Timestamp | None = None
    body: str = ""
    """Own section minus planning and property drawer; leading blank lines and trailing
    whitespace dropped (the orgfid definition)."""
    links: list[Link] = field(default_factory=list)
    """Links in the title and the own section, in order."""
    timestamps: list[Timestamp] = field(default_factory=list)
    """Timestamps in the title and body (not planning), in order."""
    parent: int | None = None
    """Index of the enclosing heading (by level), None at top level."""

    # --- spans (character offsets into OrgDocument.text) ---
    start: int = 0
    """Beginning of the headline line."""
    headline_end: int = 0
    """End of the headline line, *before* its newline."""
    end: int = 0
    """End of the own section: start of the next headline of any level, or end of text."""
    subtree_end: int = 0
    """End of the subtree: start of the next headline of level <= this one, or end of text."""
    planning_span: tuple[int, int] | None = None
    """The planning line, newline included."""
    drawer_span: tuple[int, int] | None = None
    """The property drawer from ``:PROPERTIES:`` to the ``:END:`` line, newline included."""
    body_start: int = 0
    """Where the body begins: after the headline, planning line and property drawer."""

    def get(self, key: str, default: str | None = None) -> str | None:
        """Property value by case-insensitive key: the *first* such line of the drawer.

        That is what ``org-entry-get`` (and so ``org-id-get``) returns in Emacs, which
        searches the drawer forward (without the ``KEY+`` accumulation, which this
        does not do).  org-element's own properties keep the *last* line instead:
        see :attr:`id`.
        """
        up = key.upper()
        for k, v in self.properties:
            if k.upper() == up:
                return v
        return default

    @property
    def id(self) -> str | None:
        """org-element's ``:ID``: the value of the *last* ``:ID:`` line (key matched
        case-insensitively), None when there is none or it is empty.

        With duplicate ID lines this differs from ``get("ID")`` / Emacs's
        ``org-id-get``, which take the first one.
        """
        val = None
        for k, v in self.properties:
            if k.upper() == "ID":
                val = v
        return val or None


@dataclass(slots=True)
class OrgDocument:
    """A parsed Org file."""

    text: str
    path: str | None = None
    keywords: dict[str, list[str]] = field(default_factory=dict)
    """Upper-cased ``#+KEY:`` (not inside blocks) -> values in order."""
    todo_keywords: list[str] = field(default_factory=lambda: ["TODO"])
    done_keywords: list[str] = field(default_factory=lambda: ["DONE"])
    headings: list[Heading] = field(default_factory=list)
    preamble_links: list[Link] = field(default_factory=list)
    """Links before the first headline."""
    preamble_end: int = 0
    clock_lines: list[int] = field(default_factory=list)
    """1-based lines holding a CLOCK element as org-element makes one (in a section, a
    drawer, a list item, a greater block): never a ``CLOCK:`` line quoted in an example
    or src block, a table, a fixed-width area or a property drawer."""
    errors: list[str] = field(default_factory=list)
    """Problems met while reading (invalid UTF-8, NUL bytes...): counted, never fatal."""

    @property
    def title(self) -> str | None:
        vals = self.keywords.get("TITLE")
        return " ".join(vals).strip() if vals else None

    @property
    def filetags(self) -> list[str]:
        out: list[str] = []
        for v in self.keywords.get("FILETAGS", []):
            for w in v.split():
                out.extend(t for t in w.split(":") if t)
        return out

    def byte_offset(self, char_offset: int) -> int:
        """Byte offset in the file of a character offset in ``text``."""
        if self.text.isascii():
            return char_offset
        return len(self.text[:char_offset].encode("utf-8", "surrogateescape"))

    def outline_path(self, heading: Heading) -> list[str]:
        """Titles of the ancestors of ``heading``, outermost first (itself excluded)."""
        out: list[str] = []
        p = heading.parent
        while p is not None:
            out.append(self.headings[p].title)
            p = self.headings[p].parent
        out.reverse()
        return out
