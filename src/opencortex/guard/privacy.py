"""Privacy tags: material tagged private never goes to a remote model unless you opt in."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from .policy import GuardPolicy

__all__ = ["filter_private", "is_private", "normalise_tag", "private_tags"]


class _Tagged(Protocol):
    tags: Iterable[str]


N = TypeVar("N")


def normalise_tag(tag: str) -> str:
    """``:Private:`` / ``private`` / `` PRIVATE `` all compare equal (Org tags, casefolded)."""
    return tag.strip().strip(":").strip().casefold()


def _split(tags: Iterable[str] | str | None) -> set[str]:
    if tags is None:
        return set()
    if isinstance(tags, str):  # ":a:b:" or "a b" — never iterate a string's characters
        tags = tags.replace(":", " ").split()
    out: set[str] = set()
    for t in tags:
        if isinstance(t, str):
            out.update(normalise_tag(x) for x in t.replace(":", " ").split())
    out.discard("")
    return out


def private_tags(tags: Iterable[str] | str | None, policy: GuardPolicy) -> set[str]:
    """Which of ``tags`` are configured privacy tags (normalised)."""
    return _split(tags) & set(policy.privacy_tags)


def is_private(tags: Iterable[str] | str | None, policy: GuardPolicy) -> bool:
    """True when any tag is a privacy tag.  Pass *all* tags, inherited and FILETAGS too."""
    return bool(private_tags(tags, policy))


def filter_private(nodes: Iterable[N], policy: GuardPolicy, *,
                   tags_of: Callable[[N], Iterable[str]] | None = None) -> list[N]:
    """``nodes`` without the private ones, for anything about to go to a remote model.

    Reads ``node.tags`` (which must already include inherited tags) unless ``tags_of`` is
    given.  With ``remote_ok = true`` in config the user has opted in and nothing is dropped.
    A node whose tags cannot be read is treated as private.
    """
    if policy.remote_ok:
        return list(nodes)
    get = tags_of or (lambda n: n.tags)  # type: ignore[attr-defined]
    kept: list[N] = []
    for n in nodes:
        try:
            tags = get(n)
        except AttributeError:
            continue
        if not is_private(tags, policy):
            kept.append(n)
    return kept
