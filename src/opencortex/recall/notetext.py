"""Excerpts a person recognises: a note's text cut into whole sentences and list items, its
Org markup rendered as text, and locators shown relative to their root.

Why: a recall quotes what an opened record says.  A headline line is the note's name, not
something it says; a cut mid-sentence reads as noise; ``[[id:…][RAG]]`` is markup, not the
words the person wrote (``RAG``).  Each segment keeps its ``raw`` form — an exact substring
of the record, which is what grounds the claim — beside the ``shown`` form the story quotes.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["HEADLINE", "note_segments", "relative_locator", "render_org", "word_cut"]

HEADLINE = re.compile(r"^\*+\s+\S")
_DRAWER_START = re.compile(r"^\s*:[A-Za-z_-]+:\s*$")
_DRAWER_END = re.compile(r"^\s*:END:\s*$", re.IGNORECASE)
_SKIP_LINE = re.compile(r"^\s*(?:#\+|#\s|(?:SCHEDULED|DEADLINE|CLOSED):|\|)", re.IGNORECASE)
_ITEM = re.compile(r"^(\s*)(?:[-+]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+(?=[\"“‘(\[]*[A-Z0-9])")
_LINK_DESC = re.compile(r"\[\[([^\]\n]+)\]\[([^\]\n]+)\]\]")
_LINK = re.compile(r"\[\[([^\]\n]+)\]\]")
_EMPHASIS = re.compile(r"(?:(?<=^)|(?<=[\s(\"'{-]))([*/=~+_])(?=\S)([^\n]*?\S)\1"
                       r"(?=$|[\s\-.,:!?;'\")}\[])")
_CHECKBOX = re.compile(r"^\[[ Xx-]\]\s+")
MAX_SHOWN = 480


def render_org(text: str) -> str:
    """Org inline markup as the words it shows: a link as its description (or its target
    without the ``file:``/``id:`` scheme), emphasis without its markers, one space between
    words."""
    s = _LINK_DESC.sub(lambda m: m.group(2), text)
    s = _LINK.sub(lambda m: re.sub(r"^(?:file|id|attachment):", "", m.group(1)), s)
    for _ in range(2):  # nested emphasis (*/bold italic/*)
        s = _EMPHASIS.sub(lambda m: m.group(2), s)
    return re.sub(r"\s+", " ", s).strip()


def word_cut(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` no longer than ``limit``, cut only between words (with an ellipsis)."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:")
    return f"{cut} …"


def _blocks(text: str) -> list[tuple[str, bool]]:
    """The note body's paragraphs and list items as exact substrings (``True`` for an
    item), without headline lines, drawers, keywords, planning lines or tables."""
    lines = text.split("\n")
    out: list[tuple[str, bool]] = []
    cur: list[str] = []
    cur_item = False
    item_indent = -1
    in_drawer = False

    def flush() -> None:
        nonlocal cur, cur_item
        if cur:
            out.append(("\n".join(cur), cur_item))
        cur, cur_item = [], False

    for line in lines:
        if in_drawer:
            in_drawer = not _DRAWER_END.match(line)
            continue
        if _DRAWER_START.match(line) and not _DRAWER_END.match(line):
            flush()
            in_drawer = True
            continue
        if not line.strip() or HEADLINE.match(line) or _SKIP_LINE.match(line):
            flush()
            continue
        m = _ITEM.match(line)
        if m:
            flush()
            cur, cur_item, item_indent = [line], True, len(m.group(1))
            continue
        indent = len(line) - len(line.lstrip())
        if cur_item and indent <= item_indent:
            flush()  # a paragraph after the list, not the item's continuation
        cur.append(line)
    flush()
    return out


def note_segments(text: str) -> list[tuple[str, str]]:
    """``(raw, shown)`` pairs: each list item whole, each paragraph cut into sentences.
    ``raw`` is an exact substring of ``text``; ``shown`` is it rendered for a person."""
    out: list[tuple[str, str]] = []
    for block, is_item in _blocks(text):
        raw_block = block.strip()
        if is_item:
            shown = _CHECKBOX.sub("", render_org(_ITEM.sub("", raw_block, count=1)))
            if shown:
                out.append((raw_block, word_cut(shown)))
            continue
        start = 0
        for m in _SENTENCE_END.finditer(raw_block):
            out.append((raw_block[start:m.start()].strip(), ""))
            start = m.end()
        out.append((raw_block[start:].strip(), ""))
    return [(raw, shown or word_cut(render_org(raw))) for raw, shown in out
            if raw and (shown or render_org(raw))]


def relative_locator(locator: str, root: str | None) -> str:
    """A locator as a person reads it: relative to its root (``projects/x.org:12``, a git
    commit as ``repo@sha``), unchanged when it lies elsewhere."""
    if not root:
        return locator
    r = str(root).rstrip("/")
    if locator.startswith(r + "/"):
        return locator[len(r) + 1:]
    if locator.startswith(r + "@"):
        return Path(r).name + locator[len(r):]
    return locator
