"""Object lexer: finds links and timestamps inside one object container.

A port of ``org-element--object-lex`` (Org 9.5.5) reduced to what the index
needs.  Every object type is still *recognised*, because verbatim, code, LaTeX
fragments, macros, citations... hide the text they cover, and emphasis,
footnote references and sub/superscripts are walked into.  Work is linear in
the container size: closing markers and bracket pairs are indexed once per
container instead of being searched for at every candidate position.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import lru_cache

from .entities import ENTITY_NAMES
from .links import LinkSyntax, classify_bracket_target, file_parts, make_link, match_bracket_link
from .model import Link, Timestamp
from .timestamps import match_timestamp

__all__ = ["CELL", "NO_LINE_BREAK", "STANDARD", "ObjectLexer", "build_radio_regexp"]

_MINIMAL = frozenset(
    "bold code entity italic latex-fragment strike-through subscript superscript "
    "underline verbatim".split()
)
STANDARD = frozenset(
    "bold citation code entity export-snippet footnote-reference inline-babel-call "
    "inline-src-block italic line-break latex-fragment link macro radio-target "
    "statistics-cookie strike-through subscript superscript target timestamp "
    "underline verbatim".split()
)
NO_LINE_BREAK = STANDARD - {"line-break"}
CELL = _MINIMAL | frozenset(
    "citation export-snippet footnote-reference link macro radio-target target "
    "timestamp".split()
)

_WORDLESS = r"(?<![^\W_])(?<![$%'])"  # Emacs \< in org-mode's syntax table

_PRE = frozenset("-('\"{") | frozenset(" \t\n\r\f\v\u00a0")
_EMPH_MARKERS = "*/_+"
_VERB_MARKERS = "=~"
_POST_CLASS = r"[-\s.,:!?;'\")}\[]"
_BR = (
    r"[^{}]*?|(?:[^{}]*?\{[^{}]*?\})+[^{}]*?"
    r"|(?:[^{}]*?\{(?:[^{}]*?\{[^{}]*?\})+[^{}]*?\})+[^{}]*?"
)
_PR = (
    r"[^()]*?|(?:[^()]*?\([^()]*?\))+[^()]*?"
    r"|(?:[^()]*?\((?:[^()]*?\([^()]*?\))+[^()]*?\))+[^()]*?"
)
# org-match-substring-regexp: 1 char before, 2 marker, 3 script, 4 {contents}, 5 (contents)
_SUBSUP = re.compile(
    r"(\S)([_^])(\{(" + _BR + r")\}|\((" + _PR + r")\)|\*|[+-]?(?:[^\W_]|[.,\\])*[^\W_])"
)
_EXPORT_SNIPPET = re.compile(r"@@([-A-Za-z0-9]+):")
_MACRO = re.compile(r"\{\{\{([a-zA-Z][-a-zA-Z0-9_]*)(\(([^\x00]*?)\))?\}\}\}")
_LATEX_MACRO = re.compile(r"\\[a-zA-Z]+\*?(?:(?:\[[^\]\[\n{}]*\])|(?:\{[^{}\n]*\}))*")
_LATEX_AFTER_OK = frozenset("!#,.:;?@^`(<[{)>]}\"' \t\n\r\f\u00a0")
_ENTITY = re.compile(
    r"\\(?:(_ +)|(there4|sup[123]|frac[13][24]|[a-zA-Z]+)($|\{\}|[\W\d_]))", re.M
)
_FOOTNOTE = re.compile(r"\[fn:(?:([-_\w]+)?(:)|([-_\w]+)\])")
_STAT_COOKIE = re.compile(r"\[[0-9]*(?:%|/[0-9]*)\]")
_CITE = re.compile(r"\[cite(?:/[/_\-\w]+)?:[\t\n ]*")
_CITE_KEY = re.compile(r"@[\w\-.:?!`'/*@+|(){}<>&_^$#%~]+")
_BABEL_CALL = re.compile(_WORDLESS + r"call_([^ \t\n\[(]+)[(\[]")
_INLINE_SRC = re.compile(_WORDLESS + r"src_([^ \t\n\[{]+)[{\[]")
_TARGET = re.compile(r"<<([^<>\n \t]|[^<>\n \t][^<>\n]*[^<>\n \t])>>")
_RADIO_TARGET = re.compile(r"<<<([^<>\n \t]|[^<>\n \t][^<>\n]*[^<>\n \t])>>>")
_LINE_BREAK = re.compile(r"\\\\[ \t]*$", re.M)
# chars an object can start with (plus ":" and "+" found inside link types)
_CANDIDATE = re.compile(r"[_^*~=+/\[@{<$\\:]")
# the run before the next candidate (a negated class runs faster than a search)
_NON_CANDIDATES = re.compile(r"[^_^*~=+/\[@{<$\\:]*")
_MAX_TYPE_LEN = 12
# where each emphasis/verbatim marker may close (see ObjectLexer._closer_list):
# "(?<=\S)M(?=POST|$)" with the marker first, so the search skips to it at C speed
# (a leading look-behind is tried at every position)
_CLOSERS = {
    mk: re.compile(
        re.escape(mk) + r"(?<=\S" + re.escape(mk) + ")(?=" + _POST_CLASS + "|$)", re.M
    )
    for mk in _EMPH_MARKERS + _VERB_MARKERS
}
_CELL_RE = re.compile(r"[ \t]*(.*?)[ \t]*(?:\||$)", re.M)



def build_object_regexp(syntax: LinkSyntax) -> re.Pattern[str]:
    """``org-element--object-regexp`` (case-insensitive, like Emacs's default search)."""
    return _object_regexp(syntax.types)


@lru_cache(maxsize=16)
def _object_regexp(types: tuple[str, ...]) -> re.Pattern[str]:
    alt = "|".join(re.escape(t) for t in sorted(types, key=len, reverse=True))
    return re.compile(
        r"[_^][-{(*+.,\w]"
        r"|[*~=+_/]\S"
        rf"|{_WORDLESS}(?:{alt}):"
        r"|\[(?:cite[:/]|fn:|(?:[0-9]|(?:%|/[0-9]*)\])|\[)"
        r"|@@|\{\{\{"
        rf"|<(?:%%|<|[0-9]|(?:{alt}))"
        r"|\$"
        r"|\\(?:[a-zA-Z\[(]|\\[ \t]*$|_ +)"
        r"|(?:call|src)_",
        re.I | re.M,
    )


def build_radio_regexp(targets: list[str]) -> re.Pattern[str] | None:
    """``org-target-link-regexp`` for the radio targets of a document."""
    if not targets:
        return None
    alts = []
    for t in targets:
        alts.append(r"\s+".join(re.escape(p) for p in re.split(" +", t)))
    return re.compile(_RADIO_HEAD + "|".join(alts) + _RADIO_TAIL, re.I | re.M)


_RADIO_HEAD = r"(?:^|[\W_])("
_RADIO_TAIL = r")(?:$|[\W_])"


@lru_cache(maxsize=16)
def _radio_words(radio: re.Pattern[str]) -> re.Pattern[str]:
    """The targets alone of a :func:`build_radio_regexp` pattern: a radio link in a
    text needs one of them there, whatever surrounds it."""
    pat = radio.pattern
    if not (pat.startswith(_RADIO_HEAD) and pat.endswith(_RADIO_TAIL)):
        raise ValueError("not a build_radio_regexp pattern")
    return re.compile(pat[len(_RADIO_HEAD) : -len(_RADIO_TAIL)], re.I)


@lru_cache(maxsize=16)
def _type_colon_regexp(types: tuple[str, ...]) -> re.Pattern[str]:
    """A ``type:`` of a link type, found from its colon (a fast literal scan) and looked
    behind; the look-behind may see before the search start, which only adds candidates."""
    behind = "|".join(f"(?<={re.escape(t)}:)" for t in sorted({t.lower() for t in types}))
    return re.compile(rf":(?:{behind})", re.I)


_BRACKET_TRIGGER = re.compile(r"\[[\[\d]")


class _Frame:
    """One narrowed region being lexed (a container, or an object's contents)."""

    __slots__ = ("allowed", "base", "closers", "pairs", "pos", "radio_m", "radio_q", "s")

    def __init__(self, s: str, base: int, allowed: frozenset[str]) -> None:
        self.s = s
        self.base = base
        self.allowed = allowed
        self.pos = 0
        self.closers: dict[str, list[int]] = {}
        self.pairs: dict[str, dict[int, int]] = {}
        # the last radio search: from radio_q it found radio_m (see _radio_limit)
        self.radio_q = len(s) + 1
        self.radio_m: re.Match[str] | None = None


# A parse result: (end, contents_begin, contents_end, contents_allowed)
_Hit = tuple[int, int, int, frozenset[str] | None]


@lru_cache(maxsize=16)
def _type_before_regexp(types: tuple[str, ...]) -> re.Pattern[str] | None:
    """The longest link type right before the match position, as a group.

    For ASCII types re.I folds a superset of what lower() does, so a miss is
    final and a hit is checked with lower(); None for other types.
    """
    if not all(t.isascii() for t in types):
        return None
    return re.compile(
        "|".join(f"(?<=({re.escape(t)}))" for t in sorted(types, key=len, reverse=True)), re.I
    )


@lru_cache(maxsize=16)
def _lower_types(types: tuple[str, ...]) -> frozenset[str]:
    return frozenset(t.lower() for t in types)


class ObjectLexer:
    """Lexes object containers of one document (shared link syntax and radio targets)."""

    def __init__(
        self,
        syntax: LinkSyntax,
        abbrevs: dict[str, str] | None = None,
        radio: re.Pattern[str] | None = None,
    ) -> None:
        self.syntax = syntax
        self.abbrevs = abbrevs or {}
        self.radio = radio
        self._radio_words = _radio_words(radio).search if radio is not None else None
        self.object_re = _object_regexp(syntax.types)
        self._type_colon = _type_colon_regexp(syntax.types).search
        self._types = _lower_types(syntax.types)
        tb = _type_before_regexp(syntax.types)
        self._type_before = tb.match if tb is not None else None
        self.links: list[Link] = []
        self.stamps: list[Timestamp] = []
        self.radio_targets: list[str] = []

    # ------------------------------------------------------------------ driver

    def may_hold(self, text: str, beg: int, end: int) -> bool:
        """Cheap test (C-speed scans): can ``text[beg:end]`` hold a link or timestamp?

        With radio targets, a radio link needs a target's words in the span.
        """
        if text.find("<", beg, end) != -1:
            return True
        i = text.find("[", beg, end)
        if i != -1 and _BRACKET_TRIGGER.search(text, i, end) is not None:
            return True
        i = text.find(":", beg, end)
        if i != -1 and self._type_colon(text, i, end) is not None:
            return True
        # (last: a regexp scan of every character)
        return self._radio_words is not None and self._radio_words(text, beg, end) is not None

    def lex_row(self, text: str, beg: int, end: int) -> None:
        """A table row (text after its first ``|``): each cell with the cell restriction."""
        if not self.may_hold(text, beg, end):
            return
        for m in _CELL_RE.finditer(text, beg, end):
            if m.end() == m.start() and m.start() >= end:
                break
            self.lex(text, m.start(1), m.end(1), CELL)

    def lex(self, text: str, beg: int, end: int, allowed: frozenset[str]) -> None:
        """Collect links/timestamps of ``text[beg:end]`` into ``self.links``/``self.stamps``."""
        if beg >= end:
            return
        if not self.may_hold(text, beg, end):
            return
        self.lex_held(text, beg, end, allowed)

    def lex_held(self, text: str, beg: int, end: int, allowed: frozenset[str]) -> None:
        """:meth:`lex` when ``beg < end`` and :meth:`may_hold` are known to be true."""
        s = text[beg:end]
        pos = 0
        if self.radio is None and "link" in allowed:
            pos = self._leading_links(s, beg)
            if pos < 0:
                return
        fr = _Frame(s, beg, allowed)
        fr.pos = pos
        stack = [fr]
        while stack:
            fr = stack[-1]
            hit = self._next_object(fr)
            if hit is None:
                stack.pop()
                continue
            end_, cb, ce, inner = hit
            fr.pos = max(end_, fr.pos + 1)  # always progress, even on odd matches
            if inner is not None and cb < ce:
                stack.append(_Frame(fr.s[cb:ce], fr.base + cb, inner))

    def _leading_links(self, s: str, base: int) -> int:
        """Fast path of the loop in :meth:`lex` while the next objects are links.

        Takes the links the general loop would take one after the other -- the
        leftmost object candidate is ``[[`` or a ``type:`` colon and the link
        parses -- and returns where anything else begins (-1: nothing left), so
        the general loop goes on from there exactly as if it had got there.
        Needs no radio targets and links allowed.
        """
        n = len(s)
        skip = _NON_CANDIDATES.match
        links = self.links
        syntax = self.syntax
        pos = 0
        while True:
            i = skip(s, pos).end()  # type: ignore[union-attr]  # always matches
            if i >= n:
                return -1
            ch = s[i]
            if ch == "[":  # what _bracket and _link do for "[["
                if s[i + 1 : i + 2] != "[":
                    return pos
                got = match_bracket_link(s, i)
                if got is None:
                    return pos
                end, raw, desc = got
                typ, path, search, _ = classify_bracket_target(raw, syntax, self.abbrevs)
                links.append(Link(typ, path, s[i:end], desc, "bracket", search, base + i))
            elif ch == ":":
                # what _link does for a plain link; its regexp has the look-behinds and
                # "type:" of object_re's alternative, so object_re matches there too
                back = self._letter_start(s, i, ch, pos)
                if back is None:
                    return pos
                got3 = syntax.match_plain(s, back)
                if got3 is None:
                    return pos
                end, typ, path = got3
                typ, path, search = file_parts(typ, path)
                links.append(Link(typ, path, s[back:end], None, "plain", search, base + back))
            else:
                return pos
            pos = end

    def _next_object(self, fr: _Frame) -> _Hit | None:
        s, pos = fr.s, fr.pos
        n = len(s)
        if pos >= n:
            return None
        limit, radio_hit = n, False
        if self.radio is not None and "link" in fr.allowed:
            limit, radio_hit = self._radio_limit(fr, pos)
        while pos < limit:
            found = self._find(s, pos, limit)
            if found is None:
                break
            p, res = found
            hit = self._try(fr, p, res)
            if hit is not None:
                return hit
            pos = p + 1
        if radio_hit:
            return self._radio_link(fr, limit - 1)
        return None

    def _find(self, s: str, pos: int, limit: int) -> tuple[int, str] | None:
        """Leftmost match of org-element--object-regexp in ``s[pos:limit]``.

        Scans for the few characters an object can start with (fast), then
        confirms with the full regexp anchored there.  Plain-link types and
        ``call_``/``src_`` start with letters, so they are found from the ``:``
        / ``+`` / ``_`` they contain and moved back to their real start.
        """
        skip = _NON_CANDIDATES.match
        match = self.object_re.match
        while True:
            i = skip(s, pos, limit).end()  # type: ignore[union-attr]  # always matches
            if i >= limit:
                return None
            ch = s[i]
            back = self._letter_start(s, i, ch, pos)
            if back is not None:
                m = match(s, back, limit)
                if m is not None:
                    return back, m.group(0)
            if ch != ":":
                m = match(s, i, limit)
                if m is not None:
                    return i, m.group(0)
            pos = i + 1

    def _letter_start(self, s: str, i: int, ch: str, pos: int) -> int | None:
        """Start of a ``type:``, ``file+x:``, ``call_`` or ``src_`` match around ``i``."""
        if ch == ":":
            # A regexp finds the leftmost type ending here, case-folded like Emacs;
            # when lower() agrees (always, but for odd Unicode), that is the answer.
            if self._type_before is not None:
                m = self._type_before(s, i)
                if m is None:
                    return None
                j = m.start(m.lastindex or 0)
                if j >= pos and i - j <= _MAX_TYPE_LEN and s[j:i].lower() in self._types:
                    return j
            best = None
            j = i - 1
            while j >= pos and i - j <= _MAX_TYPE_LEN and (s[j].isalnum() or s[j] == "+"):
                if s[j:i].lower() in self._types:
                    best = j  # keep the leftmost (longest) type, as the regexp would
                j -= 1
            return best
        if ch == "+":
            if i - 4 >= pos and s[i - 4 : i].lower() == "file":
                return i - 4
            return None
        if ch == "_":
            if i - 4 >= pos and s[i - 4 : i].lower() == "call":
                return i - 4
            if i - 3 >= pos and s[i - 3 : i].lower() == "src":
                return i - 3
        return None

    def _radio_limit(self, fr: _Frame, start: int) -> tuple[int, bool]:
        """Where the next radio link starts (+1), as object-lex bounds its search.

        The frame keeps its last search: from any ``q`` between that search's start
        and its match's start, the leftmost match is the same one (the pattern's
        ``^`` and classes do not depend on where a search starts), so a long run of
        objects before a far radio link costs one search, not one per object.
        """
        assert self.radio is not None
        s = fr.s
        q = start if start == 0 or s[start - 1] == "\n" else start - 1
        m = fr.radio_m
        if not (fr.radio_q <= q and (m is None or q <= m.start())):
            m = self.radio.search(s, q)
            fr.radio_q, fr.radio_m = q, m
        if m is None:
            return len(s), False
        bol = s.rfind("\n", 0, start) + 1
        if start == bol + 1 and start == m.end(1):
            m2 = self.radio.search(s, m.end())
            return (m2.start(1) + 1, True) if m2 else (len(s), False)
        return m.start(1) + 1, True

    def _radio_link(self, fr: _Frame, p: int) -> _Hit | None:
        assert self.radio is not None
        s = fr.s
        q = p if p == 0 or s[p - 1] == "\n" else p - 1
        m = self.radio.match(s, q)
        if m is None:
            return None
        path = m.group(1)
        self.links.append(make_link("radio", path, path, fr.base + m.start(1), "plain"))
        return m.end(1), 0, 0, None

    def _try(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        low = res[:5].lower()
        if low.startswith("call_"):
            return self._babel_call(fr, p) if "inline-babel-call" in fr.allowed else None
        if low.startswith("src_"):
            return self._inline_src(fr, p) if "inline-src-block" in fr.allowed else None
        fn = _DISPATCH.get(fr.s[p])
        if fn is None:
            return self._link(fr, p) if "link" in fr.allowed else None
        return fn(self, fr, p, res)

    # ------------------------------------------------------------ helpers

    def _closer_list(self, fr: _Frame, marker: str) -> list[int]:
        """Positions where ``marker`` may close an emphasis: non-space before, post char after."""
        got = fr.closers.get(marker)
        if got is None:
            got = [m.start() for m in _CLOSERS[marker].finditer(fr.s)]
            fr.closers[marker] = got
        return got

    def _pair_map(self, fr: _Frame, open_: str) -> dict[int, int]:
        """Matching close position for each ``open_`` bracket (scan-lists on one pair)."""
        got = fr.pairs.get(open_)
        if got is None:
            close = {"[": "]", "(": ")", "{": "}"}[open_]
            got = {}
            stack: list[int] = []
            s = fr.s
            for i, ch in enumerate(s):
                if ch == open_:
                    stack.append(i)
                elif ch == close:
                    if stack:
                        got[stack.pop()] = i
                    else:
                        # scan-lists from an earlier opener stops at an unbalanced close
                        stack.clear()
            fr.pairs[open_] = got
        return got

    def _emphasis_at(self, fr: _Frame, p: int, markers: str) -> tuple[int, int, int] | None:
        """org-emph-re / org-verbatim-re at ``p``: (end, contents_begin, contents_end)."""
        s = fr.s
        if p > 0 and s[p - 1] != "\n":
            q = p - 1
            if s[q] in _PRE:
                m0 = p
            elif q == 0 or s[q - 1] == "\n":
                m0 = q
            else:
                return None
        else:
            m0 = p
        marker = s[m0]
        if marker not in markers:
            return None
        first = m0 + 1
        if first >= len(s) or s[first].isspace():
            return None
        closers = self._closer_list(fr, marker)
        k = bisect.bisect_left(closers, m0 + 2)
        if k >= len(closers):
            return None
        c = closers[k]
        nl = s.find("\n", first, c)
        if nl != -1 and s.find("\n", nl + 1, c) != -1:
            return None
        return c + 1, first, c

    # ------------------------------------------------------------ parsers

    def _emph(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        kind = {"*": "bold", "/": "italic", "+": "strike-through", "_": "underline"}[fr.s[p]]
        if kind not in fr.allowed:
            return None
        got = self._emphasis_at(fr, p, _EMPH_MARKERS)
        if got is None:
            return None
        return got[0], got[1], got[2], STANDARD

    def _verbatim(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        kind = "code" if fr.s[p] == "~" else "verbatim"
        if kind not in fr.allowed:
            return None
        got = self._emphasis_at(fr, p, _VERB_MARKERS)
        if got is None:
            return None
        return got[0], 0, 0, None

    def _script(self, fr: _Frame, p: int) -> _Hit | None:
        s = fr.s
        q = p if p == 0 or s[p - 1] == "\n" else p - 1
        m = _SUBSUP.match(s, q)
        if m is None:
            return None
        if m.group(4) is not None:
            cb, ce = m.start(4), m.end(4)
        else:
            cb, ce = m.start(3), m.end(3)
        return m.end(), cb, ce, STANDARD

    def _superscript(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        return self._script(fr, p) if "superscript" in fr.allowed else None

    def _underscore(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        if "subscript" in fr.allowed:
            hit = self._script(fr, p)
            if hit is not None:
                return hit
        if "underline" in fr.allowed:
            return self._emph(fr, p, res)
        return None

    def _export_snippet(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        if "export-snippet" not in fr.allowed:
            return None
        m = _EXPORT_SNIPPET.match(fr.s, p)
        if m is None:
            return None
        close = fr.s.find("@@", m.end())
        if close == -1:
            return None
        return close + 2, 0, 0, None

    def _macro(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        if "macro" not in fr.allowed:
            return None
        m = _MACRO.match(fr.s, p)
        return (m.end(), 0, 0, None) if m else None

    def _latex(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        if "latex-fragment" not in fr.allowed:
            return None
        s = fr.s
        n = len(s)
        if s[p] != "$":
            nxt = s[p + 1] if p + 1 < n else ""
            if nxt == "(":
                i = s.find("\\)", p)
                return (i + 2, 0, 0, None) if i != -1 else None
            if nxt == "[":
                i = s.find("\\]", p)
                return (i + 2, 0, 0, None) if i != -1 else None
            m = _LATEX_MACRO.match(s, p)
            return (m.end(), 0, 0, None) if m else None
        if p + 1 < n and s[p + 1] == "$":
            i = s.find("$$", p + 2)
            return (i + 2, 0, 0, None) if i != -1 else None
        if p > 0 and s[p - 1] == "$":
            return None
        if p + 1 >= n or s[p + 1] in " \t\n,.;":
            return None
        i = s.find("$", p + 1)
        if i == -1 or s[i - 1] in " \t\n,.":
            return None
        after = s[i + 1] if i + 1 < n else ""
        if after and after not in _LATEX_AFTER_OK and (after.isascii() or after.isalnum()):
            return None
        return i + 1, 0, 0, None

    def _angle(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        s, allowed = fr.s, fr.allowed
        if len(res) > 1 and res[1] == "<":
            if "radio-target" in allowed:
                m = _RADIO_TARGET.match(s, p)
                if m:
                    self.radio_targets.append(m.group(1))
                    return m.end(), 0, 0, None
            if "target" in allowed:
                m = _TARGET.match(s, p)
                if m:
                    return m.end(), 0, 0, None
            return None
        if "timestamp" in allowed:
            hit = self._timestamp(fr, p)
            if hit is not None:
                return hit
        return self._link(fr, p) if "link" in allowed else None

    def _timestamp(self, fr: _Frame, p: int) -> _Hit | None:
        got = match_timestamp(fr.s, p)
        if got is None:
            return None
        end, ts = got
        if ts is not None:
            self.stamps.append(ts)
        return end, 0, 0, None

    def _backslash(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        s, allowed = fr.s, fr.allowed
        if len(res) > 1 and res[1] == "\\":
            if "line-break" in allowed and (p == 0 or s[p - 1] != "\\"):
                m = _LINE_BREAK.match(s, p)
                if m:
                    nl = s.find("\n", p)
                    return (nl + 1 if nl != -1 else len(s)), 0, 0, None
            return None
        if "entity" in allowed:
            m = _ENTITY.match(s, p)
            if m:
                if m.group(1) is not None:
                    ok = len(m.group(1)) <= 20
                    end = m.end(1)
                else:
                    ok = m.group(2) in ENTITY_NAMES
                    end = m.end(2) + (2 if m.group(3) == "{}" else 0)
                if ok:
                    return end, 0, 0, None
        return self._latex(fr, p, res)

    def _bracket(self, fr: _Frame, p: int, res: str) -> _Hit | None:
        allowed = fr.allowed
        c = res[1] if len(res) > 1 else ""
        if c == "[" and "link" in allowed:
            return self._link(fr, p)
        if c in "fF" and "footnote-reference" in allowed:
            return self._footnote(fr, p)
        if c in "cC" and "citation" in allowed:
            return self._citation(fr, p)
        if c in "%/" and "statistics-cookie" in allowed:
            m = _STAT_COOKIE.match(fr.s, p)
            return (m.end(), 0, 0, None) if m else None
        if c in "[fFcC%/":
            return None
        if "timestamp" in allowed:
            hit = self._timestamp(fr, p)
            if hit is not None:
                return hit
        if "statistics-cookie" in allowed:
            m = _STAT_COOKIE.match(fr.s, p)
            return (m.end(), 0, 0, None) if m else None
        return None

    def _footnote(self, fr: _Frame, p: int) -> _Hit | None:
        m = _FOOTNOTE.match(fr.s, p)
        if m is None:
            return None
        close = self._pair_map(fr, "[").get(p)
        if close is None:
            return None
        if m.group(2) is not None:
            return close + 1, m.end(), close, STANDARD
        return close + 1, 0, 0, None

    def _citation(self, fr: _Frame, p: int) -> _Hit | None:
        m = _CITE.match(fr.s, p)
        if m is None:
            return None
        close = self._pair_map(fr, "[").get(p)
        if close is None or not _CITE_KEY.search(fr.s, m.end(), close):
            return None
        return close + 1, 0, 0, None

    def _paired(self, fr: _Frame, i: int, open_: str) -> int | None:
        """End (after the closer) of the bracket group opening at ``i``, if any."""
        if i >= len(fr.s) or fr.s[i] != open_:
            return None
        close = self._pair_map(fr, open_).get(i)
        return None if close is None else close + 1

    def _babel_call(self, fr: _Frame, p: int) -> _Hit | None:
        m = _BABEL_CALL.match(fr.s, p)
        if m is None:
            return None
        i = m.end(1)
        j = self._paired(fr, i, "[")
        if j is not None:
            i = j
        j = self._paired(fr, i, "(")
        if j is None:
            return None
        i = j
        j = self._paired(fr, i, "[")
        return (j if j is not None else i), 0, 0, None

    def _inline_src(self, fr: _Frame, p: int) -> _Hit | None:
        m = _INLINE_SRC.match(fr.s, p)
        if m is None:
            return None
        i = m.end(1)
        j = self._paired(fr, i, "[")
        if j is not None:
            i = j
        j = self._paired(fr, i, "{")
        if j is None:
            return None
        return j, 0, 0, None

    def _link(self, fr: _Frame, p: int) -> _Hit | None:
        s = fr.s
        if self.radio is not None:
            q = p if p == 0 or s[p - 1] == "\n" else p - 1
            m = self.radio.match(s, q)
            if m is not None:
                path = m.group(1)
                self.links.append(make_link("radio", path, path, fr.base + m.start(1), "plain"))
                return m.end(1), 0, 0, None
        if s.startswith("[[", p):
            got = match_bracket_link(s, p)
            if got is None:
                return None
            end, raw, desc = got
            typ, path, search, _ = classify_bracket_target(raw, self.syntax, self.abbrevs)
            self.links.append(make_link(typ, path, s[p:end], fr.base + p, "bracket", desc, search))
            return end, 0, 0, None
        if s[p] == "<":
            got2 = self.syntax.match_angle(s, p)
            if got2 is None:
                return None
            end, typ, path, _raw = got2
            typ, path, search = file_parts(typ, path)
            self.links.append(make_link(typ, path, s[p:end], fr.base + p, "angle", None, search))
            return end, 0, 0, None
        got3 = self.syntax.match_plain(s, p)
        if got3 is None:
            return None
        end, typ, path = got3
        typ, path, search = file_parts(typ, path)
        self.links.append(make_link(typ, path, s[p:end], fr.base + p, "plain", None, search))
        return end, 0, 0, None


# parser by first character (plain functions: no bound methods to make per lexer)
_DISPATCH: dict[str, Callable[[ObjectLexer, _Frame, int, str], _Hit | None]] = {
    "^": ObjectLexer._superscript, "_": ObjectLexer._underscore, "*": ObjectLexer._emph,
    "/": ObjectLexer._emph, "+": ObjectLexer._emph, "~": ObjectLexer._verbatim,
    "=": ObjectLexer._verbatim, "@": ObjectLexer._export_snippet, "{": ObjectLexer._macro,
    "$": ObjectLexer._latex, "<": ObjectLexer._angle, "\\": ObjectLexer._backslash,
    "[": ObjectLexer._bracket,
}
