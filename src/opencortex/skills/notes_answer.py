"""Answer a question from the person's notes, offline: the sentences, list items and table
rows of the top notes that answer it, each cited to its note.

Why a second stage after retrieval: ``search`` ranks whole headlines, and a person asking
"how much does the server draw at idle?" wants the line with the figure, not a list of
notes.  So the top hybrid hits (and the entries under them, where a meeting's or a
recipe's facts usually sit) are cut into units — a sentence, a list item, a table row read
with its header — and each unit is scored by

- its meaning: MiniLM cosine of the question to the unit (read with its headline), the
  embedder the index already uses (offline);
- its words: the idf-weighted share of the question's content words found in the unit or
  its outline;
- the kind of question: "how much/many/long" wants a number, "when" a date or a time,
  "who" a name — a unit carrying one gets a small prior;
- its note: the idf-weighted share of the question's words the whole note (the unit's
  file and top-level heading, every candidate unit of it) carries.

The score is the project's own, never the index store's: retrieval only chooses which notes
are read (SQLite's BM25 and PostgreSQL's ts_rank_cd order them differently, and their
scores are on different scales), and a unit scores the same whichever store found its note,
at whatever rank — so one calibrated threshold holds on both stores.

Only a unit scoring above ``THRESHOLD`` is presented as an answer (calibrated by
cross-validation on ``bench/data/notes-qa-own*.jsonl``: ``bench/notes_qa.py --calibrate``);
below it the reply says what was searched and shows the closest notes, never a guess.

Only the person's notes are candidates: the agent's own conversation records (the recorder's
``ORIGIN``/``SESSION`` marks, wherever they live) never are, and whatever the sender may not
see (``Access.hide``) is never read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embed.vector_cache import cached_embed

if TYPE_CHECKING:
    from ..access import Access
    from ..config import Settings
    from ..memory.nodes import Node

__all__ = ["THRESHOLD", "NotesAnswer", "Unit", "answer", "is_record", "units_of"]

THRESHOLD = 0.34
"""Lowest unit score presented as an answer (``bench/notes_qa.py --calibrate``, run on both
index stores: over the own 44 answerable and 12 unanswerable questions, 5-fold
cross-validated accuracy of answer / no answer 56/56 on each; the folds chose 0.338-0.345
on SQLite and 0.340-0.345 on PostgreSQL, 0.338 and 0.341 on all).  The weights below: among those with that accuracy on both
stores, the widest gap between the two classes that also answers the shared dev set."""
W_COS, W_LEX, W_TYPE, W_NOTE = 0.50, 0.24, 0.12, 0.08
"""The weights of the unit's meaning, its words, the question kind and the note's words in a
unit's score (they need not sum to 1: the threshold is on the same scale)."""
RECORD_ORIGINS = frozenset({"person", "assistant", "tool", "external", "injected"})
"""The ``ORIGIN`` values the session recorder writes on each turn it keeps."""

_STOP = frozenset("""a an and are as at be but by can could do does did for from had has have
how i if in into is it its of on or so that the their then there these they this to was were
what when where which who whom whose why will with would you your my me we our us about again
any anything again ever get got just know like much many some tell than them thing things
again did does doing done go goes going i'm i've im keep kept make makes made say said
should use used using want wanted way""".split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_NUMBER = re.compile(r"\d")
_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|"
    r"jul|aug|sep|oct|nov|dec)\w*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
    r"\w*\.?\s+\d{1,2}|(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december)|(?:mon|tue|wed|thu|fri|sat|sun)\w*day|every\s+\w+|"
    r"weekly|monthly|daily|yesterday|tomorrow|tonight|morning|evening|noon|week|month|"
    r"year|quarter)\b", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\b")
_QKIND = (
    ("number", re.compile(r"\bhow\s+(?:much|many|long|big|far|often|old|fast|hot|warm|cold|"
                          r"heavy|large|small|high|low)\b|\bwhat\s+(?:size|percentage|ratio|"
                          r"temperature|number|amount|budget|price|cost)\b|\bhow\s+\w+\s+"
                          r"(?:does|do|did|is|are)\b.*\b(?:cost|draw|weigh|take|use|need)\b",
                          re.I)),
    ("date", re.compile(r"\bwhen\b|\bwhat\s+(?:day|date|time|month|year)\b|\bby when\b|"
                        r"\bhow\s+often\b|\bdeadline\b|\bdue\b", re.I)),
    ("name", re.compile(r"\bwho(?:m|se)?\b|\bwhich\s+(?:person|people|colleague|editor)\b",
                        re.I)),
)
_LIST_ITEM = re.compile(r"^(\s*)(?:[-+]|\d+[.)])\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_LINK = re.compile(r"\[\[(?:[^\]]+)\]\[([^\]]+)\]\]|\[\[([^\]]+)\]\]")
_MARKUP = re.compile(r"(?<!\w)[*/=~+](\S(?:.{0,300}?\S)?)[*/=~+](?!\w)")
"""Emphasis markers; the body is bounded (Org's own spans a line or two) so a line of
unclosed openers is read in linear time, not retried to its end from each one."""


@dataclass(slots=True)
class Unit:
    """One candidate answer: a sentence, a list item or a table row of one note."""

    text: str
    key: str
    file: str
    line: int
    id: str | None
    outline: list[str]
    rank: int
    """The retrieval rank of the hit it came from (0 = best; the order candidates are read
    in, never part of the score)."""
    context: str = ""
    """The sentences around a paragraph's sentence (what the reply shows with it)."""
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    note_id: str | None = None
    """The ``id:`` of the nearest entry above this one that has one (for ``cite``)."""

    @property
    def cite(self) -> str:
        """``file:line`` and the ``id:`` of the node, else of the nearest entry above it
        that has one — the note the passage is in (what the reply shows)."""
        ident = self.id or self.note_id
        return f"{self.file}:{self.line}" + (f", id:{ident}" if ident else "")

    @property
    def citation(self) -> str:
        """What ``ask --json`` lists: the node's ``id:`` when it has one, else its key."""
        return f"id:{self.id}" if self.id else self.key

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "key": self.key, "file": self.file, "line": self.line,
                "id": self.id, "outline": self.outline, "score": round(self.score, 4)}


@dataclass(slots=True)
class NotesAnswer:
    """What the notes say about one question: ranked units, and whether the best one is
    above the threshold (``answered``); ``hits`` are the closest notes (for the reply that
    has no answer), ``mode`` how they were searched."""

    query: str
    mode: str
    units: list[Unit]
    hits: list[Any]
    threshold: float = THRESHOLD

    @property
    def answered(self) -> bool:
        return bool(self.units) and self.units[0].score >= self.threshold

    @property
    def best(self) -> float:
        return self.units[0].score if self.units else 0.0


LEAD_IN = 0.85
"""A unit that only introduces what follows it (ends with a colon) keeps this share of its
score: it matches the question's words without holding an answer."""


def is_record(n: Node) -> bool:
    """Is this node one of the agent's own conversation records (evidence for recall, never
    an answer)?  By the recorder's marks, so it holds wherever the records are kept."""
    p = n.properties or {}
    return (p.get("ORIGIN", "").strip().lower() in RECORD_ORIGINS
            or "SESSION" in p or "OPENCORTEX_SESSION" in p)


def _plain(text: str) -> str:
    """Org text as a person reads it: link descriptions, no emphasis markers."""
    text = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
    return _MARKUP.sub(r"\1", text).strip()


def _table_units(rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Each data row read with its header ("Grams: 375"), so the words of the column name
    and of the row both count; a table without a separator line has no header."""
    cells = [(ln, [c.strip() for c in r.strip().strip("|").split("|")]) for ln, r in rows
             if not re.fullmatch(r"\|?[-+:| ]+\|?", r.strip())]
    has_header = any(re.fullmatch(r"\|?[-+:| ]+\|?", r.strip()) for _, r in rows[1:2])
    header = cells[0][1] if has_header and cells else None
    out = []
    for ln, cs in cells[1:] if header else cells:
        if header and len(header) == len(cs):
            out.append((ln, "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cs,
                                                                             strict=True))))
        else:
            out.append((ln, " | ".join(cs)))
    return out


_ABBREV = re.compile(r"(?:^|\s)(?:dr|mr|mrs|ms|st|vs|e\.g|i\.e|etc|approx|no|fig|cf|ca)\.$",
                     re.I)


def _sentences(text: str) -> list[str]:
    """Sentences of a paragraph; a period after a title or an abbreviation ("Dr.",
    "e.g.") ends none."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREV.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def units_of(body: str) -> list[tuple[int, str, str]]:
    """(line offset in the body, text, context) of each sentence, list item and table row
    (a sentence's context: it with the sentences either side of it in its paragraph);
    drawers, keywords, blocks' delimiters and blank lines are no units."""
    out: list[tuple[int, str, str]] = []
    lines = body.splitlines()
    para: list[tuple[int, str]] = []
    table: list[tuple[int, str]] = []
    item: tuple[int, int, list[str]] | None = None  # (offset, indent, lines)

    def flush_para() -> None:
        if para:
            text = " ".join(s.strip() for _, s in para)
            sents = _sentences(text)
            for i, s in enumerate(sents):
                line = next((ln for ln, raw in para if s[:20] in raw), para[0][0])
                out.append((line, s, " ".join(sents[max(0, i - 1): i + 2])))
            para.clear()

    def flush_item() -> None:
        nonlocal item
        if item is not None:
            text = " ".join(s.strip() for s in item[2])
            out.append((item[0], text, text))
            item = None

    def flush_table() -> None:
        if table:
            out.extend((ln, t, t) for ln, t in _table_units(table))
            table.clear()

    in_drawer = False
    for i, raw in enumerate(lines):
        s = raw.strip()
        if in_drawer:
            in_drawer = s.upper() != ":END:"
            continue
        if re.fullmatch(r":[A-Za-z_-]+:", s):
            in_drawer = True
            continue
        if s.startswith("|"):
            flush_para(); flush_item()  # noqa: E702
            table.append((i, s))
            continue
        flush_table()
        if not s or s.startswith(("#+", "# ", "CLOCK:", "SCHEDULED:", "DEADLINE:", "CLOSED:")):
            flush_para(); flush_item()  # noqa: E702
            continue
        m = _LIST_ITEM.match(raw)
        if m:
            flush_para(); flush_item()  # noqa: E702
            item = (i, len(m.group(1)), [m.group(2)])
            continue
        indent = len(raw) - len(raw.lstrip())
        if item is not None and indent > item[1]:
            item[2].append(s)
            continue
        flush_item()
        para.append((i, s))
    flush_para(); flush_item(); flush_table()  # noqa: E702
    return [(ln, _plain(t), _plain(c)) for ln, t, c in out if len(_plain(t)) > 2]


def _stem(w: str) -> str:
    w = w.lower().strip("'’-")
    for suf in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


_SAME = ((re.compile(r"(?<![\w:])(?:1\s?:\s?1|1-on-1|one[- ]on[- ]one)s?(?![\w:])", re.I),
          " oneonone "),)
"""Spellings of one word that tokenising would lose ("1:1" is two digits, no word)."""


def content_words(text: str) -> list[str]:
    """The question's words that carry its topic (stemmed, stop words dropped)."""
    for rx, word in _SAME:
        text = rx.sub(word, text)
    return [_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 1]


def _kinds(question: str) -> set[str]:
    return {k for k, rx in _QKIND if rx.search(question)}


def _fits(kind: str, text: str) -> bool:
    if kind == "number":
        return bool(_NUMBER.search(text))
    if kind == "date":
        return bool(_DATE.search(text))
    return bool(_NAME.search(text))


def _candidates(access: Access, hits: list[Any], per_hit: int = 6) -> list[Unit]:
    """The units of each hit and of the entries under it (a meeting's notes, a recipe's
    steps), in retrieval order, each node once; nothing the sender may not see, no record."""
    store = access.memex.store
    seen: set[str] = set()
    units: list[Unit] = []
    files: dict[str, list[Node]] = {}
    for rank, h in enumerate(hits):
        if h.file not in files:
            files[h.file] = store.file_nodes(h.file, with_body=True)
        family = _family(files[h.file], h.key)[: per_hit]
        for n in family:
            if n.key in seen or access.hidden(n.tags) or is_record(n):
                continue
            seen.add(n.key)
            outline = [*n.outline, n.title] if n.outline[-1:] != [n.title] else list(n.outline)
            title = _plain(re.sub(r"<[^>]*>|\[\d{4}-[^\]]*\]", "", n.title)).strip()
            body_start = n.line + 1 + _drawer_lines(n)
            above = _note_id(files[h.file], n)
            for off, text, around in units_of(n.body or ""):
                units.append(Unit(text, n.key, n.file, body_start + off, n.id, outline, rank,
                                  around, note_id=above))
            if title and re.search(r"\d", n.title):  # a dated or numbered headline
                units.append(Unit(_plain(n.title), n.key, n.file, n.line, n.id, outline, rank,
                                  _plain(n.title), note_id=above))
    return units


def _family(nodes: list[Node], key: str) -> list[Node]:
    """The node ``key`` names and the entries under it, in file order — by outline path,
    since a node with an ID is keyed ``id:…`` and its children by ``file::outline``."""
    top = next((n for n in nodes if n.key == key), None)
    if top is None:
        return []
    path = [*top.outline, top.title]
    return [n for n in nodes if n is top or (n.line > top.line and
                                             n.outline[: len(path)] == path)]


def _note_id(nodes: list[Node], n: Node) -> str | None:
    """The ``id:`` of the nearest entry above ``n`` (by outline path) that has one."""
    for depth in range(len(n.outline), 0, -1):
        path = n.outline[:depth]
        ups = [m for m in nodes if m.line < n.line and [*m.outline, m.title] == path]
        if ups:  # the ancestor is the last entry with that path above n
            up = max(ups, key=lambda m: m.line)
            if up.id:
                return up.id
    return None


def _drawer_lines(n: Node) -> int:
    """Lines between a headline and its body: planning and the property drawer (the body
    the index keeps starts after them)."""
    k = 0
    if n.scheduled or n.deadline or n.closed:
        k += 1
    if n.properties:
        k += 2 + len(n.properties)
    return k


def _heading(outline: list[str]) -> str:
    """The note's title and the unit's own heading (what a reader keeps in mind)."""
    clean = [_plain(re.sub(r"<[^>]*>|\[\d{4}-[^\]]*\]", "", t)).strip() for t in outline]
    clean = [t for t in clean if t]
    return " / ".join(dict.fromkeys([*clean[:1], *clean[-1:]]))


def unit_vector_cache(settings: Settings) -> Path:
    """The units' vector cache of this memex: beside its index (``embed.vector_cache``)."""
    index = settings.index_path
    return index.with_name(index.name + ".units")


def answer(access: Access, question: str, *, k: int = 6, query: str | None = None,
           exclude_files: tuple[str, ...] = ()) -> NotesAnswer:
    """Rank the units of the top ``k`` notes for ``question`` (see the module docstring).
    ``query``: what to search for when the request wraps its topic in an instruction
    ("search my notes for the walrus code": the router's ``walrus code``) — a store that
    does not weigh rare words (PostgreSQL's ts_rank_cd) would otherwise rank the wrapper's
    words' notes first; units are still scored against the whole question."""
    from ..retrieval.hybrid import retriever_for

    res = access.search(query or question, k=k + 4, exclude_files=exclude_files)
    keep = {h.key: h for h in res.hits}
    if keep:
        nodes = access.memex.store.nodes_by_keys(list(keep), with_body=False)
        hits = [h for h in res.hits if h.key in nodes and not is_record(nodes[h.key])][:k]
    else:
        hits = []
    units = _candidates(access, hits)
    if not units:
        return NotesAnswer(question, res.mode, [], hits)
    qwords = set(content_words(question))
    unit_words = [set(content_words(u.text)) for u in units]
    ctx_words = [w | set(content_words(" ".join(u.outline))) for u, w in zip(units, unit_words,
                                                                             strict=True)]
    near_words = [set(content_words(u.context)) for u in units]
    df: dict[str, int] = {}
    for ws in ctx_words:
        for w in ws & qwords:
            df[w] = df.get(w, 0) + 1
    idf = {w: math.log(1 + len(units) / (1 + df.get(w, 0))) for w in qwords}
    total = math.fsum(idf.values()) or 1.0
    kinds = _kinds(question)
    retriever = retriever_for(access.memex)
    emb = retriever.embedder
    texts = [f"{_heading(u.outline)}: {u.text}" for u in units]
    # the units' vectors from the cache beside the index (the same notes come back for
    # related questions); the question's as the search embedded it (the same vector)
    q = retriever.query_vector(question)
    rows = cached_embed(emb, texts, unit_vector_cache(access.memex.settings))
    note_words: dict[tuple[str, str], set[str]] = {}
    for u, cw in zip(units, ctx_words, strict=True):
        note_words.setdefault(_note_of(u), set()).update(cw & qwords)
    for u, row, uw, cw, nw in zip(units, rows, unit_words, ctx_words, near_words,
                                  strict=True):
        cos = float(row @ q)
        # math.fsum: a set's order is the order its words were added, which follows the
        # store's ranking; a plain sum's last bit would too (CI saw a 1-ulp tie flip)
        lex = (0.5 * math.fsum(idf[w] for w in qwords & (cw | nw))
               + 0.5 * math.fsum(idf[w] for w in qwords & uw)) / total
        typ = (sum(_fits(kd, u.text) for kd in kinds) / len(kinds)) if kinds else 0.5
        note = math.fsum(idf[w] for w in note_words[_note_of(u)]) / total
        u.parts = {"cos": cos, "lex": lex, "type": typ, "note": note}
        u.score = W_COS * cos + W_LEX * lex + W_TYPE * typ + W_NOTE * note
        if u.text.rstrip().endswith(":"):  # a lead-in ("For clocks A and B:") says nothing
            u.score *= LEAD_IN                # by itself: what follows it is the answer
    # ties broken by place, never by the store's order
    units.sort(key=lambda u: (-round(u.score, 9), u.file, u.line, u.text))
    return NotesAnswer(question, res.mode, units, hits)


def _note_of(u: Unit) -> tuple[str, str]:
    """The note a unit belongs to as the person knows it: its file and top-level heading."""
    return (u.file, u.outline[0] if u.outline else "")


def reply_text(a: NotesAnswer, more: int = 2) -> str:
    """The person-facing reply: the answer first with its note, then the next candidates;
    or, below the threshold, what was searched and the closest notes."""
    if not a.answered:
        lines = [f"Nothing in your notes answers that ({a.mode} search for "
                 f"{a.query.strip()!r}; best match {a.best:.2f} < {a.threshold:.2f})."]
        if a.hits:
            lines.append("Closest notes:")
            lines += [f"- {' / '.join(h.outline)} ({h.file}:{h.line}"
                      + (f", id:{h.id})" if h.id else ")") for h in a.hits[:3]]
        return "\n".join(lines)
    top = a.units[0]
    lines = [top.context or top.text, f"  — {_heading(top.outline)} ({top.cite})"]
    others = [u for u in a.units[1:] if u.score >= a.threshold * 0.8][:more]
    if others:
        lines.append("Also in your notes:")
        lines += [f"- {u.text}  ({u.cite})" for u in others]
    return "\n".join(lines)


def quoted(a: NotesAnswer, more: int = 2) -> list[Unit]:
    """The units ``reply_text`` quotes (their notes are the reply's citations)."""
    if not a.answered:
        return []
    return [a.units[0], *[u for u in a.units[1:] if u.score >= a.threshold * 0.8][:more]]


_KEPT = 64


def cached_answer(access: Access, question: str, *, query: str | None = None,
                  exclude_files: tuple[str, ...] = ()) -> NotesAnswer:
    """``answer`` kept per (index generation, client, question, query): the router's test
    and the notes skill's reply read the same question once."""
    memo: dict[tuple[str, str, str, str, tuple[str, ...]], NotesAnswer] = \
        access.memex.derived("notes_answers", dict)
    key = (access.memex.store.generation(), access.client, question.strip(),
           (query or "").strip(), exclude_files)
    got = memo.get(key)
    if got is None:
        got = answer(access, question, query=query, exclude_files=exclude_files)
        if len(memo) >= _KEPT:
            memo.pop(next(iter(memo)))
        memo[key] = got
    return got


def answers(access: Access, question: str) -> bool:
    """Do the notes this sender may see answer ``question`` above the threshold?"""
    try:
        return cached_answer(access, question).answered
    except Exception:  # no index, no embedder: the question keeps the classifier's target
        import logging

        logging.getLogger("opencortex").debug("notes: no answer test", exc_info=True)
        return False
