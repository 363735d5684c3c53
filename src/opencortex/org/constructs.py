"""One validator per Org construct a client can set: tags, TODO keywords, priorities,
property names and values, titles.

Every entry point (CLI, HTTP, MCP, ask/GTD, Telegram) ends in the writer, and the writer
calls these, so a value from a client is checked once, the same way, wherever it came
from.  Each one accepts only what Org reads back as that one construct: a tag holding a
newline or a colon would otherwise end the headline and start a planning line (a
``DEADLINE`` with a diary sexp that Emacs's agenda evaluates), a property value with a
newline a new drawer line.  A refusal says what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import AccessDenied, InvalidOrgConstruct

__all__ = ["InvalidOrgConstruct", "check_keyword", "check_priority", "check_property_name",
           "check_property_owner", "check_property_value", "check_tag", "check_tags", "check_title"]

_TAG = re.compile(r"[\w@#%]{1,200}")
_PROP = re.compile(r"[^\s:]+(?::[^\s:]+)*\+?")
_KEYWORD = re.compile(r"[^\s|()\[\]:*]{1,40}")
_MAX_VALUE = 4000
_MAX_TITLE = 4000


def check_tag(tag: str) -> str:
    """A tag as Org reads one: letters, digits, ``_@#%`` (surrounding colons dropped)."""
    if not isinstance(tag, str):
        raise InvalidOrgConstruct(f"a tag is a string, got {type(tag).__name__}")
    name = tag.strip(":") if tag.count(":") <= 2 else tag
    if not _TAG.fullmatch(name):
        raise InvalidOrgConstruct(f"{tag[:80]!r} is not a valid Org tag (1-200 of letters, "
                                  "digits, _@#%; no spaces, colons or line breaks)")
    return name


def check_tags(tags: Iterable[str] | None) -> list[str]:
    """Each of ``tags`` checked (empty strings dropped), order kept, duplicates removed."""
    out = [check_tag(t) for t in (tags or []) if not (isinstance(t, str) and not t.strip(":"))]
    return list(dict.fromkeys(out))


def check_keyword(word: str, allowed: Iterable[str] | None = None) -> str:
    """A TODO keyword: one word, and one of ``allowed`` (the file's) when given."""
    kws = list(allowed) if allowed is not None else None
    if not isinstance(word, str) or not _KEYWORD.fullmatch(word):
        raise InvalidOrgConstruct(f"{str(word)[:80]!r} is not a TODO keyword (one word"
                                  + (f"; use one of: {', '.join(kws)})" if kws else ")"))
    if kws is not None and word not in kws:
        raise InvalidOrgConstruct(f"{word!r} is not a TODO keyword here; use one of: "
                                  f"{', '.join(kws)}")
    return word


def check_priority(p: str) -> str:
    """A priority cookie's letter: A-Z or 0-9."""
    if not isinstance(p, str) or not re.fullmatch(r"[A-Z0-9]", p):
        raise InvalidOrgConstruct(f"{str(p)[:20]!r} is not a priority: use A, B, C or none")
    return p


def check_property_name(key: str) -> str:
    """A property name: no spaces or line breaks, not END (``FOO+`` appends)."""
    if not isinstance(key, str) or not _PROP.fullmatch(key) or key.upper() in ("END", "END+"):
        raise InvalidOrgConstruct(f"{str(key)[:80]!r} is not a valid property name (no "
                                  "spaces; not END)")
    return key


_STEERS_ORG = re.compile(r"(?i)(?:ARCHIVE|EXPORT_FILE_NAME|DIR|ATTACH_DIR(?:_INHERIT)?"
                         r"|HEADER-ARGS(?::\S*)?|EXPORT_OPTIONS|EXPORT_SETUPFILE|SETUPFILE)\+?")
"""Properties the person's own Org commands act on as paths or code settings: archiving
moves the subtree to ``:ARCHIVE:``'s file, subtree export writes ``:EXPORT_FILE_NAME:``,
attachments go to ``:DIR:``, Babel runs blocks under ``:header-args:``.  Whoever sets one
chooses where the person's next command writes (e.g. ~/.bashrc) or how it evaluates.  The
``+`` spelling counts: Org appends ``:ARCHIVE+:`` to ``:ARCHIVE:``."""


def check_property_owner(key: str, *, person: bool) -> str:
    """``key`` unless it is one only the person sets (``ID``, what links point at, and the
    properties that steer Org's commands) and the write is not the person's.

    Called by the writer for every property it writes, so no path -- a client through
    ``Access``, a model-planned GTD step, a plugin's write op -- can skip it; ``person`` is
    True only where the person typed the key (the CLI, the TUI) or OpenCortex's own code
    chose it (an ID it generates)."""
    if person:
        return key
    if key.upper().rstrip("+") == "ID":
        raise AccessDenied("an entry's ID is what links and clients point at: only you "
                           "change it (`opencortex set-property NODE ID VALUE`)")
    if _STEERS_ORG.fullmatch(key):
        raise AccessDenied(f"{key} tells Org where to write files (archive, export, "
                           "attachments) or how to run code blocks: only you set it "
                           f"(`opencortex set-property NODE {key} VALUE`)")
    return key


def check_property_value(value: str) -> str:
    """A property value: one line (runs of whitespace, line breaks included, become one
    space), no NUL, at most 4000 characters."""
    if not isinstance(value, str) or "\0" in value:
        raise InvalidOrgConstruct("a property value is text without NUL characters")
    v = " ".join(value.split())
    if len(v) > _MAX_VALUE:
        raise InvalidOrgConstruct(f"a property value holds at most {_MAX_VALUE} characters")
    return v


def check_title(title: str) -> str:
    """A headline title: one line of text, no NUL, at most 4000 characters (the writer's
    neutraliser then makes sure Org reads it as text)."""
    if not isinstance(title, str) or "\0" in title or any(c in title for c in "\r\n\v\f"):
        raise InvalidOrgConstruct("a title is one line of text (no line breaks or NUL)")
    if len(title) > _MAX_TITLE:
        raise InvalidOrgConstruct(f"a title holds at most {_MAX_TITLE} characters")
    return title
