"""Per-file settings from keywords: TODO sequences, ``#+STARTUP: odd``, ``#+LINK``.

Follows ``org-set-regexps-and-options`` / ``org-collect-keywords`` (Org 9.5.5),
including ``#+SETUPFILE`` for local files (URLs are not fetched).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["FileSettings", "compute_settings"]

_KEY_NAME = re.compile(r"^(.*?)(?:\(([^!@/])?.*?\))?$")
_LINK_DEF = re.compile(r"\A(\S+)[ \t]+(.+)", re.S)
_SETTING_KEYS = frozenset({"TODO", "SEQ_TODO", "TYP_TODO", "STARTUP", "LINK", "SETUPFILE"})
_MAX_SETUP_DEPTH = 20


@dataclass(slots=True)
class FileSettings:
    """Effective settings of one file."""

    todo_keywords: list[str] = field(default_factory=lambda: ["TODO"])
    done_keywords: list[str] = field(default_factory=lambda: ["DONE"])
    odd_levels: bool = False
    link_abbrevs: dict[str, str] = field(default_factory=dict)

    @property
    def all_todo(self) -> list[str]:
        return self.todo_keywords + [k for k in self.done_keywords if k not in self.todo_keywords]


def _strip_quotes(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        return s[1:-1]
    return s


def _collect(
    keywords: Iterable[tuple[str, str]],
    directory: str | None,
    read_setup: Callable[[str], list[tuple[str, str]] | None],
    seen: set[str],
    depth: int,
    out: list[tuple[str, str]],
) -> None:
    """Keywords in order, SETUPFILE contents spliced in where the keyword stands."""
    for key, value in keywords:
        if key != "SETUPFILE":
            if key in _SETTING_KEYS:
                out.append((key, value))
            continue
        uri = _strip_quotes(value.strip())
        if not uri or "://" in uri or depth >= _MAX_SETUP_DEPTH:
            continue
        path = os.path.normpath(os.path.join(directory or os.getcwd(), os.path.expanduser(uri)))
        if path in seen:
            continue
        sub = read_setup(path)
        if sub is None:
            continue
        _collect(sub, os.path.dirname(path), read_setup, seen | {path}, depth + 1, out)


def compute_settings(
    keywords: Iterable[tuple[str, str]],
    path: str | None,
    read_setup: Callable[[str], list[tuple[str, str]] | None],
) -> FileSettings:
    """Settings from the file's keyword elements (``(KEY, value)`` in order)."""
    keywords = list(keywords)
    flat: list[tuple[str, str]] = []
    if any(key == "SETUPFILE" for key, _ in keywords):
        directory = os.path.dirname(os.path.abspath(path)) if path else None
        seen = {os.path.abspath(path)} if path else set()
        _collect(keywords, directory, read_setup, seen, 0, flat)
    else:  # what _collect does without SETUPFILE (no path work)
        flat = [kv for kv in keywords if kv[0] in _SETTING_KEYS]
    if not flat:
        return FileSettings()

    st = FileSettings()
    typ: list[list[str]] = []
    seq_todo: list[list[str]] = []
    seq_seq: list[list[str]] = []
    links: list[tuple[str, str]] = []
    for key, value in flat:
        if key == "STARTUP":
            for opt in value.split():
                low = opt.lower()
                if low == "odd":
                    st.odd_levels = True
                elif low == "oddeven":
                    st.odd_levels = False
        elif key == "TYP_TODO":
            typ.append(value.split())
        elif key == "TODO":
            seq_todo.append(value.split())
        elif key == "SEQ_TODO":
            seq_seq.append(value.split())
        elif key == "LINK":
            m = _LINK_DEF.match(value)
            if m:
                links.append((m.group(1), m.group(2)))
    for k, v in links:
        st.link_abbrevs.setdefault(k, v)
    sequences = typ + seq_todo + seq_seq
    if sequences:
        names_all: list[str] = []
        done_all: list[str] = []
        for seq in sequences:
            names = [_name(k) for k in seq if k != "|"]
            if "|" in seq:
                done = [_name(k) for k in seq[seq.index("|") + 1 :] if k != "|"]
            else:
                done = names[-1:]
            names_all.extend(names)
            done_all.extend(done)
        if not done_all:
            done_all = names_all[-1:]
        # duplicates kept on purpose: Org keeps them in org-done-keywords too
        st.done_keywords = done_all
        st.todo_keywords = [k for k in names_all if k not in done_all]
    return st


def _name(k: str) -> str:
    m = _KEY_NAME.match(k)
    return m.group(1) if m else k
