"""The Python API in one object: a memex folder, its index, and safe writes to it.

The CLI mirrors this class; every other part of OpenCortex (pipeline, skills, servers)
talks to the memex through it.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .config import Settings, load_settings
from .errors import GuardError, NodeNotFoundError
from .locking import MemexLock
from .memory import views
from .memory.agenda import Agenda
from .memory.incremental import Progress, SyncSummary, sync
from .memory.nodes import Node
from .memory.orgmatch import compile_match, is_org_match
from .memory.private_prints import PrintsSnapshot, PrivatePrints
from .memory.query import check_values, parse_query
from .memory.sqlite_store import SqliteStore
from .memory.store import IndexStore, open_store
from .write.writer import MemexWriter, WriteResult

__all__ = ["AGENT_HANDLED", "Memex"]

T = TypeVar("T")

AGENT_HANDLED = "AGENT_HANDLED"
"""The property that marks an ``@agent`` headline answered (``answer_under``), so it is
never handled twice (``pipeline.agent_requests``)."""


class Memex:
    """A memex: the Org files under ``root`` (the truth) and a disposable index of them."""

    def __init__(self, root: str | os.PathLike[str] | None = None,
                 index: str | os.PathLike[str] | None = None,
                 settings: Settings | None = None) -> None:
        self.settings = settings or load_settings(memex=root, index=index)
        if root is not None:
            self.settings.memex = Path(root).expanduser()
        if index is not None:
            self.settings.index = Path(index).expanduser()
        self.root = self.settings.memex.expanduser().resolve()
        self._store: IndexStore | None = None
        self._writer: MemexWriter | None = None
        self._local: SqliteStore | None = None
        self._derived: dict[str, Any] = {}
        self._prints: PrivatePrints | None = None
        self.lock = MemexLock()
        """The one lock policy: the index is one connection, so every gateway, worker and
        heartbeat holds this around memex calls (the kernel's ``memex_lock`` is it); slow
        pure work (a model's forward pass or answer) runs with it released (``locking``)."""

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """The one ``name`` object derived from this memex (e.g. its hybrid Retriever,
        whose keyword index, vectors and model then stay loaded), built by ``build`` on
        first use and kept while the memex is open.  The layer above owns what it builds
        (``retrieval.retriever_for``): the memex imports none of it."""
        with self.lock:
            got = self._derived.get(name)
            if got is None:
                got = self._derived[name] = build()
            return got

    @property
    def store(self) -> IndexStore:
        """The index store: the SQLite file at ``settings.index_path``, or PostgreSQL when
        ``settings.store_url`` is set (one implementation, two SQL dialects)."""
        store = self._store
        if store is None:
            store = self._store = open_store(self.settings.store_url or self.settings.index_path,
                                             schema=self.settings.store_schema)
        return store

    @property
    def local_db(self):  # -> sqlite3.Connection
        """SQLite for indexes of this machine's own data (recall's records of local
        transcripts): the index itself when it is SQLite; with a PostgreSQL store, a SQLite
        file where the index would otherwise be (a shared store must not hold one
        machine's view of its home directory)."""
        store = self.store
        if isinstance(store, SqliteStore):
            return store.db
        if self._local is None:
            self._local = SqliteStore(self.settings.index_path)
        return self._local.db

    @property
    def writer(self) -> MemexWriter:
        if self._writer is None:
            self._writer = MemexWriter(self.root, self.store, self.settings)
            self._writer.on_indexed = self._written
        return self._writer

    def close(self) -> None:
        self._prints = None  # a closed memex no longer counts for remote prompts
        if self._local is not None:
            self._local.close()
            self._local = None
        if self._store is not None:
            self._store.close()
            self._store = None
            self._writer = None

    def __enter__(self) -> Memex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------
    def sync(self, progress: Progress | None = None, workers: int | None = None) -> SyncSummary:
        summary = sync(self.root, self.store, progress=progress, workers=workers,
                       exclude=self.settings.record_filter())
        if summary.added or summary.changed or summary.removed or self._prints is None:
            self._refresh_prints()
        return summary

    def private_prints(self) -> PrintsSnapshot:
        """Fingerprints of the private text in the index, and the files holding private
        nodes (the egress check's content half, ``guard.egress``): an immutable snapshot,
        refreshed with the index (each sync, each unsaved buffer indexed)."""
        prints = self._prints
        snap = prints.snapshot if prints is not None else None
        if snap is None:
            with self.lock:
                snap = self._refresh_prints()
        return snap

    def _written(self, rel: str) -> None:
        self._refresh_prints(rel)

    def _refresh_prints(self, changed: str | None = None) -> PrintsSnapshot:
        """Bring the private-text prints up to the index: all files by content hash (after
        a sync), or the one file ``changed`` just re-indexed (a write, an unsaved buffer)."""
        from .guard.egress import register_remote_source
        from .guard.policy import policy_of

        if self._prints is None:
            self._prints = PrivatePrints(policy_of(self.settings.guard))
            register_remote_source(self, _prints_for_remote)
        if changed is not None:
            return self._prints.refresh_file(self.store, changed)
        return self._prints.refresh(self.store)

    def query(self, expr: str, limit: int | None = None, order: str = "file",
              today: dt.date | None = None, with_body: bool = False,
              strict: bool = False) -> list[Node]:
        """Nodes matching ``expr``: the field syntax (``memory.query``) or an Org match
        string (``memory.orgmatch``: ``+work-done|urgent``, ``TODO="NEXT"``).
        ``strict``: a TODO keyword or priority no file defines is an error naming the
        valid ones (a person's typo), not an empty answer."""
        if is_org_match(expr):
            test = compile_match(expr, today)
            hits = [n for n in self.store.all_nodes(with_body=with_body) if test(n)]
            return hits[:limit] if limit else hits
        preds = parse_query(expr)
        if strict:
            check_values(preds, *self.store.vocabulary())
        order = "rank" if order == "file" and any(
            p.field == "text" and not p.negate for p in preds) else order
        return self.store.find(preds, limit=limit, order=order, today=today,
                               with_body=with_body)

    def resolve(self, ref: str, *, visible: Callable[[Node], bool] | None = None) -> Node:
        """The one node ``ref`` names, or NodeNotFoundError listing the candidates.

        ``visible``: for a client that may not see every node, only the nodes it may see
        are candidates -- a title that a private entry shares resolves to the one it sees,
        and an ambiguity never names (lists the key, the outline path of) a withheld one."""
        self._check_line(ref)
        hits = self.store.nodes_by_ref(ref)
        if visible is not None:
            shown = [n for n in hits if visible(n)]
            if hits and not shown:
                raise NodeNotFoundError(f"no node matches {ref!r} that this client may see "
                                        "(private notes are withheld from it; see [guard] "
                                        "trusted_clients)")
            hits = shown
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise NodeNotFoundError(
                f"no node matches {ref!r}: use an ID, FILE::Outline/Title, FILE:LINE or an "
                "exact title (find one with `opencortex query`)")
        cands = "; ".join(f"{n.key} ({n.file}:{n.line})" for n in hits[:5])
        raise NodeNotFoundError(f"{ref!r} matches {len(hits)} nodes: {cands}; use the ID "
                                "or FILE:LINE to pick one")

    def _check_line(self, ref: str) -> None:
        """``FILE:LINE`` past the file's end (or line 0) names no node: say so, instead of the
        store's "the node containing that line" answering with the file's last entry."""
        path, sep, line = ref.strip().rpartition(":")
        if not sep or not path.endswith(".org") or not (line.isascii() and line.isdigit()):
            return
        from .guard.paths import confine
        from .regular import read_regular

        try:
            data = read_regular(confine(path, self.root))
        except (OSError, GuardError):
            return  # not a file here: the lookup below says "no node matches"
        n = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if not 1 <= int(line) <= n:
            raise NodeNotFoundError(
                f"{ref!r}: line {int(line)} is past the end of {path} ({n} lines); use "
                f"{path}:LINE with LINE from 1 to {n}, an ID or a title")

    def active_projects(self) -> list[Node]:
        return views.active_projects(self.store)

    def recently_done(self, limit: int = 10, days: int | None = None,
                      today: dt.date | None = None) -> list[Node]:
        return views.recently_done(self.store, limit, days, today)

    def next_actions(self, project: str | None = None) -> list[Node]:
        return views.next_actions(self.store, self.resolve(project) if project else None)

    def overdue(self, today: dt.date | None = None) -> list[Node]:
        return views.overdue(self.store, today)

    def agenda(self, today: dt.date | None = None, days: int = 7) -> dict[str, list[Node]]:
        """The GTD dashboard (scheduled, deadlines, overdue, next actions)."""
        return views.agenda(self.store, today, days)

    def day_agenda(self, today: dt.date | None = None, days: int = 7,
                   start: dt.date | None = None) -> Agenda:
        """Org's day agenda, as ``org-agenda-list`` shows it (``memory.agenda``)."""
        return views.day_agenda(self.store, today, days, start)

    def inbox(self) -> str:
        """The one inbox every gateway files new entries in (``ask``, ``capture``, MCP,
        HTTP, Telegram): ``[capture] target`` when set (a file, or any ``FILE::Heading``
        that ``capture --to`` accepts); else the memex's own top-level ``Inbox`` heading
        when it has one (``* Inbox`` in gtd.org); else ``inbox.org``."""
        if self.settings.source.get("capture"):
            return self.settings.capture_target
        heads = sorted((n for n in self.query("heading:inbox level:1")
                        if n.level == 1 and n.title.strip().casefold() == "inbox"),
                       key=lambda n: (n.file, n.line))
        if not heads:
            return self.settings.capture_target
        h = heads[0]
        return f"{h.file}::{h.title.strip()}"  # a spelling `capture --to` accepts

    # -- writing (each call re-reads the file; refuses if it changed meanwhile) --
    def capture(self, text: str, to: str | None = None, todo: str | None = None,
                tags: list[str] | None = None, *, model: bool = False) -> WriteResult:
        """``to``: a file (``inbox.org``), or a node (ID, ``FILE::Outline``, title);
        default :meth:`inbox`.  ``model``: the body is a model's text (Markdown as Org)."""
        to = to or self.inbox()
        if to.endswith(".org") and "::" not in to:
            return self.writer.capture(text, target=to, todo=todo, tags=tags, model=model)
        parent = self.resolve(to) if to else None
        return self.writer.capture(text, todo=todo, tags=tags, parent=parent, model=model)

    def set_todo(self, ref: str, state: str | None) -> WriteResult:
        return self.writer.set_todo(self.resolve(ref), state)

    def set_priority(self, ref: str, priority: str | None) -> WriteResult:
        return self.writer.set_priority(self.resolve(ref), priority)

    def set_property(self, ref: str, key: str, value: str | None, *,
                     person: bool = False) -> WriteResult:
        """``person=True`` only where the person typed ``key`` or OpenCortex chose it (see
        ``MemexWriter.set_property``)."""
        return self.writer.set_property(self.resolve(ref), key, value, person=person)

    def tag(self, ref: str, changes: list[str]) -> WriteResult:
        return self.writer.tag(self.resolve(ref), changes)

    def schedule(self, ref: str, when: dt.date | dt.datetime | None,
                 repeater: str | None = None) -> WriteResult:
        return self.writer.set_date(self.resolve(ref), "SCHEDULED", when, repeater)

    def deadline(self, ref: str, when: dt.date | dt.datetime | None,
                 repeater: str | None = None) -> WriteResult:
        return self.writer.set_date(self.resolve(ref), "DEADLINE", when, repeater)

    def append(self, ref: str, text: str, *, model: bool = False) -> WriteResult:
        return self.writer.append(self.resolve(ref), text, model=model)

    def new_note(self, title: str, body: str = "", tags: list[str] | None = None, *,
                 model: bool = False) -> WriteResult:
        return self.writer.new_note(title, body, tags, model=model)

    def answer_under(self, ref: str, instruction: str, answer: str) -> list[WriteResult]:
        """Write an agent's answer as a child entry under ``ref`` and mark ``ref`` handled
        (``:AGENT_HANDLED:`` timestamp), surgically, as two journaled writes."""
        from .org.timestamps import format_timestamp
        from .write.neutralise import whole_links

        answer = whole_links(answer)  # whole links or plain text, never one cut by "…"
        node = self.resolve(ref)
        stamp = format_timestamp(self.writer.clock(), active=False, with_time=True)
        first = self.writer.set_property(node, AGENT_HANDLED, stamp, person=True)
        # the model's Markdown as Org, its headings as sub-entries, neutralised (writer)
        second = self.writer.capture(f"Answer: {instruction}", body=answer,
                                     parent=self.resolve(ref), model=True)
        return [first, second]

    def undo(self, count: int = 1) -> list[WriteResult]:
        return self.writer.undo(count)

    def undo_batch(self, batch: str) -> list[WriteResult]:
        """Roll back every write made under ``batch`` (one pipeline signal)."""
        return self.writer.undo(batch=batch)

    def index_text(self, path: str | os.PathLike[str], text: str) -> int:
        """Index a buffer's text for ``path`` without it being saved (Emacs buffer-update);
        the file on disk is re-checked by the next sync.  Returns the node count."""
        from .memory.nodes import file_rows
        from .org.parser import parse

        p = Path(path).expanduser()
        p = p if p.is_absolute() else self.root / p
        rel = p.resolve().relative_to(self.root).as_posix()
        if not rel.endswith(".org"):
            raise NodeNotFoundError(f"{rel}: not an .org file")
        if self.settings.is_record_file(rel):
            return 0  # the agent's own record: never indexed as a note
        rows = file_rows(parse(text, str(p)), rel)
        self.store.begin()
        try:
            self.store.put_file(rows, (-1, -1, "unsaved"))  # differs from any disk state
            self.store.resolve_links()
            self.store.bump_generation()
            self.store.commit()
        except BaseException:
            self.store.rollback()
            raise
        self._refresh_prints(rel)
        return len(rows.nodes)

    def node_at(self, file: str, line: int) -> Node | None:
        """The node whose entry contains ``line`` of ``file`` (for point-update)."""
        p = Path(file).expanduser()
        rel = (p.resolve().relative_to(self.root).as_posix() if p.is_absolute() else file)
        hits = self.store.nodes_by_ref(f"{rel}:{int(line)}")
        return hits[0] if hits else None


def _prints_for_remote(memex: Memex) -> Any:
    """A memex's prints for a prompt to a non-local model: none when its person opted in
    (``[guard] remote_ok = true``); the last snapshot (never the index: the gateway's
    thread holds no memex lock while it talks to a model)."""
    prints = memex._prints
    if prints is None or prints.policy.remote_ok or prints.snapshot is None:
        return None
    return prints.snapshot.prints
