"""Make untrusted text safe to write into an Org file: it stays text, never structure.

Every write of text that OpenCortex did not author itself (a model's answer, a client's
capture, a transcript turn, a web page) goes through :func:`neutralise_body` (multi-line
text under a headline) or :func:`neutralise_title` (one headline's title).

The rule is an allow-list: a body line passes unchanged only when it cannot be read as
anything but paragraph text, a list item, a table row or a ``#`` comment; a balanced
``#+begin_src|example|quote|verse|center`` … ``#+end_…`` pair passes (src/example content
comma-escaped exactly as Org does, ``org-escape-code-in-string``).  Everything else that Org
reads at a line start -- headlines, every ``#+KEYWORD:`` (``#+TODO``, ``#+SETUPFILE``,
``#+STARTUP``, ``#+PROPERTY``, ``#+INCLUDE``, ``#+BIND``, ``#+CALL``, dynamic blocks,
affiliated keywords…), unbalanced or other blocks, drawers (``:PROPERTIES:``, ``:END:``),
planning and ``CLOCK:`` lines, diary sexps, footnote definitions -- gets a leading comma,
Org's own escape: Emacs shows the line as written, as plain text.

Before that, every line ending Emacs or Python might honour (``\\r\\n``, a lone ``\\r``,
U+0085, U+2028, U+2029, VT, FF, FS/GS/RS) becomes ``\\n``, and other control characters
(NUL…) become U+FFFD, so the lines checked are the lines Emacs will see.  The functions are
idempotent: neutralising neutral text changes nothing.
"""

from __future__ import annotations

import re

from ..textscan import next_of

__all__ = [
    "defuse_agenda",
    "escape_block_content",
    "neutralise_body",
    "neutralise_title",
    "neutralise_value",
    "normalise_lines",
    "restore_agenda",
    "unescape_block_content",
    "whole_links",
]

_BREAKS = re.compile(r"\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x7f\ufeff\ud800-\udfff]")
_INDENT = re.compile(r"[^\S\n]*")
# what may follow the indentation of a line only if escaped (case-insensitive: Org folds
# case for planning and clock words; ``re.I`` also folds ``ſ`` and the Kelvin sign)
_STRUCTURAL = re.compile(
    r"""(?:\#\+                                   # keyword, block, affiliated, call, dynamic
         | :[\w-]*:(?:\s|$)                       # drawer start/end, node property
         | (?:SCHEDULED|DEADLINE|CLOSED|CLOCK):   # planning, clock line
         | &?%%\(                                 # diary sexp, also &%%( (the agenda
                                                  # evaluates ^&?%%( lines)
         )""", re.I | re.X)
_HEADLINE = re.compile(r"\*+(?:\s|$)")
_FOOTNOTE_DEF = re.compile(r"\[fn:", re.I)
_BEGIN = re.compile(r"#\+begin_(\S+)(.*)$", re.I)
_BLOCKS = frozenset({"src", "example", "quote", "verse", "center"})
_VERBATIM = frozenset({"src", "example"})
_LANG = re.compile(r"[A-Za-z0-9_+.-]{1,40}")
# inline: sexp timestamps run elisp in the agenda; Emacs file-local variables
_SEXP_TS = re.compile(r"([<\[])%%\(")
_LOCAL_VARS = re.compile(r"(Local Variables)(:)", re.I)
# links: only these types stay links (the registered types that run code when followed,
# elisp: and shell:, are outside it); a radio target would turn words file-wide into links
LINK_TYPES = frozenset({"http", "https", "ftp", "mailto", "file", "id", "doi", "attachment",
                        "news", "info", "man", "irc", "roam", "denote", "help"})
_BRACKET_TYPE = re.compile(r"\[\[([A-Za-z][\w+.-]*):")
_PLAIN_EXEC = re.compile(r"(?<![\w-])(elisp|shell)(:)", re.I)
_RADIO = re.compile(r"<<<")
# inline Babel (``src_sh{…}``, ``call_name(…)``): evaluated on export or C-c C-c
# (no look-behind: Org's word start differs from Python's \w on ~100 characters, e.g. ª ①;
# the name is Org's own set, anything but space, tab, newline and the bracket)
# The name's end is found with next_of, not a look-ahead: ``(?=[^ \t\n\[{(]+[\[{(])``
# tried at each ``src_`` of ``src_src_src_…`` scans to the line's end every time.
_INLINE_BABEL = re.compile(r"(src|call)_", re.I)
_NAME_END = " \t\n[{("
# export snippets (raw HTML/LaTeX into an export) and macros (a file's ``(eval …)`` macros)
_SNIPPET = re.compile(r"@@(?=[\w-]+:)")
_MACRO = re.compile(r"\{\{\{")
_MODE_LINE = re.compile(r"-\*-")
# ``&?%%(`` too: the agenda evaluates a diary sexp even inside an example block
_ESC = re.compile(r"^([ \t]*)(,*(?:\*|#\+|&?%%\())", re.M)
_UNESC = re.compile(r"^([ \t]*),(,*(?:\*|#\+|&?%%\())", re.M)
ZWSP = "\u200b"


def normalise_lines(text: str) -> str:
    """Every line break spelled ``\\n``; control characters (NUL…) shown as U+FFFD."""
    return _CONTROLS.sub("\ufffd", _BREAKS.sub("\n", text))


def escape_block_content(text: str) -> str:
    """Org's escaping inside src/example blocks: a comma before lines starting with ``*``
    or ``#+`` (or already with commas before them), and before diary sexps (``%%(``,
    ``&%%(``), which the agenda evaluates inside example blocks too."""
    return _ESC.sub(r"\1,\2", text)


_PLANNING_WORD = re.compile(r"^([ \t]*(?:SCHEDULED|DEADLINE|CLOSED|CLOCK))(:)", re.I | re.M)
_ACTIVE_TS = re.compile(r"<(?=\d{4}-\d{2}-\d{2})")
_DEFUSED_WORD = re.compile(r"^([ \t]*(?:SCHEDULED|DEADLINE|CLOSED|CLOCK))\u200b(:)",
                           re.I | re.M)
_DEFUSED_TS = re.compile("<\u200b(?=\\d{4}-\\d{2}-\\d{2})")


def defuse_agenda(text: str) -> str:
    """Quoted text that Emacs must never count: a zero-width space inside ``CLOCK:``,
    ``SCHEDULED:``, ``DEADLINE:`` and ``CLOSED:`` at a line start and after the ``<`` of an
    active timestamp.  Org's clock sums (a regexp search in some versions, even inside
    blocks), the agenda's timestamp search and planning lines then see plain words; the
    text reads the same.  Idempotent; :func:`restore_agenda` undoes it."""
    text = _PLANNING_WORD.sub(r"\1" + ZWSP + r"\2", text)
    return _ACTIVE_TS.sub("<" + ZWSP, text)


def restore_agenda(text: str) -> str:
    """The inverse of :func:`defuse_agenda` (what a reader of the record shows)."""
    return _DEFUSED_TS.sub("<", _DEFUSED_WORD.sub(r"\1\2", text))


def unescape_block_content(text: str) -> str:
    """The inverse of :func:`escape_block_content` (``org-unescape-code-in-string``)."""
    return _UNESC.sub(r"\1\2", text)


def _link_type(m: re.Match[str]) -> str:
    return m.group(0) if m.group(1).lower() in LINK_TYPES else "[" + ZWSP + m.group(0)[1:]


def _defuse_babel(line: str) -> str:
    """A zero-width space before the ``_`` of ``src_NAME{``, ``call_NAME(``…: a name (at
    least one character) whose first space, tab, newline or bracket is a ``[{(``."""
    def one(m: re.Match[str]) -> str:
        q = m.end()
        c = next_of(line, q, _NAME_END)
        if q < c < len(line) and line[c] in "[{(":
            return m.group(1) + ZWSP + "_"
        return m.group(0)
    return _INLINE_BABEL.sub(one, line)


def _inline(line: str) -> str:
    """Inline constructs that would run code or reach beyond this text: sexp timestamps,
    local-variable markers, links of a type outside :data:`LINK_TYPES`, radio targets,
    inline Babel calls and source blocks, export snippets, macro calls."""
    if "[[" in line:
        line = _BRACKET_TYPE.sub(_link_type, line)
    if ":" in line and ("lisp" in line.lower() or "shell" in line.lower()):
        line = _PLAIN_EXEC.sub(r"\1" + ZWSP + r"\2", line)
    if "_" in line:
        line = _defuse_babel(line)
    if "@@" in line:
        line = _SNIPPET.sub("@" + ZWSP + "@", line)
    if "{{{" in line:
        line = _MACRO.sub("{" + ZWSP + "{{", line)
    if "<<<" in line:
        line = _RADIO.sub("<" + ZWSP + "<<", line)
    if "%%(" in line:
        line = _SEXP_TS.sub(r"\1%% (", line)
    if ":" in line and "ocal" in line.lower():
        line = _LOCAL_VARS.sub(r"\1" + ZWSP + r"\2", line)
    if "-*-" in line:
        line = _MODE_LINE.sub("-" + ZWSP + "*-", line)
    return line


def _escape_line(line: str) -> str:
    """A comma before a line Org would read as structure (after its indentation)."""
    if _HEADLINE.match(line) or _FOOTNOTE_DEF.match(line):
        return "," + line
    ind = _INDENT.match(line).end()  # type: ignore[union-attr]
    if _STRUCTURAL.match(line, ind):
        return line[:ind] + "," + line[ind:]
    return line


def _block_end(lines: list[str], start: int, name: str) -> int | None:
    end = re.compile(r"[^\S\n]*#\+end_" + re.escape(name) + r"[^\S\n]*$", re.I)
    for j in range(start + 1, len(lines)):
        if end.match(lines[j]):
            return j
    return None


def _lines(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = _inline(lines[i])
        ind = _INDENT.match(line).end()  # type: ignore[union-attr]
        m = _BEGIN.match(line, ind)
        if m and m.group(1).lower() in _BLOCKS:
            name = m.group(1).lower()
            j = _block_end(lines, i, m.group(1))
            if j is not None:
                head = line[:ind] + "#+begin_" + name
                if name == "src":
                    lang = m.group(2).split()[:1]
                    if lang and _LANG.fullmatch(lang[0]):
                        head += " " + lang[0]
                inner = lines[i + 1:j]
                if name in _VERBATIM:
                    body = escape_block_content(unescape_block_content("\n".join(inner)))
                    out += [head, *(body.split("\n") if inner else [])]
                else:
                    out += [head, *_lines(inner)]
                out.append(line[:ind] + "#+end_" + name)
                i = j + 1
                continue
        out.append(_escape_line(line))
        i += 1
    return out


def neutralise_body(text: str) -> str:
    """Text to put under a headline: the same words, with no line Org would read as
    structure (see the module docstring).  Idempotent."""
    text = normalise_lines(text)
    return "\n".join(_lines(text.split("\n")))


def neutralise_value(text: str) -> str:
    """A one-line value put inside existing structure (a node property's value): one line,
    with the inline constructs that run code or reach beyond it defused -- a ``<%%(…)>``
    there is a sexp timestamp the agenda evaluates, drawer or not.  Idempotent."""
    return _inline(" ".join(normalise_lines(text).split()))


_TAGS_AT_END = re.compile(r"[ \t]+(:[\w@#%:]+:)[ \t]*$")
_MENTION = re.compile(r"(^|\s)(@[\w.-]+)")


def neutralise_title(text: str, keywords: tuple[str, ...] | list[str] = ()) -> str:
    """One headline title: a single line (every break and run of whitespace one space), no
    tags at its end (the space before them becomes a no-break space, so Org reads them as
    words) and no ``@name`` an agent would take as a request (shown as verbatim
    ``=@name=``).  With ``keywords`` (the file's TODO keywords) the title is one that
    follows the stars directly: a first word that is one of them, ``COMMENT`` or a priority
    cookie is shown verbatim too, so it stays a word.  Idempotent."""
    t = " ".join(normalise_lines(text).split())
    if keywords:
        first, _, rest = t.partition(" ")
        if first in keywords or first == "COMMENT" or re.fullmatch(r"\[#.\]", first):
            t = f"={first}=" + (f" {rest}" if rest else "")
    t = _inline(t)
    if "@" in t:
        t = _MENTION.sub(r"\1=\2=", t)
    m = _TAGS_AT_END.search(t)
    if m:
        t = t[:m.start()] + "\u00a0" + m.group(1)
    return t


_CUT_TARGET = re.compile(r"\[\[([^\]\n]*…[^\]\n]*)\](?:\[([^\]\n]*)\])?\]")
_CUT_BARE = re.compile(r"\b[a-z][\w+.-]*:[^\s\[\]]*…", re.I)


def whole_links(text: str) -> str:
    """An answer written into a note holds whole Org links or plain text, never a link cut
    by "…" (a model or a snippet may hand one over): a bracket link whose target was cut
    keeps only its description; a ``[[`` that never closes on its line loses its brackets;
    a bare ``id:…``/``https:…`` cut by "…" is dropped.  Whole links are left as written."""
    text = _CUT_TARGET.sub(lambda m: m.group(2) or "", text)
    out = []
    for line in text.split("\n"):
        parts, i = [], 0
        while (j := line.find("[[", i)) >= 0:
            k = line.find("]]", j)
            if k < 0:  # never closes: plain text
                parts.append(line[i:j] + line[j + 2:].replace("][", " ").replace("[", "")
                             .replace("]", ""))
                i = len(line)
                break
            parts.append(line[i:k + 2])
            i = k + 2
        parts.append(line[i:])
        out.append(_CUT_BARE.sub("", "".join(parts)))
    return "\n".join(out)
