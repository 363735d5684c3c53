"""The one guarded door to a memex for every gateway: CLI, HTTP, MCP, TUI, Telegram.

A gateway never reads the index or calls the writer itself; it makes an
:class:`Access` for its client and asks it.  Here, and only here:

- **privacy**: a node carrying a privacy tag (``[guard] privacy_tags``, default
  ``private`` and ``@personal``; inherited and FILETAGS count) never reaches a client
  that is not trusted with private notes — not as a hit, a read, a link, a backlink,
  a piece of its parent's subtree, an agenda item or a recall candidate.  The local
  CLI and the in-process TUI are the person and see everything; other gateways only
  when listed in ``[guard] trusted_clients`` (default: none).
- **policy**: effects (capture, append) are an ``memex.write`` action checked by the
  Guard — "deny" refuses, "ask" refuses with :class:`NeedsApproval` unless the client
  is the person, nothing is written without "allow".
- **confinement**: write targets are resolved inside the memex by the Guard.
- **validation**: node references and numbers are checked before the store sees them
  (:mod:`opencortex.schema`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .errors import AccessDenied, NeedsApproval, NodeNotFoundError
from .memex import Memex
from .memory.agenda import Agenda
from .memory.nodes import Node
from .schema import ValidationError, node_ref

__all__ = ["CLIENTS", "Access", "AccessDenied", "NeedsApproval"]

CLIENTS = ("cli", "http", "mcp", "tui", "telegram", "org")
"""Gateway names; ``cli`` is the person at their own terminal; ``org`` is an ``@agent``
headline in a file that is not private (its answer lands where clients and sync peers
read it, so it is written without private notes)."""
PERSON = frozenset({"cli", "tui"})
"""The person at their own terminal (the in-process TUI too): sees private notes, and
their own command is the approval an "ask" write needs."""
_PREFIX_LOCK = threading.Lock()


class Access:
    """What one client may read and do in one memex; every method applies the guard."""

    def __init__(self, memex: Memex, client: str, *, lock: Any = None,
                 gateway: Any = None) -> None:
        """``lock``: held around memex calls — a gateway passes the memex's one lock
        (``Runtime.access``); default: a private lock (a skill's reads inside the kernel,
        which already schedules its workers: sharing it there halves pipeline throughput);
        ``gateway``: the model recall may use (a Runtime's; None: from the settings,
        False: none)."""
        from .guard import Guard
        from .guard.policy import policy_of

        if client not in CLIENTS:
            raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
        self.memex = memex
        self.client = client
        self.policy = policy_of(memex.settings.guard)
        self.guard = Guard(self.policy, memex_root=memex.root)
        self.sees_private = client in PERSON or client in memex.settings.trusted_clients
        self._private = frozenset(self.policy.privacy_tags)
        self._lock = lock if lock is not None else threading.RLock()
        self._gateway = gateway
        self._batch_prefix: str | None = None
        self._seq = itertools.count(1)

    @property
    def batch_prefix(self) -> str:
        """What this Access's own writes are journaled under (``undo_own`` undoes only
        those: never the person's writes, nor another client's or connection's).  Drawn
        on first use: the kernel makes an Access for every reply and record, and most
        never write (a random draw each is a syscall on the request's path)."""
        if self._batch_prefix is None:
            with _PREFIX_LOCK:  # two first writes on two threads: one prefix for both
                if self._batch_prefix is None:
                    self._batch_prefix = f"{self.client}:{uuid.uuid4().hex[:12]}:"
        return self._batch_prefix

    @batch_prefix.setter
    def batch_prefix(self, value: str) -> None:
        self._batch_prefix = value

    @classmethod
    def for_signal(cls, memex: Memex, meta: dict[str, Any]) -> Access:
        """The Access of whoever sent a pipeline signal: ``meta["gateway"]`` is stamped by
        the HTTP and Telegram gateways (never taken from the client); signals without one
        come from the person's own terminal or the agent itself."""
        gw = meta.get("gateway")
        return cls(memex, gw if gw in ("http", "mcp", "telegram", "org") else "cli")

    # -- privacy ---------------------------------------------------------------------
    def hidden(self, tags: Iterable[str]) -> bool:
        """True when material with these tags (all of them: inherited too) is withheld.
        Same answer as ``guard.is_private`` (``:a:b:`` strings, padded or cased tags),
        with a set lookup per clean tag since this runs for every hit."""
        if self.sees_private:
            return False
        if isinstance(tags, str):
            tags = [tags]
        for t in tags:
            if not isinstance(t, str):
                continue
            words = [t] if t.isalnum() or t.replace("@", "").replace("_", "").isalnum() \
                else t.replace(":", " ").split()
            if any(w.casefold() in self._private for w in words):
                return True
        return False

    def _hide_node(self, n: Node) -> bool:
        return self.hidden(n.tags)

    def _visible(self, nodes: Iterable[Node]) -> list[Node]:
        return [n for n in nodes if not self.hidden(n.tags)]

    @property
    def hide(self) -> Callable[[Iterable[str]], bool] | None:
        """None when this client sees private notes, else its test of what is withheld
        (what recall, deep reads and the skills that read the memex are handed)."""
        return None if self.sees_private else self.hidden

    def egress(self, value: Any, *, private: bool = False, why: str = "") -> Any:
        """The one egress check (``guard.egress``) for what leaves to this client: for a
        client that may not see private notes, text whose provenance is private (a
        :class:`~opencortex.guard.egress.Carried`, or ``private``) is withheld and lines
        matching the memex's private-text prints are cut, each with a note saying why;
        JSON-like data is checked string by string.  The person's clients get it as is."""
        from .guard.egress import Carried, check_value

        if self.sees_private:
            return value.text if isinstance(value, Carried) else value
        out, _ = check_value(value, self.memex.private_prints().prints, private=private,
                             why=why)
        return out

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            yield

    # -- reads -----------------------------------------------------------------------
    def sync(self) -> Any:
        with self._lock:
            return self.memex.sync()

    def search(self, query: str, mode: str | None = None, k: int = 10,
               filters: str | None = None, exclude_files: tuple[str, ...] = ()) -> Any:
        """Ranked hits (a SearchResult) without the nodes this client may not see."""
        from .retrieval.hybrid import retriever_for
        from .schema import no_nul

        no_nul(query, "the query")
        with self._lock:
            return retriever_for(self.memex).search(
                query, mode, k, filters, exclude_files,
                hide=None if self.sees_private else self._hide_node)

    def resolve(self, ref: str) -> Node:
        """The one node ``ref`` names; a withheld node is "not found" (never named)."""
        node_ref(ref)
        with self._lock:
            n = self.memex.resolve(ref, visible=None if self.sees_private
                                   else lambda x: not self.hidden(x.tags))
        if self.hidden(n.tags):
            raise NodeNotFoundError(_withheld(ref))
        return n

    def read(self, refs: list[str], depth: int = 1, budget: int = 4000) -> Any:
        """Deep read (a ReadResult) with withheld nodes and subtrees cut out; asking only
        for withheld nodes is NodeNotFoundError."""
        from .retrieval.deep_read import deep_read

        for r in refs:
            node_ref(r)
        with self._lock:
            res = deep_read(self.memex, refs, depth, budget, hide=self.hide)
        if refs and not res.nodes and all("ref" in o or str(o.get("reason")).startswith(
                "private") for o in res.omitted):
            raise NodeNotFoundError(_withheld(refs[0]))
        return res

    def node_text(self, ref: str) -> str:
        """The Org text of one node's subtree (withheld parts cut out)."""
        res = self.read([ref], depth=0, budget=10**9)
        if not res.nodes:
            reason = res.omitted[0]["reason"] if res.omitted else "not found"
            raise NodeNotFoundError(f"node {ref!r}: {reason}")
        return res.nodes[0].text

    def _file_path(self, rel: str) -> tuple[str, Any]:
        from .guard import UnsafePathError

        try:
            path = self.guard.confine(rel)
        except UnsafePathError as e:
            raise NodeNotFoundError(f"{rel!r}: {e}") from None
        return path.relative_to(self.memex.root).as_posix(), path

    def _file_withheld(self, path: Any) -> bool:
        """True when the .org file at ``path`` is private as a whole (its FILETAGS) for this
        client; a file that does not exist (yet) is not."""
        from .org.parser import parse

        if self.sees_private or not path.is_file():
            return False
        return self.hidden(parse(path.read_text(encoding="utf-8", errors="replace")).filetags)

    def files(self) -> list[dict[str, Any]]:
        """The memex's indexed .org files this client may see, with their entry counts
        (a file whose entries are all withheld, or that is private as a whole, is left
        out)."""
        out = []
        with self._lock:
            rels = sorted(self.memex.store.file_states())
            for rel in rels:
                nodes = self.memex.store.file_nodes(rel)
                seen = self._visible(nodes)
                if nodes and not seen:
                    continue
                if not nodes and not self.sees_private:
                    try:
                        if self._file_withheld(self.memex.root / rel):
                            continue
                    except OSError:
                        continue
                out.append({"file": rel, "entries": len(seen)})
        return out

    def file_text(self, rel: str) -> str:
        """A whole .org file's text as this client may see it: the preamble, then each
        top-level entry's subtree with withheld entries and subtrees cut out (a file that
        is private as a whole is "not found", never named)."""
        from .org.parser import parse

        rel, path = self._file_path(rel)
        with self._lock:
            known = rel in self.memex.store.file_states()
            nodes = sorted(self.memex.store.file_nodes(rel), key=lambda n: n.line)
        if not known or not path.is_file():
            raise NodeNotFoundError(f"{rel}: no such indexed .org file in the memex (list "
                                    "them with the opencortex://files resource)")
        text = path.read_text(encoding="utf-8", errors="replace")
        doc = parse(text)
        if self.hidden(doc.filetags):
            raise NodeNotFoundError(_withheld(rel))
        if self.sees_private:
            return text
        tops: list[Node] = []
        for n in nodes:
            if not tops or n.level <= tops[-1].level:
                tops.append(n)
        lines = text.splitlines(keepends=True)
        # the preamble ends where the file *as saved* has its first headline: the index's
        # first entry line is stale after an edit or a sync peer's write, and the lines
        # above it on disk may now be a private entry (the entries come from the index)
        first = doc.headings[0].line if doc.headings else len(lines) + 1
        parts = ["".join(lines[:first - 1])]
        for n in tops:
            if self.hidden(n.tags):
                continue
            got = self.read([n.key], depth=0, budget=10**9)
            parts += [x.text.rstrip("\n") + "\n" for x in got.nodes[:1]]
        return "".join(parts)

    def node_at(self, file: str, line: int) -> Node | None:
        from .schema import line_number

        line_number(line)
        with self._lock:
            n = self.memex.node_at(file, line)
        return None if n is None or self.hidden(n.tags) else n

    def query(self, expr: str, limit: int | None = None, order: str = "file",
              today: dt.date | None = None, with_body: bool = False) -> list[Node]:
        with self._lock:
            return self._visible(self.memex.query(expr, limit, order, today, with_body))

    def agenda(self, today: dt.date | None = None, days: int = 7) -> dict[str, list[Node]]:
        from .schema import org_year

        if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 3660:
            raise ValidationError(f"days must be a whole number from 0 to 3660, got {days!r}")
        start = today or dt.date.today()
        org_year(start.year, "today")
        if start > dt.date(9999, 12, 31) - dt.timedelta(days=days + 1):
            raise ValidationError(f"today {start} plus {days} days runs past Org's last "
                                  "date (9999-12-31): pick an earlier day")
        with self._lock:
            view = self.memex.agenda(today=today, days=days)
        return {k: self._visible(v) for k, v in view.items()}

    def day_agenda(self, today: dt.date | None = None, days: int = 7,
                   start: dt.date | None = None) -> Agenda:
        """Org's day agenda (``Memex.day_agenda``) without the entries withheld here."""
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3660:
            raise ValidationError(f"days must be a whole number from 1 to 3660, got {days!r}")
        with self._lock:
            ag = self.memex.day_agenda(today=today, days=days, start=start)
        return ag if self.sees_private else ag.without(self.hidden)

    def recall(self, roots: list[Any] | None = None) -> Any:
        """A Recall engine whose boundary leaves out the notes this client may not see."""
        from .recall.engine import Recall

        if self.client in PERSON:
            engine = Recall(self.memex, roots, gateway=self._gateway)
        else:  # another client may narrow the boundary, never widen it
            engine = Recall.narrowed(self.memex, list(roots or []), gateway=self._gateway)
        engine.hide = self.hide
        return engine

    def view(self) -> MemexView:
        """The Memex read API (query, agenda, overdue, next_actions, resolve, ...) with
        this client's privacy applied, for code written against a Memex (skills)."""
        return MemexView(self)

    # -- effects ---------------------------------------------------------------------
    def _allow_write(self, path: str, what: str, text: str) -> str:
        """Guard.check a memex.write to ``path``: the confined relative path, or raise.
        The person (CLI, TUI) gives the command themselves: only confinement applies."""
        from .guard import Action, UnsafePathError

        if self.client in PERSON:
            try:
                real = self.guard.confine(path)
            except UnsafePathError as e:
                raise AccessDenied(str(e)) from None
            return real.relative_to(self.memex.root).as_posix()

        d = self.guard.check(Action("memex.write", {"path": path, "op": what,
                                                    "text": text}, origin=self.client))
        if d.denied:
            raise AccessDenied(d.reason)
        if d.needs_approval:
            raise NeedsApproval(
                f"{d.reason}. The {self.client} client cannot ask you, so nothing was "
                f'written; capture it yourself, or set guard.tools."memex.write" = "allow" '
                "in config.toml to let clients write without asking")
        return str(d.action.args["path"])

    @contextlib.contextmanager
    def _journaled(self) -> Iterator[None]:
        """Journal the write under this Access's own batch, unless a caller (a pipeline
        signal) already grouped it under its batch."""
        w = self.memex.writer
        if w.batch is not None:
            yield
            return
        w.batch = f"{self.batch_prefix}{next(self._seq)}"
        try:
            yield
        finally:
            w.batch = None

    def capture(self, text: str, to: str | None = None, todo: str | None = None,
                tags: list[str] | None = None) -> Any:
        """A new entry (a WriteResult) in ``to`` (a file or a node; default the inbox),
        after the guard allowed a memex.write to that file."""
        from .schema import no_nul

        no_nul(text, "text")
        with self._lock:
            to = to or self.memex.inbox()
            if to.endswith(".org") and "::" not in to:
                no_nul(to, "to")
                target = self._allow_write(to, "capture", text)
                if self._file_withheld(self.memex.root / target):
                    raise NodeNotFoundError(_withheld(to))  # as its entries: never named
                with self._journaled():
                    return self.memex.writer.capture(text, target=target, todo=todo,
                                                     tags=tags)
            parent = self.resolve(to)
            self._allow_write(parent.file, "capture", text)
            with self._journaled():
                return self.memex.writer.capture(text, todo=todo, tags=tags, parent=parent)

    def _edit(self, ref: str, op: str, text: str, fn: Callable[[Node], Any]) -> Any:
        """One edit of an existing entry: the node as this client sees it, the guard's
        memex.write to its file, then the writer (which validates what is set)."""
        with self._lock:
            node = self.resolve(ref)
            self._allow_write(node.file, op, text)
            with self._journaled():
                return fn(node)

    def append(self, ref: str, text: str) -> Any:
        from .schema import no_nul

        no_nul(text, "text")
        return self._edit(ref, "append", text, lambda n: self.memex.writer.append(n, text))

    def set_todo(self, ref: str, state: str | None) -> Any:
        return self._edit(ref, "todo", state or "",
                          lambda n: self.memex.writer.set_todo(n, state))

    def set_priority(self, ref: str, priority: str | None) -> Any:
        return self._edit(ref, "priority", priority or "",
                          lambda n: self.memex.writer.set_priority(n, priority))

    def set_property(self, ref: str, key: str, value: str | None) -> Any:
        from .schema import no_nul

        no_nul(key, "key")
        if value is not None:
            no_nul(value, "value")
        return self._edit(ref, "set-property", f"{key} {value or ''}",
                          lambda n: self.memex.writer.set_property(
                              n, key, value, person=self.client in PERSON))

    def tag(self, ref: str, changes: list[str]) -> Any:
        return self._edit(ref, "tag", " ".join(changes),
                          lambda n: self.memex.writer.tag(n, changes))

    def set_date(self, ref: str, kind: str, when: dt.date | dt.datetime | None,
                 repeater: str | None = None) -> Any:
        """SCHEDULED or DEADLINE (``when`` None removes it)."""
        from .schema import repeater as check_repeater

        check_repeater(repeater)
        op = "schedule" if kind.upper() == "SCHEDULED" else "deadline"
        return self._edit(ref, op, str(when),
                          lambda n: self.memex.writer.set_date(n, kind, when, repeater))

    def new_note(self, title: str, body: str = "", tags: list[str] | None = None) -> Any:
        """A new note file in the notes folder, after the guard allowed writing it."""
        from .schema import no_nul

        no_nul(title, "title")
        no_nul(body, "body")
        with self._lock:
            self._allow_write(self.memex.writer.note_path(title), "new-note",
                              f"{title}\n{body}")
            with self._journaled():
                return self.memex.writer.new_note(title, body, tags)

    def undo_own(self, count: int = 1) -> list[Any]:
        """Undo this Access's last ``count`` writes (newest first) — only its own: the
        person's and other clients' writes are never touched, and a file changed since
        is refused by the writer.  Each undo is a memex.write the guard checks."""
        from .errors import WriteError

        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100:
            raise ValidationError(f"count must be a whole number from 1 to 100, got {count!r}")
        out: list[Any] = []
        with self._lock:
            mine = [e for e in self.memex.store.journal(limit=10_000)
                    if (e.batch or "").startswith(self.batch_prefix)][:count]
            if not mine:
                raise WriteError("nothing to undo: this client has made no write (still "
                                 "in effect) in this session")
            for e in mine:
                rel = self.guard.confine(e.path).relative_to(self.memex.root).as_posix()
                self._allow_write(rel, "undo", e.description)
                out += self.memex.writer.undo(batch=e.batch)
        return out


class _StoreView:
    """The store calls skills make to find nodes, filtered; everything else passes."""

    def __init__(self, access: Access) -> None:
        self._a = access

    def nodes_by_ref(self, ref: str) -> list[Node]:
        return self._a._visible(self._a.memex.store.nodes_by_ref(ref))

    def nodes_by_keys(self, keys: list[str], with_body: bool = True) -> dict[str, Node]:
        got = self._a.memex.store.nodes_by_keys(keys, with_body=with_body)
        return {k: n for k, n in got.items() if not self._a.hidden(n.tags)}

    def find(self, *args: Any, **kwargs: Any) -> list[Node]:
        return self._a._visible(self._a.memex.store.find(*args, **kwargs))

    def all_nodes(self, *args: Any, **kwargs: Any) -> list[Node]:
        return self._a._visible(self._a.memex.store.all_nodes(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._a.memex.store, name)


class MemexView:
    """A Memex as one client may see it (read side only; writes go through Access)."""

    def __init__(self, access: Access) -> None:
        self._a = access
        self.settings = access.memex.settings
        self.root = access.memex.root
        self.store = _StoreView(access) if not access.sees_private else access.memex.store

    def resolve(self, ref: str) -> Node:
        return self._a.resolve(ref)

    @property
    def sees_private(self) -> bool:
        return self._a.sees_private

    def hidden(self, tags: Iterable[str]) -> bool:
        return self._a.hidden(tags)

    @property
    def clock(self) -> Any:
        """The writer's clock (reading the time is not a write)."""
        return self._a.memex.writer.clock

    def derived(self, name: str, build: Any) -> Any:
        """The memex's derived objects; what is built from this view's (filtered) reads is
        kept apart from what the unfiltered memex built under the same name."""
        return self._a.memex.derived(name if self._a.sees_private else f"{name}#withheld",
                                     build)

    def query(self, expr: str, limit: int | None = None, order: str = "file",
              today: dt.date | None = None, with_body: bool = False) -> list[Node]:
        return self._a.query(expr, limit, order, today, with_body)

    def agenda(self, today: dt.date | None = None, days: int = 7) -> dict[str, list[Node]]:
        return self._a.agenda(today, days)

    def day_agenda(self, today: dt.date | None = None, days: int = 7,
                   start: dt.date | None = None) -> Agenda:
        return self._a.day_agenda(today, days, start)

    def overdue(self, today: dt.date | None = None) -> list[Node]:
        return self._a._visible(self._a.memex.overdue(today))

    def next_actions(self, project: str | None = None) -> list[Node]:
        return self._a._visible(self._a.memex.next_actions(project))

    def active_projects(self) -> list[Node]:
        return self._a._visible(self._a.memex.active_projects())

    def recently_done(self, limit: int = 10, days: int | None = None,
                      today: dt.date | None = None) -> list[Node]:
        return self._a._visible(self._a.memex.recently_done(limit, days, today))

    def __getattr__(self, name: str) -> Any:
        if name in ("capture", "append", "set_todo", "schedule", "deadline", "tag",
                    "set_property", "new_note", "writer", "undo", "index_text"):
            raise AttributeError(f"{name}: a MemexView only reads; write through Access")
        return getattr(self._a.memex, name)


def _withheld(ref: str) -> str:
    return (f"no node matches {ref!r} that this client may see (private notes are withheld "
            "from it; see [guard] trusted_clients)")


def bad_input(e: Exception) -> bool:
    """True for the errors that mean "the client sent something wrong" (a 4xx)."""
    return isinstance(e, ValidationError | NodeNotFoundError | AccessDenied)
