"""Link syntax: types, the plain/angle/bracket forms, and target classification.

Mirrors ``org-element-link-parser`` of Org 9.5.5 so that the index sees the same
links Emacs does.  Which *positions* may hold a link (not in verbatim, blocks...)
is decided by :mod:`opencortex.org.objects` and :mod:`opencortex.org.elements`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from .model import Link

__all__ = [
    "DEFAULT_LINK_TYPES",
    "LinkSyntax",
    "classify_bracket_target",
    "expand_abbrev",
    "match_bracket_link",
    "unescape",
]

# Link types registered in `emacs -Q` with Org 9.5.5 after org-mode has loaded its
# default modules, plus org-id.  Plain links exist only for these.
DEFAULT_LINK_TYPES: tuple[str, ...] = (
    "bbdb", "bibtex", "docview", "doi", "elisp", "eww", "file", "file+emacs",
    "file+sys", "ftp", "gnus", "help", "http", "https", "id", "info", "irc",
    "mailto", "mhe", "news", "rmail", "shell", "w3m",
)

_NB = r"[^\]\[ \t\n()<>]"  # a plain-link path char outside parentheses
_PAREN = rf"\((?:{_NB}|\({_NB}*\))*\)"
_PAREN_RE = re.compile(_PAREN)
_NL_TRIM = re.compile(r"[ \t]*\n[ \t]*")
_UNESCAPE = re.compile(r"(\\+)(?=\Z|[\[\]])")
_ABBREV_SPLIT = re.compile(r"([^:]*)(::?(.*))?\Z", re.S)
_FILE_TYPE = re.compile(r"\Afile(?:\+(.+))?\Z", re.I)
_FILE_SEARCH = re.compile(r"::(.*)\Z")
_FILE_SLASHES = re.compile(r"\A///*(.:)?/")
# a bracket link target without backslashes, closed by "]" (the common case)
_BRACKET_PLAIN = re.compile(r"\[\[([^\]\[\\]+)\]")


def _punct_ok_end(ch: str) -> bool:
    """Emacs ``[^[:punct:] \\t\\n]``: the last char of a plain link."""
    if ch in " \t\n":
        return False
    if ch.isascii():
        return ch.isalnum() or not (33 <= ord(ch) <= 126)
    return ch.isalnum()


@dataclass(frozen=True, slots=True)
class LinkSyntax:
    """Regexps that depend on the registered link types (and radio targets)."""

    types: tuple[str, ...]
    plain: re.Pattern[str]
    angle: re.Pattern[str]
    type_prefix: re.Pattern[str]
    lower_types: frozenset[str] = frozenset()
    """The ASCII types, lower-cased (where lower() and re.I agree)."""

    @classmethod
    def build(cls, types: tuple[str, ...] = DEFAULT_LINK_TYPES) -> LinkSyntax:
        alt = "|".join(re.escape(t) for t in sorted(types, key=len, reverse=True))
        # org-link-plain-re minus its final char class, which Python cannot
        # express for non-ASCII punctuation; checked by match_plain instead.
        # ({_NB}+ matches the same as {_NB} repeated, in runs: nothing follows
        # the group, so there is never anything to backtrack for.)
        plain = re.compile(
            rf"(?<![^\W_])(?<![$%'])({alt}):((?:{_NB}+|{_PAREN})+)", re.I
        )
        angle = re.compile(rf"<({alt}):([^>\n]*(?:\n[ \t]*[^> \t\n][^>\n]*)*)>", re.I)
        prefix = re.compile(rf"\A({alt}):", re.I)
        lower = frozenset(t.lower() for t in types if t.isascii() and ":" not in t)
        return cls(tuple(types), plain, angle, prefix, lower)

    def match_plain(self, s: str, pos: int) -> tuple[int, str, str] | None:
        """(end, type, path) of a plain link at ``pos``, or None.

        The path is a run of tokens (a char, or a parenthesised group) whose
        last token must be a non-punctuation char, ``/`` or a group, with at
        least one token before it -- exactly what the Emacs regexp backtracks to.
        """
        m = self.plain.match(s, pos)
        if not m:
            return None
        path = m.group(2)
        if "(" not in path:  # every token is one char: the last one that may end it
            for k in range(len(path) - 1, 0, -1):
                ch = path[k]
                if ch == "/" or _punct_ok_end(ch):
                    return m.start(2) + k + 1, m.group(1), path[: k + 1]
            return None
        ends: list[tuple[int, bool]] = []  # (token end, may end the link)
        i, n = 0, len(path)
        while i < n:
            if path[i] == "(":
                g = _PAREN_RE.match(path, i)
                if g is None:  # cannot happen: the regexp matched these tokens
                    break
                i = g.end()
                ends.append((i, True))
            else:
                ch = path[i]
                i += 1
                ends.append((i, ch == "/" or _punct_ok_end(ch)))
        for k in range(len(ends) - 1, 0, -1):
            if ends[k][1]:
                cut = ends[k][0]
                return m.start(2) + cut, m.group(1), path[:cut]
        return None

    def match_angle(self, s: str, pos: int) -> tuple[int, str, str, str] | None:
        """(end, type, path, raw) of an angle link at ``pos``, or None."""
        m = self.angle.match(s, pos)
        if not m:
            return None
        raw = s[m.start(1) : m.end(2)]
        return m.end(), m.group(1), _NL_TRIM.sub("", m.group(2)), raw


_last_close: tuple[str, int, int] = ("", 0, -1)


def _close_after(s: str, start: int) -> int:
    """``s.find("]]", start)``, remembering the last answer for the same text: a run of
    ``[[a][`` with no ``]]`` after it asks once per link, and each search to the end of a
    long text made the object parser quadratic.  The answer for ``start`` is known when
    the last search began at or before it and found nothing, or found ``]]`` at or after
    it.  One tuple, replaced whole: safe across threads."""
    global _last_close
    text, since, found = _last_close
    if text is s and since <= start and (found == -1 or start <= found):
        return found
    found = s.find("]]", start)
    _last_close = (s, start, found)
    return found


def match_bracket_link(s: str, pos: int) -> tuple[int, str, str | None] | None:
    """Match ``org-link-bracket-re`` at ``pos``: (end, raw path, description).

    A hand-written scanner: the Emacs regexp backtracks exponentially on runs of
    backslashes, and we want linear time on hostile input.
    """
    n = len(s)
    m = _BRACKET_PLAIN.match(s, pos)
    if m is not None:  # the scan below would stop at the same "]"
        i = m.end() - 1
        path = m.group(1)
        i += 1
        if i < n and s[i] == "[":
            close = _close_after(s, i + 2)
            if close != -1:
                return close + 2, path, s[i + 1 : close]
            return None
        if i < n and s[i] == "]":
            return i + 1, path, None
        return None
    if not s.startswith("[[", pos):
        return None
    i = pos + 2
    while i < n:
        c = s[i]
        if c == "]" or c == "[":
            break
        if c == "\\":
            j = i
            while j < n and s[j] == "\\":
                j += 1
            if j < n and s[j] in "[]" and (j - i) % 2 == 1:
                i = j + 1
                continue
            i = j
            continue
        i += 1
    if i == pos + 2 or i >= n or s[i] != "]":
        return None
    path = s[pos + 2 : i]
    i += 1
    if i < n and s[i] == "[":
        close = _close_after(s, i + 2)
        if close != -1:
            return close + 2, path, s[i + 1 : close]
        return None
    if i < n and s[i] == "]":
        return i + 1, path, None
    return None


def unescape(link: str) -> str:
    """``org-link-unescape``: halve backslash runs before brackets or the end."""
    if "\\" not in link:
        return link
    return _UNESCAPE.sub(lambda m: "\\" * (len(m.group(1)) // 2), link)


def expand_abbrev(link: str, abbrevs: dict[str, str]) -> str:
    """``org-link-expand-abbrev`` for ``#+LINK:`` definitions (%s and %h forms)."""
    if not abbrevs:
        return link
    m = _ABBREV_SPLIT.match(link)
    if not m:
        return link
    key = m.group(1)
    rpl = abbrevs.get(key)
    if rpl is None:
        return link
    tag = m.group(3) if m.group(2) is not None else None
    if "%(" in rpl and re.search(r"%\(([^)]+)\)", rpl):
        return link  # function abbreviations are unsafe in Org too
    if "%s" in rpl:
        return rpl.replace("%s", tag or "", 1)
    if "%h" in rpl:
        from urllib.parse import quote

        return rpl.replace("%h", quote(tag or "", safe=""), 1)
    return rpl + (tag or "")


def _is_absolute(raw: str) -> bool:
    """``file-name-absolute-p`` on POSIX: ``/...``, ``~`` and ``~/...`` (and ``~user``)."""
    if raw.startswith("/"):
        return True
    if raw.startswith("~"):
        user = raw[1:].split("/", 1)[0]
        if not user:
            return True
        try:
            import pwd

            pwd.getpwnam(user)
            return True
        except (KeyError, ImportError):
            return False
    return False


def classify_bracket_target(
    raw: str, syntax: LinkSyntax, abbrevs: dict[str, str]
) -> tuple[str, str, str | None, str]:
    """(type, path, search, raw_link) of a bracket link target, as Org decides."""
    if "\n" in raw:
        raw = _NL_TRIM.sub(" ", raw)
    raw_link = unescape(raw) if "\\" in raw else raw
    if abbrevs:
        raw_link = expand_abbrev(raw_link, abbrevs)
    c0 = raw_link[:1]
    if (c0 in ("/", "~") and _is_absolute(raw_link)) or raw_link.startswith(("./", "../")):
        typ, path = "file", raw_link
    elif (colon := raw_link.find(":")) > 0 and raw_link[:colon].lower() in syntax.lower_types:
        # what type_prefix finds: types hold no colon, and re.I folds what lower() does
        typ, path = raw_link[:colon], raw_link[colon + 1 :]
    elif m := syntax.type_prefix.match(raw_link):
        typ, path = m.group(1), raw_link[m.end() :]
    elif raw_link.startswith("(") and raw_link.endswith(")"):
        typ, path = "coderef", raw_link[1:-1]
    elif raw_link.startswith("#"):
        typ, path = "custom-id", raw_link[1:]
    else:
        typ, path = "fuzzy", raw_link
    if typ[:1] not in ("f", "F"):  # file_parts would leave it alone
        return typ, path, None, raw_link
    typ, path, search = file_parts(typ, path)
    return typ, path, search, raw_link


def file_parts(typ: str, path: str) -> tuple[str, str, str | None]:
    """Split ``::search`` off file links and normalise ``file+app`` to ``file``."""
    if typ[:1] not in ("f", "F") or not _FILE_TYPE.match(typ):
        return typ, path, None
    search = None
    if m := _FILE_SEARCH.search(path):
        search = m.group(1)
        path = path[: m.start()]
    path = _FILE_SLASHES.sub(lambda m: (m.group(1) or "") + "/", path, count=1)
    return "file", path, search


def make_link(
    typ: str, path: str, raw: str, offset: int, fmt: str,
    description: str | None = None, search: str | None = None,
) -> Link:
    """Build a :class:`Link` (kept here so every form shares one constructor)."""
    return Link(typ, path, raw, description, fmt, search, offset)


# make_link passes Link's fields positionally (much cheaper than by keyword)
if tuple(f.name for f in fields(Link)) != (
    "type", "path", "raw", "description", "format", "search", "offset"
):
    raise ImportError("opencortex.org.model.Link fields changed: update make_link")
