"""People and files a cue names, read against what the records hold, as filters on the
pass's scope: "Jethro did it" keeps the commits Jethro authored, "in the README" or "in
db.el" keeps the commits that touched that file.  A name counts only when it is an author
of a commit in scope (the index says who exists; no list of names is kept here), a file
only when a commit in scope touched it.  Sessions and notes carry no author or touched
paths and stay in scope.  A filter that would leave no commit is not applied: a person may
misremember one detail, and the time window and the words still narrow."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from .cue import Cue

if TYPE_CHECKING:
    from .index import RecordIndex

__all__ = ["Narrowing", "narrow"]

_NAME = re.compile(r"\b[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*\b")
_FILEWORD = re.compile(r"\b[A-Z][A-Z0-9_]{3,}\b")
"""A word written in capitals (README, CHANGELOG): how people name such files."""
@dataclass
class Narrowing:
    scope: set[int]
    people: list[str] = field(default_factory=list)
    """Authors the cue named (as the records spell them), when that filter applied."""
    files: list[str] = field(default_factory=list)
    """Paths the cue named (as the records spell them), when that filter applied."""
    chosen: set[int] = field(default_factory=set)
    """The commits those filters kept (empty when none applied)."""

    def to_dict(self) -> dict[str, list[str]]:
        return {"people": self.people, "files": self.files}


def _name_words(text: str, stop: set[str]) -> set[str]:
    """Capitalised words of the person's text that could be part of a name."""
    return {w.lower() for w in _NAME.findall(text)
            if w[0].isupper() and len(w) >= 3 and w.lower() not in stop}


def narrow(index: RecordIndex, scope: set[int], person: Sequence[str], cue: Cue
           ) -> Narrowing:
    """``scope`` narrowed to the commits by the people and touching the files the cue
    names (each filter only when it leaves a commit)."""
    import calendar

    from .cue import _STOP

    text = "\n".join(person)
    names = _name_words(text, _STOP | {m.lower() for m in (*calendar.month_name,
                                                           *calendar.day_name) if m})
    arts = [a.value for a in cue.axes if a.kind == "artifact"]
    capwords = {w.lower() for w in _FILEWORD.findall(text)}
    if not names and not arts and not capwords:
        return Narrowing(scope)
    out = Narrowing(scope)
    commits: set[int] | None = None  # the commits still in play (None: all in scope)
    # people: an author whose name holds a word the person wrote with a capital
    authors: dict[str, set[int]] = {}
    if names:
        for a, i in index.q("SELECT author, id FROM rec_records WHERE kind = 'commit' AND "
                            "author IS NOT NULL"):
            if i in scope:
                authors.setdefault(a, set()).add(i)
    named = [a for a in authors
             if names & {w.lower() for w in _NAME.findall(a) if len(w) >= 3}]
    if named and len(named) < len(authors):
        commits = set().union(*(authors[a] for a in named))
        out.scope = (out.scope - set().union(*authors.values())) | commits
        out.people = sorted(named)
        out.chosen = commits
    # files: a named file (with its extension), or a capitalised word that is a file's stem
    if not arts and not capwords:
        return out
    wanted = [PurePosixPath(a).name.lower() for a in arts]
    every: set[int] = set()
    touched: dict[str, set[int]] = {}
    for i, paths in index.q("SELECT id, paths FROM rec_records WHERE kind = 'commit'"):
        if i not in out.scope or (commits is not None and i not in commits):
            continue
        every.add(i)
        for p in paths.split("\n"):
            if not p:
                continue
            base = PurePosixPath(p).name.lower()
            if base in wanted or any(p.lower().endswith(a.lower()) for a in arts) \
                    or base.split(".", 1)[0] in capwords:
                touched.setdefault(p, set()).add(i)
    if touched:
        keep = set().union(*touched.values())
        if keep != every:
            out.scope = (out.scope - every) | keep
            out.files = sorted(touched)[:5]
            out.chosen = keep
    return out
