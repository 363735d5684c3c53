"""The one egress check: bytes that may carry private text, checked where they leave.

Privacy by path (``Access.hide``) decides what a client may *ask for*; this module decides
what may *leave*, whatever path the bytes took to get there (a shell command that read a
private file, a git diff of one, an archived record, a model's summary of private items).
Every exit to a client that may not see private notes (the HTTP response layer, the MCP
tool wrapper, the kernel's reply, an ``@agent`` answer written into a non-private entry)
and every prompt to a non-local model with ``remote_ok = false`` (the LLM gateway's
request builder) calls :func:`check` (or :func:`check_value` for JSON-like data).

Two signals, either one withholds:

- **provenance** — :class:`Carried`: text with a ``private`` flag set by the code that
  knows where it came from (a dataclass, never a marker inside the string);
- **content** — :class:`Prints`: fingerprints of private text (normalised lines of at
  least :data:`MIN_LINE` characters, word shingles of :data:`SHINGLE` words, and windows
  of :data:`LETTERS` letters and digits with everything between them dropped), built by
  the memex from every node a privacy tag covers and refreshed with its index, so bytes
  that arrived by a path nobody tagged are still caught.  A hit withholds the lines it
  touches, with a note saying why.

Short lines are never fingerprinted (``:END:``, ``- [ ] call``, a bare date are in every
memex): a private note's short title alone is not caught by content, only by path.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import re
import threading
import unicodedata
import urllib.parse
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

__all__ = ["LETTERS", "MIN_LINE", "SHINGLE", "Carried", "Prints", "StreamGate", "Taint", "Verdict",
           "check",
           "check_value", "register_remote_source", "remote_prints", "shell_read",
           "withheld_note"]

MIN_LINE = 24
"""Normalised characters a line needs before it is fingerprinted (or looked up)."""
SHINGLE = 8
"""Words per shingle: long enough that common phrasing ("see the notes for the …") of
public text does not collide with a private note's."""
MIN_SHINGLE_CHARS = 32
"""A shingle of short words (``a b c …``, table rules) is not a fingerprint."""
SEEN_MAX = 8192
"""Texts whose verdict one set of prints remembers (``Prints._seen``; 16-byte keys)."""

LETTERS = 40
"""Letters and digits per window of the letter prints: about as many as a shingle's
:data:`SHINGLE` words hold, so public text collides about as rarely."""
MIN_DISTINCT = 8
"""A letter window of fewer distinct characters (``aaaa…``, a run of zeros) is no print."""

_WORD = re.compile(r"\w+")
_NOT_ALNUM = re.compile(r"[\W_]+")
_STRUCT = re.compile(r"^\s*(?:#\+|:[\w-]+:|(?:SCHEDULED|DEADLINE|CLOSED|CLOCK):"
                     r"|- (?:State \"|Note taken on |Rescheduled from |Refiled on ))")
"""Org structure, not prose: keywords, drawer and property lines, planning, clocks — the
same in a private and a public entry (``#+TODO: …``, ``SCHEDULED: <…>``)."""
_LINK = re.compile(r"\[\[([^\]\n]*)\](?:\[([^\]\n]*)\])?\]")
"""An Org link: only its description counts (``[[id:…][Title]]``: the same link in a public
note is not private text)."""


def _prose(line: str) -> str:
    if _STRUCT.match(line):
        return ""
    if "[[" in line:
        line = _LINK.sub(lambda m: m.group(2) or "", line)
    return line
_LEAD = re.compile(r"^[\s*#+|:>\-–•\[\]xX]*")  # Org/Markdown bullets, stars, quotes, pipes
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM")
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_HEX = re.compile(r"[0-9A-Fa-f]+")
_CONTINUATION = bytes(range(0x80, 0xC0))
_ENCODED = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
"""A run that may be base64 (standard or URL-safe) or hex: decoded and checked as text."""
_TOKEN = re.compile(r"[^ \n]+")
"""A URL-encoded word: everything between spaces and line breaks."""
_BYTE_ESCAPES = re.compile(r"(?:(?:\\x|0x)[0-9A-Fa-f]{2}[\s,;:]*){8,}")
"""Hex written a byte at a time with a prefix (``\\x74\\x68``, ``0x74, 0x68``: a C or
Python byte string, an array): the letter windows read ``x74x68`` and match nothing."""


def _decode_run(run: str) -> str:
    """The text a base64 or hex run stands for ("" when it is neither, or not text)."""
    raw: bytes | None = None
    body = run.rstrip("=")
    if len(body) % 2 == 0 and _HEX.fullmatch(body):
        try:
            raw = bytes.fromhex(body)
        except ValueError:
            raw = None
    if raw is None:
        b = body.replace("-", "+").replace("_", "/")
        b = b[:len(b) - len(b) % 4] if len(b) % 4 == 1 else b + "=" * (-len(b) % 4)
        try:
            raw = base64.b64decode(b, validate=True)
        except (ValueError, binascii.Error):
            return ""
    # text, not bytes: valid UTF-8 (random bytes almost never are; a piece cut inside a
    # character may lose up to 3 bytes at either end), mostly printable characters
    if raw and 0x80 <= raw[0] < 0xC0:
        raw = raw.lstrip(_CONTINUATION)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(raw) - 3:
            return ""
        try:
            text = raw[:e.start].decode("utf-8")
        except UnicodeDecodeError:
            return ""
    good = sum(c.isprintable() or c in "\n\t" for c in text)
    return text if text and good >= 0.9 * len(text) else ""


def _letters(text: str) -> str:
    """Text as its letters and digits alone: compatibility-decomposed (fullwidth letters,
    ligatures, accents split off), casefolded, and everything else dropped -- spaces and
    line breaks, punctuation, underscores, zero-width and combining characters.  A private
    passage respaced, run together, cut one character per line or padded with invisible
    characters reads the same here."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKD", text).casefold())


def _windows(s: str) -> Iterable[tuple[int, int]]:
    """(hash, start) of each :data:`LETTERS`-long window of a letter string that starts at a
    content-defined anchor (a character whose code point is 1 modulo 8: ``a i q y 1 9`` in
    ASCII, one in eight elsewhere), so a passage has the same windows wherever it is copied
    and only about one position in six is hashed."""
    if len(s) < LETTERS:
        return
    import numpy as np  # here, not at import: the ask's start-up thread loads it meanwhile

    codes = np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)[:len(s) - LETTERS + 1]
    for i in np.flatnonzero((codes & 7) == 1).tolist():
        yield hash(s[i:i + LETTERS]), i


def _letter_prints(s: str) -> Iterable[int]:
    """The letter prints of one private text's letter string: as written, in rot13 and
    reversed (a letter substitution or a reversal keeps every letter), windows of at least
    :data:`MIN_DISTINCT` distinct characters only."""
    for v in (s, s.translate(_ROT13), s[::-1]):
        for h, i in _windows(v):
            if len(set(v[i:i + LETTERS])) >= MIN_DISTINCT:
                yield h


def _encoded_prints(text: str) -> Iterable[int]:
    """Letter prints of a private text's hex and base64 forms (base64 at each of the three
    byte alignments a passage can start at; URL-safe base64 reads the same once ``_letters``
    drops ``+/-_``).  The decoder of :meth:`Prints._encoded_hits` needs an encoded run whole
    (at least 16 characters on one line); the same bytes wrapped at a few columns, grouped
    in fours, or hex written a byte at a time (``74 68 65``, ``74:68:65``, a hex dump's
    rows) are read by the letter windows instead, which drop whatever lies between the
    characters -- so these prints cost nothing at egress, only when prints are built."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) * 4 < LETTERS * 3:
        return
    for form in (raw.hex(), *(base64.b64encode(raw[i:]).decode("ascii") for i in range(3))):
        s = _letters(form)
        for h, i in _windows(s):
            if len(set(s[i:i + LETTERS])) >= MIN_DISTINCT:
                yield h


@dataclass(frozen=True, slots=True)
class Carried:
    """Text and where it came from: ``private`` when the code that produced it knows it
    read private material (``why`` names it, e.g. "shell read notes/health.org")."""

    text: str
    private: bool = False
    why: str = ""

    @staticmethod
    def join(parts: Iterable[Carried], sep: str = "\n") -> Carried:
        ps = list(parts)
        private = [p for p in ps if p.private]
        return Carried(sep.join(p.text for p in ps), bool(private),
                       "; ".join(dict.fromkeys(p.why for p in private if p.why)))


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`check` decided: the text that may leave, and why anything was cut."""

    text: str
    withheld: bool = False
    """True when anything was cut (whole text or some lines)."""
    why: str = ""


def _norm_line(line: str) -> str:
    """A line as prose, casefolded, without leading bullets and with one space per gap."""
    return " ".join(_LEAD.sub("", line).casefold().split())


_NEED = MIN_SHINGLE_CHARS - SHINGLE + 1
"""Characters of its words a shingle needs (the spaces between them make up the rest)."""


def _shingles(words: list[str]) -> list[tuple[int, int]]:
    """(hash, first word index) of each SHINGLE-word window that starts at a word of at
    least 4 characters (content-defined anchors: the same passage has the same anchors
    wherever it is copied, and half the windows of prose are skipped) and is long enough
    to count.  A list built in one comprehension: this runs for every word of every reply
    that leaves to a client, and a generator's per-window resume cost about as much as
    the window's hash."""
    n = len(words)
    if n < SHINGLE:
        return []
    cum = list(accumulate(map(len, words), initial=0))
    return [(hash(" ".join(words[i:i + SHINGLE])), i) for i in range(n - SHINGLE + 1)
            if cum[i + 1] - cum[i] >= 4 and cum[i + SHINGLE] - cum[i] >= _NEED]


@dataclass(frozen=True, slots=True)
class Prints:
    """Fingerprints of private text (hashes: the text itself is not kept twice).  Hashes are
    Python's per-process ``hash``: the prints live in memory beside the index they mirror."""

    lines: frozenset[int] = frozenset()
    shingles: frozenset[int] = frozenset()
    letters: frozenset[int] = frozenset()
    """Windows of :data:`LETTERS` letters and digits (:func:`_letters`): the same passage
    with its spaces, line breaks, punctuation or case changed, or invisible characters
    put between its letters, has the same letters."""
    _seen: dict[bytes, frozenset[int]] = field(default_factory=dict, compare=False,
                                               repr=False)
    """What ``hit_lines`` found for texts checked against these prints before, keyed by
    the text's BLAKE2b digest (never the text): the prints never change (a refresh makes
    new ones), so neither does the answer, and the same snippets, titles and IDs leave in
    reply after reply (search hits, a note quoted again).  Bounded: emptied when full."""

    @staticmethod
    def of(texts: Iterable[str]) -> Prints:
        lines: set[int] = set()
        shingles: set[int] = set()
        letters: set[int] = set()
        for text in texts:
            words: list[str] = []
            prose_lines: list[str] = []
            for raw in text.splitlines():
                prose = _prose(raw)
                prose_lines.append(prose)
                norm = _norm_line(prose)
                if len(norm) >= MIN_LINE:
                    lines.add(hash(norm))
                    lines.add(hash(norm.translate(_ROT13)))
                words.extend(_WORD.findall(prose.casefold()))
            prose = "\n".join(prose_lines)
            letters.update(_letter_prints(_letters(prose)))
            letters.update(_encoded_prints(prose))
            shingles.update(h for h, _ in _shingles(words))
            # the same passage in rot13 (a letter substitution keeps words and lines): kept
            # as prints too, so checking it costs nothing at egress
            shingles.update(h for h, _ in _shingles([w.translate(_ROT13) for w in words]))
        return Prints(frozenset(lines), frozenset(shingles), frozenset(letters))

    @staticmethod
    def union(parts: Iterable[Prints]) -> Prints:
        ps = list(parts)
        if len(ps) == 1:
            return ps[0]
        return Prints(frozenset().union(*(p.lines for p in ps)),
                      frozenset().union(*(p.shingles for p in ps)),
                      frozenset().union(*(p.letters for p in ps)))

    def __bool__(self) -> bool:
        return bool(self.lines or self.shingles or self.letters)

    def hit_lines(self, text: str) -> set[int]:
        """Indexes of the lines of ``text`` that carry private text: as written, in rot13
        (prints of both are kept), or encoded -- base64, hex or URL-encoding, each run
        decoded and read on together with the runs around it (a blob wrapped over lines,
        or a passage split into several encoded pieces)."""
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        got = self._seen.get(key)
        if got is None:
            out = self._plain_hits(text)
            if len(out) < text.count("\n") + 1:
                out |= self._encoded_hits(text)
            got = frozenset(out)
            if len(self._seen) >= SEEN_MAX:
                self._seen.clear()
            self._seen[key] = got
        return set(got)

    def _encoded_hits(self, text: str) -> set[int]:
        # (starts, the run's pieces) -- a wrapped blob is one run; its pieces are joined
        # once at the end (adding each to a growing string copied it: quadratic)
        runs: list[tuple[list[int], list[str]]] = []
        end = -1
        for m in _ENCODED.finditer(text):
            if runs and not text[end:m.start()].strip() and not runs[-1][1][-1].endswith("="):
                runs[-1][0].append(m.start())
                runs[-1][1].append(m.group(0))
            else:
                runs.append(([m.start()], [m.group(0)]))
            end = m.end()
        parts = [(starts, d) for starts, r in runs if (d := _decode_run("".join(r)))]
        if "%" in text:  # URL-encoded words: a space is %20 or +, so one token holds a line
            for m in _TOKEN.finditer(text):  # each token once (searching back from every
                token = m.group(0)          # ``%XX`` to its token's start was quadratic)
                # ``50%`` or one ``%20`` in a link: no line
                if token.count("%") >= 3 and _PCT.search(token):
                    parts.append(([m.start()],
                                  urllib.parse.unquote_plus(token, errors="replace")))
        if "\\x" in text or "0x" in text:
            for m in _BYTE_ESCAPES.finditer(text):
                raw = bytes.fromhex("".join(re.findall(r"(?:\\x|0x)([0-9A-Fa-f]{2})",
                                                       m.group(0))))
                run = m.group(0).rstrip()  # the separators after the last byte are not
                starts = [m.start() + i + 1 for i, c in enumerate(run) if c == "\n"]  # it
                parts.append(([m.start(), *starts],
                              raw.decode("utf-8", "replace")))
        if not parts:
            return set()
        ds = [d for _, d in parts]  # pieces cut anywhere, a word's letters on both sides
        hits: set[int] = set()
        if any(self._plain_hits(d) for d in ds) or (len(ds) > 1 and (
                self._plain_hits("".join(ds)) or self._plain_hits(" ".join(ds)))):
            for starts, _ in parts:  # every line holding a run of the encoded passage
                hits.update(text.count("\n", 0, at) for at in starts)
        return hits

    def _plain_hits(self, text: str) -> set[int]:
        out: set[int] = set()
        lines = text.split("\n")
        word_line: list[int] = []
        words: list[str] = []
        shingles = self.shingles
        letters: list[str] = []
        for i, raw in enumerate(lines):
            # casefolded once for both tests (``_norm_line`` of the casefolded prose is the
            # same line: the bullets it strips casefold to themselves)
            folded = _prose(raw).casefold()
            if len(folded) >= MIN_LINE:  # the normalised line is never longer
                norm = _norm_line(folded)
                if len(norm) >= MIN_LINE and hash(norm) in self.lines:
                    out.add(i)
            if shingles:
                ws = _WORD.findall(folded)
                words.extend(ws)
                word_line.extend([i] * len(ws))
            if self.letters:
                letters.append(_letters(folded))
        if shingles:
            for h, at in _shingles(words):
                if h in shingles:
                    out.update(word_line[at:at + SHINGLE])
        if self.letters:  # the letters of every line read as one run: a passage cut
            ends: list[int] = []  # over lines, one character each, still matches
            total = 0
            for piece in letters:
                total += len(piece)
                ends.append(total)
            for h, at in _windows("".join(letters)):
                if h in self.letters:  # every line holding a letter of the window
                    first = bisect.bisect_right(ends, at)
                    last = bisect.bisect_right(ends, at + LETTERS - 1)
                    out.update(j for j in range(first, last + 1) if letters[j])
        return out


def withheld_note(why: str) -> str:
    return (f"[withheld: {why}; private notes do not leave to this client — see "
            "[guard] trusted_clients and remote_ok]")


def check(text: str | Carried, prints: Prints | None) -> Verdict:
    """The egress check for one text on its way to a client (or model) that may not see
    private notes: withheld whole when its provenance is private, else the lines that
    match ``prints`` are replaced by one note each run."""
    if isinstance(text, Carried):
        if text.private:
            return Verdict(withheld_note(text.why or "it was read from private notes"),
                           True, text.why or "private provenance")
        text = text.text
    if not prints or not text or len(text) < MIN_LINE:
        return Verdict(text)
    hits = prints.hit_lines(text)
    if not hits:
        return Verdict(text)
    why = "it matches text of a private note"
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in hits:
            if not out or out[-1] != withheld_note(why):
                out.append(withheld_note(why))
        else:
            out.append(line)
    return Verdict("\n".join(out), True, why)


def check_value(value: Any, prints: Prints | None, *, private: bool = False,
                why: str = "") -> tuple[Any, bool]:
    """:func:`check` over every string in JSON-like data (keys are the schema, kept);
    ``(value, anything_withheld)``.  ``private``: the whole value's provenance is private."""
    cut = False
    seen: dict[str, Verdict] = {}  # a reply repeats its text (reply, replies, data.answer)

    def text(v: str) -> str:
        nonlocal cut
        if not private and len(v) < MIN_LINE:
            return v  # what ``check`` answers: too short for a print
        got = seen.get(v)
        if got is None:
            got = seen[v] = check(Carried(v, private, why) if private else v, prints)
        cut = cut or got.withheld
        return got.text

    def walk(v: Any) -> Any:
        nonlocal cut
        t = type(v)  # parsed JSON's exact types first: this runs on every response
        if t is str:
            return text(v)
        if t is dict:
            return {k: walk(x) for k, x in v.items()}
        if t is list:
            return [walk(x) for x in v]
        if t in _SCALARS:
            return v
        if isinstance(v, str):
            return text(v)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        if isinstance(v, Carried):
            got = check(v, prints)
            cut = cut or got.withheld
            return got.text
        return v

    return walk(value), cut


_SCALARS = frozenset({int, float, bool, type(None)})


class StreamGate:
    """The egress check for text that leaves as it is written (a model answer streamed to
    a client as deltas): each delta alone is a few words, too short for a line or a
    passage to match, so the check must see the stream, not the pieces.

    Only complete lines are released, each block checked with the words sent just before
    it (a passage spans lines: one word, or one character, per line is still a passage);
    the first withheld line, or a chain whose provenance turned private, ends the stream --
    nothing more is released, and the verified reply that follows (checked whole, with its
    note) says what was withheld.  An unfinished last line is never released here: the
    reply carries it."""

    def __init__(self, send: Callable[[str], None], prints: Callable[[], Prints | None],
                 taint: Taint | None = None) -> None:
        self.send, self.prints, self.taint = send, prints, taint
        self.pending: list[str] = []
        """The unfinished last line, as the pieces it came in (joined once a line break
        comes: a long line sent a character at a time is not copied again per piece)."""
        self.tail: list[str] = []
        """The last :data:`CONTEXT` lines already sent, as written (an encoded blob wrapped
        over lines is read on across them)."""
        self.held: list[str] = []
        """Complete lines not yet released: too little follows them to judge them."""
        self.words: list[str] = []
        """The last words sent before those: at least :data:`SHINGLE` of them holding at
        least :data:`LETTERS` letters and digits, however many lines they came on -- a
        count of lines alone would let a passage written a word (or a character) per line
        through."""
        self.stopped = False
        self.lock = threading.Lock()

    CONTEXT = 3
    HOLD = 64
    """Lines held back at most: beyond it the oldest leave as soon as nothing matched (a
    stream of blank lines must not make every piece re-read all of them)."""

    @staticmethod
    def _judged(block: list[str]) -> int:
        """How many of ``block``'s first lines can leave: a line leaves once the text from
        its start on holds a whole shingle and a whole letter window, so no passage that
        begins in it can still be completed by lines not yet written; a line with no
        letter or digit can leave whenever the ones before it have."""
        words = [len(_WORD.findall(_prose(ln))) for ln in block]
        letters = [len(_letters(_prose(ln))) for ln in block]
        after_w = after_l = 0
        ok = [False] * len(block)
        for j in range(len(block) - 1, -1, -1):
            after_w += words[j]
            after_l += letters[j]
            ok[j] = (after_w >= SHINGLE and after_l >= LETTERS) or not letters[j]
        k = 0
        while k < len(block) and (ok[k] or len(block) - k > StreamGate.HOLD):
            k += 1
        return k

    def _keep(self, lines: list[str]) -> None:
        sent = self.tail + lines
        self.tail = sent[-self.CONTEXT:]
        words = self.words + [w for ln in sent[:-self.CONTEXT]
                              for w in _WORD.findall(_prose(ln))]
        n, letters, start = 0, 0, len(words)
        while start > 0 and (n < SHINGLE or letters < LETTERS):
            start -= 1
            n += 1
            letters += len(_letters(words[start]))
        self.words = words[start:]

    def feed(self, piece: str) -> None:
        with self.lock:
            if self.stopped:
                return
            if self.taint is not None and self.taint.private:
                self.stopped = True
                return
            cut = piece.rfind("\n")
            if cut < 0:
                self.pending.append(piece)
                return
            done = "".join(self.pending) + piece[:cut]
            self.pending = [piece[cut + 1:]]
            block = self.held + done.split("\n")
            prints = self.prints()
            context = ([" ".join(self.words)] if self.words else []) + self.tail
            hits = prints.hit_lines("\n".join(context + block)) if prints else set()
            first = min((i - len(context) for i in hits), default=None)
            if first is not None:
                self.stopped = True
                lines, self.held = block[:max(first, 0)], []
            else:
                k = self._judged(block)
                lines, self.held = block[:k], block[k:]
            if not lines:
                return
            out = "\n".join(lines) + "\n"
            self._keep(lines)
        self.send(out)


# -- provenance ---------------------------------------------------------------------------------
class Taint:
    """Shared by every signal of one stimulus's chain (``meta["taint"]``; a feedback
    signal's meta is a shallow copy, so they hold the same object): set by an actuator
    that knows it read private material, read where the chain's replies leave."""

    __slots__ = ("why",)

    def __init__(self) -> None:
        self.why: list[str] = []

    @property
    def private(self) -> bool:
        return bool(self.why)

    def mark(self, why: str) -> None:
        if why not in self.why:
            self.why.append(why)

    def carry(self, text: str) -> Carried:
        return Carried(text, self.private, "; ".join(self.why))


READS_TREE = frozenset({"rg", "grep", "egrep", "fgrep", "git", "find", "fd", "tree", "ag",
                        "ack", "du"})
"""Commands that read the tree under their working directory when given no path."""


COPY_READ_CAP = 8 << 20
"""Bytes of a named file outside the index read to judge it; a larger one counts as private."""


def _tagged(data: bytes, policy: Any) -> bool:
    """Does this text carry a privacy tag (its ``#+FILETAGS`` or a headline's tags)?"""
    from ..org.parser import parse_bytes
    from .privacy import is_private

    text = data.decode("utf-8", "replace").casefold()
    if not any(t in text for t in policy.privacy_tags):
        return False
    doc = parse_bytes(data)
    return is_private([*doc.filetags, *(t for h in doc.headings for t in h.tags)], policy)


_UNREADABLE_MAGIC = (b"\x28\xb5\x2f\xfd", b"\x04\x22\x4d\x18", b"LZIP", b"\x89LZO",
                     b"\x1f\x9d", b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07")
"""zstd, lz4, lzip, lzop, compress (``.Z``), 7-Zip, RAR: formats ``tar``, ``rg -z`` or an
approved unpacker read and Python cannot (here)."""
_LZMA_ALONE = b"\x5d\x00\x00"
"""The usual start of a raw ``.lzma`` stream (no magic of its own: ``rg -z`` goes by the
name, GNU tar by these bytes)."""
_UNREADABLE_NAMES = (".br", ".tbr")
"""Brotli has no magic at all: ``rg -z`` decompresses a file by this name alone."""


def _unpacked(data: bytes) -> bytes | None:
    """A gzip, bzip2 or xz stream's content (None: too large or unreadable -- private)."""
    import bz2
    import lzma
    import zlib

    if data.startswith(_UNREADABLE_MAGIC):
        return None
    out = b""
    try:
        while data:
            if data.startswith(b"\x1f\x8b"):
                z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                out += z.decompress(data, COPY_READ_CAP + 1 - len(out))
                data = z.unused_data if not z.unconsumed_tail else b""
                if z.unconsumed_tail:
                    return None
            elif data.startswith(b"BZh"):
                b = bz2.BZ2Decompressor()
                out += b.decompress(data, COPY_READ_CAP + 1 - len(out))
                if not b.eof:
                    return None
                data = b.unused_data
            elif data.startswith((b"\xfd7zXZ", _LZMA_ALONE)):
                x = lzma.LZMADecompressor()  # FORMAT_AUTO: .xz and raw .lzma
                out += x.decompress(data, COPY_READ_CAP + 1 - len(out))
                if not x.eof:
                    return None
                data = x.unused_data
            else:
                break
            if len(out) > COPY_READ_CAP:
                return None
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
        return None
    return out


def _packed_private(data: bytes, policy: Any) -> bool:
    """A compressed file or a tar archive (``tar -xzOf``, ``rg -z`` print what it holds):
    private when any member's text carries a privacy tag, or it cannot be read."""
    import io
    import tarfile

    if data.startswith(b"PK\x03\x04"):
        return _zip_private(data, policy)
    compressed = data.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ", _LZMA_ALONE,
                                  *_UNREADABLE_MAGIC))
    raw = _unpacked(data) if compressed else data
    if raw is None:
        return True
    if compressed and _tagged(raw, policy):
        return True
    if raw[257:262] != b"ustar":
        return False  # no tar header
    try:
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            for i, m in enumerate(tf):
                if i >= 10_000 or m.size > COPY_READ_CAP:
                    return True
                f = tf.extractfile(m) if m.isfile() else None
                if f is not None and (_tagged(got := f.read(COPY_READ_CAP), policy)
                                      or _packed_private(got, policy)):
                    return True
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return raw[257:262] == b"ustar"
    return False


def _zip_private(data: bytes, policy: Any) -> bool:
    """A zip archive (``unzip -p`` prints it): private when a member's text carries a
    privacy tag, or when it cannot be read (too many members, more than
    :data:`COPY_READ_CAP` bytes unpacked, encrypted)."""
    import io
    import zipfile

    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for i, m in enumerate(zf.infolist()):
                total += m.file_size  # a zip bomb: small archive, huge members
                if i >= 10_000 or total > COPY_READ_CAP or m.flag_bits & 1:
                    return True
                if m.is_dir():
                    continue
                got = zf.read(m)
                if _tagged(got, policy) or _packed_private(got, policy):
                    return True
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError,
            EOFError, ValueError, RuntimeError):
        return True
    return False


def _copy_is_private(p: Any, policy: Any) -> bool:
    """Does a file the index does not describe carry a privacy tag in its own text -- an
    Emacs backup (``health.org~``) or autosave (``#health.org#``), a copy under another
    name, a compressed copy or an archive holding one?  Its path leads to no indexed note,
    and a note of short lines (a PIN, a door code) is below every content print, so only
    its bytes can say.  A file too large or unreadable counts as private."""
    import stat

    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            return False
        if st.st_size > COPY_READ_CAP or p.name.endswith(_UNREADABLE_NAMES):
            return True
        with open(p, "rb") as f:
            data = f.read(COPY_READ_CAP + 1)
    except OSError:
        return True
    return _tagged(data, policy) or _packed_private(data, policy)


def shell_read(argv: list[str], cwd: Any, root: Any, private_files: frozenset[str],
               policy: Any = None) -> str | None:
    """Why a shell command's output is private (it read a file holding private notes, or a
    folder that has one), or None.  ``cwd`` and ``root`` are resolved Paths; an argument is
    taken as a path when it names an existing file or folder (a pattern is not one).
    With ``policy`` (the memex's :class:`~opencortex.guard.policy.GuardPolicy`), a named
    file that is no private note is also judged by its own tags (:func:`_copy_is_private`),
    and so is every file under a named folder (:func:`_tree_copy`): ``rg -n code attic``
    prints an unindexed copy in attic/ as surely as ``cat attic/locker.txt`` does."""
    from pathlib import Path

    if not argv or (not private_files and policy is None):
        return None
    root, cwd = Path(root), Path(cwd)

    def private_under(p: Path) -> str | None:
        try:
            rel = p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            # outside the memex: only what reaches back into it counts (a folder above)
            try:
                root.relative_to(p.resolve())
            except (ValueError, OSError):
                return None
            rel = ""
        if rel in private_files:
            return rel
        prefix = "" if rel in ("", ".") else rel + "/"
        return next((f for f in sorted(private_files) if f.startswith(prefix)), None)

    def a_name(p: Path) -> str:
        try:
            return p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return p.name

    paths = []
    for a in argv[1:]:
        if a.startswith("-") or "\0" in a or len(a) > 4096:
            continue
        p = Path(a) if Path(a).is_absolute() else cwd / a
        try:
            if p.exists():
                paths.append(p)
        except OSError:
            continue
    if not paths and Path(argv[0]).name in READS_TREE:
        paths = [cwd]
    git = Path(argv[0]).name == "git"
    if git:
        # git reads its object store, which no argument bounds: ``git show HEAD:a.org b.org``
        # or ``git show <blob> b.org`` prints a.org's bytes while the only path it names is
        # b.org.  So git in the memex reads the memex, whatever paths it is given.
        paths.append(cwd)
    for p in paths:
        hit = private_under(p)
        if hit is not None:
            return f"`{Path(argv[0]).name}` read {hit}, which holds private notes"
        if policy is None:
            continue
        if p.is_file() and _copy_is_private(p.resolve(), policy):
            return f"`{Path(argv[0]).name}` read {a_name(p)}, whose own text is tagged private"
        if p.is_dir():
            got = _tree_copy(p, policy)
            if got is not None:
                return f"`{Path(argv[0]).name}` read {a_name(p)}: {got}"
    if git and policy is not None:
        got = _history_private(cwd, policy)
        if got is not None:
            return f"`git` read the repository's history: {got}"
    return None


_HISTORY_SEEN: dict[tuple[str, str], str | None] = {}
"""``_history_private``'s answers by (git directory, its refs): a history only grows, so
one ``git log -G`` per new set of branch tips."""
_HISTORY_LOCK = threading.Lock()


def _history_private(cwd: Any, policy: Any) -> str | None:
    """Why the history of the repository holding ``cwd`` carries private text, or None: some
    commit added or removed a line carrying a privacy tag (a headline's ``:private:``,
    ``#+FILETAGS``).  A private note deleted (or untagged) since is in no index and no
    content print, yet ``git log -p`` / ``git show HEAD~3:old.org`` print what it said.
    Judged by git itself through the runner (pinned, sandboxed); a history git cannot
    read counts as private."""
    from pathlib import Path

    from . import runner
    from .gitrepo import git_dirs

    tags = sorted(getattr(policy, "privacy_tags", ()) or ())
    if not tags:
        return None
    here = Path(cwd)
    dirs = [g for _, g in git_dirs(here.resolve())]
    if not dirs:
        return None  # no repository: git prints nothing of one
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

    def git(*args: str) -> runner.Ran:
        return runner.run(runner.git_argv(here, *args), cwd=here, timeout=60,
                          readable=dirs, env=env)

    try:
        tips = git("for-each-ref", "--format=%(objectname)")
        head = git("rev-parse", "--verify", "-q", "HEAD")
    except Exception:
        return "git could not read it"
    if tips.returncode != 0:
        return "git could not read it"
    key = (str(dirs[-1]), hashlib.blake2b(tips.stdout + head.stdout).hexdigest())
    with _HISTORY_LOCK:
        if key in _HISTORY_SEEN:
            return _HISTORY_SEEN[key]
    pattern = ":(" + "|".join(re.escape(t) for t in tags) + "):"
    try:
        ran = git("log", "--all", "-i", "-E", "-G", pattern, "--format=%H", "-n", "1")
    except Exception:
        return "git could not read it"
    if ran.returncode != 0 or ran.timed_out or ran.truncated:
        got: str | None = "git could not read it"
    else:
        got = ("a commit added or removed a private note"
               if ran.stdout.strip() else None)
    with _HISTORY_LOCK:
        if len(_HISTORY_SEEN) >= 256:
            _HISTORY_SEEN.clear()
        _HISTORY_SEEN[key] = got
    return got


TREE_FILES_CAP = 20_000
"""Files under a named folder judged one by one; a folder with more counts as private."""
TREE_BYTES_CAP = 64 << 20
"""Bytes read to judge a folder's files; a folder holding more counts as private."""


def _tree_copy(top: Any, policy: Any) -> str | None:
    """Why a folder a command reads (``rg -r``, ``grep -r``, ``git grep``, ``find``) holds
    private text, judged by its files' own bytes as :func:`_copy_is_private` judges a named
    one -- an unindexed copy (``locker.txt``, ``locker.org.bak``, a ``.gz``) lies in no
    private note's path -- or None.  Symlinks are not followed (neither do ``rg`` and
    ``grep -r``; the ones that follow them ask first), nor is ``.git/objects`` read (zlib
    objects: no text for ``grep``; what git prints of them is judged by the history).
    Too many files or bytes to read count as private: unread is withheld."""
    import os
    import stat
    from pathlib import Path

    files = 0
    budget = TREE_BYTES_CAP
    stack = [os.fspath(top)]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            return f"{os.path.relpath(d, top)} could not be read to judge it"
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if e.name == "objects" and os.path.basename(d) == ".git":
                    continue  # zlib-packed objects, never text: git's reads are judged
                stack.append(e.path)  # by its history (``_history_private``)
            elif stat.S_ISREG(st.st_mode):
                files += 1
                budget -= st.st_size
                if files > TREE_FILES_CAP or budget < 0:
                    return "too many files to judge them all"
                if _copy_is_private(Path(e.path), policy):
                    return (f"it holds {os.path.relpath(e.path, top)}, whose own text is "
                            "tagged private")
    return None


# -- prompts to non-local models ---------------------------------------------------------------
@dataclass
class _Sources:
    """The memexes open in this process, each giving its prints for a remote model (None
    when its ``[guard] remote_ok`` is true).  The LLM gateway sits below the memex and is
    shared by whatever the process runs, so a prompt to a non-local model is checked
    against every open memex's private text."""

    refs: list[tuple[weakref.ref[Any], Callable[[Any], Prints | None]]] = field(
        default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_SOURCES = _Sources()


def register_remote_source(source: Any, prints_for_remote: Callable[[Any], Prints | None]
                           ) -> None:
    """Register ``source`` (weakly: a closed, dropped memex leaves): its prints count for
    every prompt to a non-local model while it lives."""
    with _SOURCES.lock:
        _SOURCES.refs = [(r, f) for r, f in _SOURCES.refs if r() is not None]
        if not any(r() is source for r, _ in _SOURCES.refs):
            _SOURCES.refs.append((weakref.ref(source), prints_for_remote))


def remote_prints() -> Prints | None:
    """The union of every live registered source's prints for a remote model."""
    with _SOURCES.lock:
        refs = list(_SOURCES.refs)
    parts: list[Prints] = []
    for ref, fn in refs:
        obj = ref()
        got = fn(obj) if obj is not None else None
        if got:
            parts.append(got)
    return Prints.union(parts) if parts else None
