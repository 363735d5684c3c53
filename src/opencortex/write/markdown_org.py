"""Markdown -> Org for everything a model writes into the memex.

Models answer in Markdown; in an Org file ``**bold**``, ``# headings``, fenced code and
``[text](url)`` are wrong syntax, and a ``*`` or ``#`` at a line start can change the
outline.  :func:`model_text_to_org` parses the text as CommonMark + tables (markdown-it-py,
imported lazily) and renders Org: headings as sub-headlines under the entry (or bold lines
where no headlines are allowed), lists (nested, ordered, checkboxes), emphasis, code,
links, images, quotes, tables, rules, hard breaks.  Text that is already Org passes
through (its headlines re-levelled under the entry); Org blocks and links inside Markdown
are kept as they are.  The result is then neutralised (neutralise.py): the only
headlines in it are the ones this module made.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..textscan import next_of
from .neutralise import (
    escape_block_content,
    neutralise_body,
    neutralise_title,
    normalise_lines,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from markdown_it.tree import SyntaxTreeNode

__all__ = ["looks_like_markdown", "looks_like_org", "model_text_to_org"]

_HEAD = "\x00H"  # marks a headline this module made (NUL never survives normalise_lines)
_PH = "OCORGPH{}X"
_PH_RE = re.compile(r"OCORGPH(\d+)X")
_ORG_LINK = re.compile(r"\[\[[^\[\]\n]+\](?:\[[^\[\]\n]*\])?\]")
_ORG_STRONG = (re.compile(r"^#\+(?:begin|end)_\w+|^#\+\w+:", re.I | re.M), _ORG_LINK,
               re.compile(r"^\|[-+]+\|\s*$", re.M), re.compile(r"^:PROPERTIES:", re.M))
_ORG_WEAK = re.compile(r"(?:^|[\s(])(?:\*[^\s*][^*\n]*[^\s*]\*|/[^\s/][^/\n]*[^\s/]/|"
                       r"~[^\s~][^~\n]*~|=[^\s=][^=\n]*=)(?=[\s.,;:!?)]|$)", re.M)
_MD = (re.compile(r"^[ \t]*(?:```|~~~)", re.M), re.compile(r"\*\*\S|\S\*\*|__\S"),
       re.compile(r"^#{1,6}[ \t]+\S", re.M),
       re.compile(r"`[^`\n]+`"), re.compile(r"^>[ \t]", re.M),
       re.compile(r"^\|?[ \t]*:?-{3,}:?[ \t]*\|", re.M))
_MD_BULLET = re.compile(r"^[ \t]*\*[ \t]+\S", re.M)  # or an Org headline: weak evidence
_ORG_HEADLINE = re.compile(r"^(\*+)[ \t]+(.*)$", re.M)
_SAFE_SCHEMES = ("http", "https", "mailto", "ftp", "file", "id", "doi")


_BRACKETS = re.compile(r"[\[\]\n]")


def _md_link(text: str) -> bool:
    """Whether ``\\[[^\\]\\n]+\\]\\([^)\\n]*\\)`` (``[text](url)``) occurs, in one pass.

    That regexp, searched in ``[[[[…`` with no ``](``, scans to the line's end from every
    ``[``: quadratic.  Here a ``](`` at j matches when the first ``[`` since the last ``]``
    or newline is at most j-2 (the text is not empty) and the first ``)`` or newline
    after it is a ``)``."""
    first_open = -1
    for m in _BRACKETS.finditer(text):
        j, ch = m.start(), m.group()
        if ch == "[":
            if first_open < 0:
                first_open = j
            continue
        if (ch == "]" and 0 <= first_open <= j - 2 and text.startswith("(", j + 1)
                and (c := next_of(text, j + 2, ")\n")) < len(text) and text[c] == ")"):
            return True
        first_open = -1
    return False


def _md_syntax(text: str) -> bool:
    return any(p.search(text) for p in _MD) or _md_link(text)


def looks_like_markdown(text: str) -> bool:
    return _md_syntax(text) or bool(_MD_BULLET.search(text))


def looks_like_org(text: str) -> bool:
    """Org-only syntax (blocks, ``[[links]]``, ``|--+--|`` tables, drawers) and no
    Markdown-only syntax (fences, ``**``, ``[t](u)``, ``# `` headings, backticks, ``> ``),
    or Org emphasis with no Markdown at all: conservative (plain prose is neither, and
    goes through the Markdown renderer, which leaves it as it is)."""
    if _md_syntax(text):
        return False
    if any(p.search(text) for p in _ORG_STRONG):
        return True
    return not _MD_BULLET.search(text) and bool(_ORG_WEAK.search(text))


def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    class _Md(MarkdownIt):
        def validateLink(self, url: str) -> bool:
            return True  # every link is rendered by _link, unsafe ones as text

    return _Md("commonmark").enable(["table", "strikethrough"])


# ------------------------------------------------------------------ inline
_ORG_PRE = set(" \t\n-({'\"")
_ORG_POST = set(" \t\n-.,;:!?')}[\"\\")


def _link(url: str, desc: str) -> str:
    desc = desc.replace("[", "(").replace("]", ")").strip()
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in _SAFE_SCHEMES:
        return f"{desc} ({url})" if desc and desc != url else url
    url = url.replace("[", "%5B").replace("]", "%5D")
    return f"[[{url}][{desc}]]" if desc and desc != url else f"[[{url}]]"


def _code(s: str, in_table: bool = False) -> str:
    if in_table and "|" in s:  # a cell's pipe must be \vert{}, which verbatim would show
        return s
    for m in ("~", "="):
        if m not in s and s.strip() == s and s:
            return f"{m}{s}{m}"
    return s


class _Inline:
    """Render an inline token list, putting a zero-width space where Org emphasis would
    otherwise not be recognised next to a word character (Org's own advice)."""

    def __init__(self, in_table: bool = False) -> None:
        self.out: list[str] = []
        self.in_table = in_table

    def last(self) -> str:
        for s in reversed(self.out):
            if s:
                return s[-1]
        return "\n"

    def open(self, mark: str) -> None:
        if self.out and self.out[-1] == "\x01":  # nested right after an opening marker
            pass
        elif self.last() not in _ORG_PRE:
            self.out.append("\u200b")
        self.out.append(mark)
        self.out.append("\x01")  # "just opened": dropped below

    def render(self, tokens: list[Token]) -> str:
        closing: list[str] = []
        marks = {"strong_open": "*", "em_open": "/", "s_open": "+"}
        for i, t in enumerate(tokens):
            ty = t.type
            if ty in marks:
                self.open(marks[ty])
                closing.append(marks[ty])
            elif ty in ("strong_close", "em_close", "s_close"):
                if self.out and self.out[-1] == "\x01":  # empty emphasis: drop it
                    self.out[-2:] = []
                else:
                    self.out.append(closing[-1] if closing else "")
                if closing:
                    closing.pop()
                nxt = next((x.content[:1] for x in tokens[i + 1:] if x.content), "")
                if nxt and nxt not in _ORG_POST:
                    self.out.append("\u200b")
            elif ty == "text":
                if t.content:
                    self.out.append(t.content)
            elif ty == "code_inline":
                self.out.append(_code(t.content, self.in_table))
            elif ty == "softbreak":
                self.out.append("\n")
            elif ty == "hardbreak":
                self.out.append("\\\\\n")
            elif ty == "html_inline":
                self.out.append(t.content)
            elif ty == "image":
                alt = "".join(c.content for c in (t.children or []))
                self.out.append(_link(str(t.attrs.get("src", "")), alt))
        return self._join()

    def _join(self) -> str:
        return "".join(s for s in self.out if s != "\x01")


def _tokens(n: SyntaxTreeNode) -> list[Token] | None:
    """The flat inline tokens of a block node (a paragraph, heading or table cell)."""
    return n.children[0].token.children if n.children and n.children[0].token else None


def _inline(tokens: list[Token] | None, in_table: bool = False) -> str:
    return _render_with_links(_Inline(in_table), tokens) if tokens else ""


def _render_with_links(r: _Inline, tokens: list[Token]) -> str:
    """Links first (each with its rendered description, as one text piece), then the rest."""
    out: list[Any] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type == "link_open":
            depth, j = 1, i + 1
            while j < len(tokens) and depth:
                depth += {"link_open": 1, "link_close": -1}.get(tokens[j].type, 0)
                j += 1
            desc = _render_with_links(_Inline(r.in_table), tokens[i + 1:j - 1])
            out.append(_Text(_link(str(t.attrs.get("href", "")), desc)))
            i = j
            continue
        out.append(t)
        i += 1
    return r.render(out)


class _Text:
    """A pre-rendered piece standing in for a token run (a link)."""

    type = "text"

    def __init__(self, content: str) -> None:
        self.content = content


# ------------------------------------------------------------------ blocks
class _Renderer:
    def __init__(self, parent_level: int | None, odd: bool, min_depth: int) -> None:
        self.parent = parent_level
        self.step = 2 if odd else 1
        self.min_depth = min_depth

    def blocks(self, node: SyntaxTreeNode, indent: str = "") -> list[str]:
        """The rendered children of ``node`` (each a string of lines), in order."""
        parts: list[str] = []
        for child in node.children:
            text = self.block(child, indent)
            if text is not None:
                parts.append(text)
        return parts

    def block(self, n: SyntaxTreeNode, indent: str) -> str | None:
        ty = n.type
        if ty == "heading":
            title = _inline(_tokens(n))
            title = " ".join(title.split())  # a setext heading may span lines
            if not title.strip():
                return None
            depth = int(n.tag[1])
            if self.parent is None or indent:
                return indent + f"*{title.strip()}*"
            stars = self.parent + (max(depth - self.min_depth, 0) + 1) * self.step
            return f"{_HEAD}{stars}\x00{title.strip()}"
        if ty == "paragraph":
            text = _inline(_tokens(n))
            return "\n".join(indent + ln if ln else ln for ln in text.split("\n"))
        if ty in ("bullet_list", "ordered_list"):
            return self.list(n, indent)
        if ty in ("fence", "code_block"):
            lang = (n.info or "").split()[:1]
            code = n.content[:-1] if n.content.endswith("\n") else n.content
            code = escape_block_content(code)
            if lang and re.fullmatch(r"[A-Za-z0-9_+.-]{1,40}", lang[0]):
                head, end = f"#+begin_src {lang[0]}", "#+end_src"
            else:
                head, end = "#+begin_example", "#+end_example"
            lines = [head, *(code.split("\n") if code else []), end]
            return "\n".join(indent + ln if ln else ln for ln in lines)
        if ty == "blockquote":  # no headline can live inside a block: bold lines there
            saved, self.parent = self.parent, None
            try:
                inner = "\n\n".join(self.blocks(n, indent))
            finally:
                self.parent = saved
            return f"{indent}#+begin_quote\n{inner}\n{indent}#+end_quote"
        if ty == "table":
            return self.table(n, indent)
        if ty == "hr":
            return indent + "-----"
        if ty == "html_block":
            return "\n".join(indent + ln for ln in n.content.rstrip("\n").split("\n"))
        if n.children:
            return "\n\n".join(self.blocks(n, indent))
        return None

    def list(self, n: SyntaxTreeNode, indent: str) -> str:
        ordered = n.type == "ordered_list"
        start = int(n.attrs.get("start", 1)) if ordered else 1
        tight = all(c.hidden for item in n.children for c in item.children
                    if c.type == "paragraph")
        items = []
        for k, item in enumerate(n.children):
            bullet = f"{start + k}." if ordered else "-"
            cookie = f"[@{start}] " if ordered and k == 0 and start != 1 else ""
            sub_indent = indent + " " * (len(bullet) + 1)
            parts = self.blocks(item, sub_indent)
            first = parts[0][len(sub_indent):] if parts and parts[0].startswith(sub_indent) \
                else (parts[0].lstrip() if parts else "")
            if first.startswith("[x] ") or first.startswith("[X] "):
                first = "[X] " + first[4:]
            line = f"{indent}{bullet} {cookie}{first}".rstrip()
            rest = parts[1:]
            sep = "\n" if tight else "\n\n"
            items.append(sep.join([line, *rest]) if rest else line)
        return ("\n" if tight else "\n\n").join(items)

    def table(self, n: SyntaxTreeNode, indent: str) -> str:
        rows: list[list[str]] = []
        header = 0
        for sec in n.children:
            for tr in sec.children:
                cells = []
                for c in tr.children:
                    txt = _inline(_tokens(c), in_table=True)
                    cells.append(" ".join(txt.split()).replace("|", "\\vert{}"))
                rows.append(cells)
            if sec.type == "thead":
                header = len(rows)
        if not rows:
            return ""
        ncol = max(len(r) for r in rows)
        rows = [r + [""] * (ncol - len(r)) for r in rows]
        width = [max(1, *(len(r[i]) for r in rows)) for i in range(ncol)]
        lines = [indent + "| " + " | ".join(c.ljust(width[i]) for i, c in enumerate(r)) + " |"
                 for r in rows]
        if header:
            lines.insert(header, indent + "|" + "+".join("-" * (w + 2) for w in width) + "|")
        return "\n".join(lines)


_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_BEGIN_LINE = re.compile(r"[ \t]*#\+begin_(\S+)", re.I)


def _protect(text: str) -> tuple[str, list[str]]:
    """Org blocks and Org links outside Markdown code fences become placeholders, kept
    verbatim through the Markdown parse."""
    saved: list[str] = []

    def keep(chunk: str) -> str:
        saved.append(chunk)
        return _PH.format(len(saved) - 1)

    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        ln = lines[i]
        f = _FENCE.match(ln)
        if fence is not None:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) and \
                    not ln.strip()[len(f.group(1)):].strip():
                fence = None
            out.append(ln)
        elif f:
            fence = f.group(1)
            out.append(ln)
        elif (b := _BEGIN_LINE.match(ln)):
            end = re.compile(r"[ \t]*#\+end_" + re.escape(b.group(1)) + r"[ \t]*$", re.I)
            j = next((k for k in range(i + 1, len(lines)) if end.match(lines[k])), None)
            if j is None:
                out.append(ln)
            else:
                out.append(keep("\n".join(lines[i:j + 1])))
                i = j
        else:
            out.append(_ORG_LINK.sub(lambda m: keep(m.group(0)), ln))
        i += 1
    return "\n".join(out), saved


def _markdown(text: str, parent_level: int | None, odd: bool) -> str:
    text, saved = _protect(text)
    md = _parser()
    from markdown_it.tree import SyntaxTreeNode

    tokens = md.parse(text)
    depths = [int(t.tag[1]) for t in tokens if t.type == "heading_open" and t.level == 0]
    tree = SyntaxTreeNode(tokens)
    r = _Renderer(parent_level, odd, min(depths) if depths else 1)
    out = "\n\n".join(p for p in r.blocks(tree) if p is not None)
    if saved:
        out = _PH_RE.sub(lambda m: saved[int(m.group(1))], out)
    return out


def _org(text: str, parent_level: int | None, odd: bool) -> str:
    """Already Org: headlines (outside blocks) re-levelled under the entry."""
    levels = []
    inside = None
    lines = text.split("\n")
    for ln in lines:
        m = re.match(r"[ \t]*#\+(begin|end)_(\S+)", ln, re.I)
        if m:
            inside = m.group(2).lower() if m.group(1).lower() == "begin" else None
        elif inside is None and (h := _ORG_HEADLINE.match(ln)):
            levels.append(len(h.group(1)))
    top = min(levels) if levels else 1
    step = 2 if odd else 1
    out, inside = [], None
    for ln in lines:
        m = re.match(r"[ \t]*#\+(begin|end)_(\S+)", ln, re.I)
        if m:
            inside = m.group(2).lower() if m.group(1).lower() == "begin" else None
        elif inside is None and (h := _ORG_HEADLINE.match(ln)):
            if parent_level is None:
                ln = f"*{h.group(2).strip()}*"
            else:
                stars = parent_level + (len(h.group(1)) - top + 1) * step
                ln = f"{_HEAD}{stars}\x00{h.group(2).strip()}"
        out.append(ln)
    return "\n".join(out)


def _finish(text: str, keywords: tuple[str, ...]) -> str:
    """Neutralise: bodies with neutralise_body, the headlines made here with their titles
    neutralised; nothing else can become a headline."""
    out: list[str] = []
    body: list[str] = []

    def flush() -> None:
        if body:
            out.append(neutralise_body("\n".join(body)))
            body.clear()

    for ln in text.split("\n"):
        if ln.startswith(_HEAD):
            flush()
            stars, _, title = ln[len(_HEAD):].partition("\x00")
            t = neutralise_title(title, keywords)
            if t:
                out.append("*" * int(stars) + " " + t)
            continue
        body.append(ln)
    flush()
    return "\n".join(out).strip("\n")


def model_text_to_org(text: str, *, parent_level: int | None, odd: bool = False,
                      keywords: tuple[str, ...] | list[str] = ("TODO", "DONE")) -> str:
    """A model's text as Org for the body of an entry with ``parent_level`` stars: its
    headings become sub-headlines one level (two under ``#+STARTUP: odd``) below, in
    order; with ``parent_level=None`` no headline is allowed and headings become bold
    lines.  Already-Org text passes through.  The result is neutralised; ``keywords``
    (the file's TODO keywords) are kept from starting a sub-headline's title, so a
    heading never becomes a task."""
    text = normalise_lines(text).strip("\n")
    if not text.strip():
        return ""
    text = _org(text, parent_level, odd) if looks_like_org(text) else \
        _markdown(text, parent_level, odd)
    return _finish(text, tuple(keywords) or ("TODO", "DONE"))

