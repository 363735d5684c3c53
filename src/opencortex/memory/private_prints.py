"""The content half of the egress check, kept with the index: fingerprints of every node a
privacy tag covers (:class:`opencortex.guard.egress.Prints`), and which files hold one.

Refreshed incrementally after each sync (a file's prints are rebuilt only when its indexed
content hash changed) and read as one immutable snapshot by the egress check, which may
run on any thread and never touches the index connection itself."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..guard.egress import Prints
from ..guard.policy import GuardPolicy
from ..guard.privacy import is_private
from .nodes import Node
from .store import IndexStore

__all__ = ["PrintsSnapshot", "PrivatePrints"]


@dataclass(frozen=True, slots=True)
class PrintsSnapshot:
    prints: Prints
    files: frozenset[str]
    """Memex-relative paths of the files that hold at least one private node."""


_EMPTY = PrintsSnapshot(Prints(), frozenset())


def _session_record(n: Node) -> bool:
    return n.file.startswith("sessions/") and "session" in n.tags


class PrivatePrints:
    """Per-file prints keyed by the index's content hash; ``snapshot`` is their union."""

    def __init__(self, policy: GuardPolicy) -> None:
        self.policy = policy
        self._files: dict[str, tuple[str | None, Prints, bool]] = {}
        self.snapshot: PrintsSnapshot | None = None

    def _prints_of(self, nodes: Iterable[Node]) -> tuple[Prints, bool]:
        """The prints of a file's private nodes, and whether it has any.  The agent's own
        session records are not fingerprinted: their turns are tagged private because the
        client *could* see private notes, and they quote public notes as often as private
        ones (whose text is fingerprinted where it is written); the record itself is
        withheld by its tag."""
        private = [n for n in nodes if is_private(n.tags, self.policy)]
        texts = [f"{n.title}\n{n.body or ''}" for n in private if not _session_record(n)]
        return (Prints.of(texts) if texts else Prints()), bool(private)

    def refresh(self, store: IndexStore, stale: Iterable[str] = ()) -> PrintsSnapshot:
        """Bring the prints up to the index (call under the memex lock).  ``stale``: files
        whose indexed text changed without their content hash changing (an unsaved buffer)."""
        for rel in stale:
            self._files.pop(rel, None)
        states = {rel: h for rel, (_, _, h) in store.file_states().items()}
        changed = [rel for rel, h in states.items()
                   if (got := self._files.get(rel)) is None or got[0] != h]
        gone = [rel for rel in self._files if rel not in states]
        for rel in gone:
            del self._files[rel]
        if len(changed) > 64 and len(changed) > len(states) // 4:  # first build: one scan
            by_file: dict[str, list[Node]] = {rel: [] for rel in changed}
            for n in store.all_nodes(with_body=True):
                if n.file in by_file:
                    by_file[n.file].append(n)
            for rel, nodes in by_file.items():
                self._files[rel] = (states[rel], *self._prints_of(nodes))
        else:
            for rel in changed:
                self._files[rel] = (states[rel],
                                    *self._prints_of(store.file_nodes(rel, with_body=True)))
        if changed or gone or self.snapshot is None:
            self._union()
        assert self.snapshot is not None
        return self.snapshot

    def refresh_file(self, store: IndexStore, rel: str) -> PrintsSnapshot:
        """One file was just re-indexed (a verified write, an unsaved buffer): rebuild its
        prints only (the next sync checks its content hash again); the union is rebuilt
        only when the file holds private nodes now or did before."""
        if self.snapshot is None:
            return self.refresh(store, (rel,))
        before = self._files.get(rel)
        nodes = store.file_nodes(rel, with_body=True)
        if nodes:
            self._files[rel] = (None, *self._prints_of(nodes))
        else:
            self._files.pop(rel, None)
        after = self._files.get(rel)
        if (before is not None and before[2]) or (after is not None and after[2]):
            self._union()
        assert self.snapshot is not None
        return self.snapshot

    def _union(self) -> None:
        private = {rel: p for rel, (_, p, priv) in self._files.items() if priv}
        self.snapshot = (PrintsSnapshot(Prints.union(private.values()), frozenset(private))
                         if private else _EMPTY)
