"""Write operations on the memex: locate the entry afresh, edit its text surgically,
verify the result parses as intended, write atomically, journal for undo, re-index."""

from __future__ import annotations

import datetime as dt
import functools
import re
import threading
import uuid
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..atomic import Snapshot, atomic_write, read_snapshot, remove_file
from ..config import Settings, priority_range
from ..errors import NodeNotFoundError, WriteError
from ..memory.incremental import sync
from ..memory.nodes import Node, content_hash, heading_keys
from ..memory.store import IndexStore
from ..org.constructs import (
    check_priority,
    check_property_name,
    check_property_owner,
    check_property_value,
    check_tag,
    check_tags,
)
from ..org.model import Heading, OrgDocument
from ..org.parser import parse
from ..org.timestamps import format_timestamp
from . import edits
from .neutralise import neutralise_body, neutralise_title, neutralise_value, normalise_lines
from .verify import Intent, verify_write

__all__ = ["MemexWriter", "WriteResult"]

Clock = Callable[[], dt.datetime]
_TODO_FIELDS = frozenset({"todo", "closed", "scheduled", "deadline", "properties", "body"})


def model_body(text: str, parent_level: int | None, odd: bool = False,
               keywords: tuple[str, ...] = ("TODO", "DONE")) -> str:
    """A model's text as Org under an entry of ``parent_level`` stars (None: no headlines);
    markdown_org.py, then neutralised."""
    from .markdown_org import model_text_to_org

    return model_text_to_org(text, parent_level=parent_level, odd=odd, keywords=keywords)


@dataclass(slots=True)
class WriteResult:
    op: str
    file: str
    description: str
    journal_id: int
    node: str | None = None
    """Key of the entry written (or created)."""
    before_hash: str | None = None
    after_hash: str | None = None
    changed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _q(state: str | None) -> str:
    return f'"{state or ""}"'


def _slug(title: str) -> str:
    s = re.sub(r"[^\w\s-]", "", title.lower(), flags=re.UNICODE)
    s = re.sub(r"[\s_-]+", "-", s).strip("-")
    return s[:60] or "note"


class MemexWriter:
    """Every write OpenCortex makes to a user's files goes through here."""

    def __init__(self, root: Path, store: IndexStore, settings: Settings,
                 clock: Clock | None = None) -> None:
        self.root = root.resolve()
        self.store = store
        self.settings = settings
        self.clock: Clock = clock or (lambda: dt.datetime.now().replace(second=0, microsecond=0))
        self._batch = threading.local()
        self.on_indexed: Callable[[str], None] | None = None
        """Called with a file's relative path after a write re-indexed it (the memex keeps
        its private-text prints current this way: ``Memex.private_prints``)."""

    @property
    def batch(self) -> str | None:
        """Set by callers (a pipeline signal) to group writes for rollback.  Per thread:
        a write op may let go of the memex lock for slow work (``locking.slow_work``), and
        another worker's write meanwhile must neither take nor clear this one's batch."""
        return getattr(self._batch, "v", None)

    @batch.setter
    def batch(self, value: str | None) -> None:
        self._batch.v = value

    # -- plumbing ------------------------------------------------------------------
    def _path(self, rel: str) -> Path:
        """The file under the memex that ``rel`` names; anything else is refused
        (``..``, symlinks out, ``.git``, non-.org files, the skills folder: the guard's
        rules)."""
        from ..guard.paths import confine_note

        return confine_note(rel, self.root)

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def _locate(self, node: Node) -> tuple[Snapshot, OrgDocument, int]:
        """Read the node's file now and find the entry in it (by key, not by offset)."""
        snap = read_snapshot(self._path(node.file))
        if snap.data is None:
            raise NodeNotFoundError(f"{node.file} no longer exists; run `opencortex index`")
        doc = parse(snap.text, str(snap.path))
        keys = heading_keys(doc, node.file)
        try:
            return snap, doc, keys.index(node.key)
        except ValueError:
            raise NodeNotFoundError(
                f"{node.title!r} is no longer in {node.file}; run `opencortex index`") from None

    def create_file(self, rel: str, text: str, *, op: str, description: str,
                    node_key: str | None = None, code: bool = False) -> WriteResult:
        """A new file ``rel`` holding exactly ``text``, journaled with an empty "before"
        (undo removes it); an existing file is never overwritten.  The path is confined to
        the memex as a note, or with ``code=True`` as a literate skill file (skills/):
        callers that create code say so.  The caller verifies ``text`` (templates, lint)."""
        from ..guard.paths import confine

        path = confine(rel, self.root) if code else self._path(rel)
        snap = read_snapshot(path)
        if snap.data is not None:
            raise WriteError(f"{self._rel(path)} already exists (it appeared meanwhile?); "
                             "refusing to overwrite it")
        return self._commit(op, description, snap, text, node_key)

    def _commit(self, op: str, description: str, snap: Snapshot, new_text: str,
                node_key: str | None) -> WriteResult:
        data = new_text.encode("utf-8", "surrogateescape")
        rel = self._rel(snap.path)
        if data == snap.data:
            return WriteResult(op, rel, description + " (no change)", 0, node_key,
                               snap.hash, snap.hash, changed=False)
        before = zlib.compress(snap.data) if snap.data is not None else None
        after_hash = content_hash(data)
        self.store.begin()
        try:
            jid = self.store.journal_add(op, description, str(snap.path), snap.hash, after_hash,
                                         before, snap.mode, self.batch)
            atomic_write(snap, data)
            self.store.commit()
        except BaseException:
            self.store.rollback()
            raise
        self._indexed(rel)
        return WriteResult(op, rel, description, jid, node_key, snap.hash, after_hash)

    def _indexed(self, rel: str) -> None:
        sync(self.root, self.store, only=[rel], exclude=self.settings.is_record_file)
        if self.on_indexed is not None:
            self.on_indexed(rel)

    def _verify(self, old: OrgDocument, new_text: str, idx: int | None,
                check: Callable[[Heading], bool], what: str, added: int = 0,
                fields: frozenset[str] | None = None, settings: bool = False,
                tags: list[str] | None = None) -> None:
        """The whole file must parse as before except the intended change (verify.py); a
        new entry (``added``) has exactly the ``tags``, the ID and CREATED properties and
        no planning line."""
        intent = Intent(frozenset() if idx is None else frozenset({idx}), fields, added,
                        settings, frozenset() if added else None,
                        frozenset({"ID", "CREATED"}) if added else None,
                        tuple(tags or ()) if added else None)
        verify_write(old, new_text, intent, check, what, target=None if added else idx)

    def _edit(self, node: Node, op: str, description: str,
              steps: list[Callable[[str, Heading], str]],
              check: Callable[[Heading], bool],
              located: tuple[Snapshot, OrgDocument, int] | None = None,
              fields: frozenset[str] | None = None) -> WriteResult:
        """Apply ``steps`` to the entry; only its ``fields`` may change (None: any)."""
        snap, doc, idx = located or self._locate(node)
        text = snap.text
        cur = doc
        for step in steps:  # re-parse between steps: each sees exact spans
            text = step(text, cur.headings[idx])
            cur = parse(text)
        self._verify(doc, text, idx, check, f"{op} {node.title!r}", fields=fields)
        return self._commit(op, description, snap, text, node.key)

    # -- operations -------------------------------------------------------------
    def set_todo(self, node: Node, state: str | None) -> WriteResult:
        """Change the TODO state as Org does: DONE adds CLOSED (removed when reopened);
        a repeating task moves to its next date instead and logs the change."""
        located = self._locate(node)
        _, doc, idx = located
        h = doc.headings[idx]
        state = (state or "").strip() or None
        if state and state.lower() == "none":
            state = None
        allowed = [*doc.todo_keywords, *doc.done_keywords]
        if state is not None and state not in allowed:
            raise WriteError(f"{state!r} is not a TODO keyword of {node.file}; use one of: "
                             f"{', '.join(allowed)} (or 'none' to clear)")
        old = h.todo
        if state == old:
            return WriteResult("todo", node.file, f"{node.title}: already {state}", 0, node.key,
                               changed=False)
        now = self.clock()
        stamp = format_timestamp(now, active=False, with_time=True)
        done = set(doc.done_keywords)
        note = f"- State {_q(state):<12} from {_q(old):<12} {stamp}"
        steps: list[Callable[[str, Heading], str]] = []
        repeating = [k for k in ("scheduled", "deadline")
                     if getattr(h, k) is not None and getattr(h, k).repeater]
        if state in done and old not in done and repeating:
            reset = old if old in doc.todo_keywords else doc.todo_keywords[0]
            for k in repeating:
                shifted = edits.shift_repeated(getattr(h, k), now)
                if shifted:
                    steps.append(functools.partial(edits.set_planning, key=k, ts=shifted))
            steps.append(lambda t, x: edits.set_todo_keyword(t, x, reset))
            steps.append(lambda t, x: edits.set_property(t, x, "LAST_REPEAT", stamp))
            steps.append(lambda t, x: edits.add_log_note(t, x, note, self.settings.log_into_drawer))
            desc = f"{node.title}: {state} (repeats; next {', '.join(repeating)} moved)"
            return self._edit(node, "todo", desc, steps, lambda x: x.todo == reset, located,
                              _TODO_FIELDS)
        steps.append(lambda t, x: edits.set_todo_keyword(t, x, state))
        if state in done and old not in done:
            steps.append(lambda t, x: edits.set_planning(t, x, "CLOSED", stamp))
        elif old in done and state not in done:
            steps.append(lambda t, x: edits.set_planning(t, x, "CLOSED", None))
        if self.settings.log_states:
            steps.append(lambda t, x: edits.add_log_note(t, x, note, self.settings.log_into_drawer))

        def check(x: Heading) -> bool:
            closed_ok = x.closed is not None if state in done else x.closed is None
            return x.todo == state and (closed_ok or (old in done) == (state in done))

        return self._edit(node, "todo", f"{node.title}: {old or '-'} -> {state or '-'}",
                          steps, check, located, _TODO_FIELDS)

    def set_priority(self, node: Node, priority: str | None) -> WriteResult:
        """The headline's ``[#A]`` cookie: a letter Org accepts (A-Z, 0-9), or None."""
        p = (priority or "").strip().upper().strip("[#]") or None
        if p == "NONE":
            p = None
        if p is not None:
            check_priority(p)
        located = self._locate(node)
        doc = located[1]
        spec = (doc.keywords.get("PRIORITIES") or [""])[-1]
        where = f"#+PRIORITIES: {spec} in {node.file}"
        allowed = priority_range(spec)
        if not allowed:  # no (usable) keyword in the file: the configured range, Org's A-C
            spec = self.settings.priorities
            where = f"[todo] priorities = {spec!r} (no #+PRIORITIES: in {node.file})"
            allowed = priority_range(spec) or ["A", "B", "C"]
        if p is not None and p not in allowed:
            raise WriteError(f"{priority!r} is not a priority here: {where} allows "
                             f"{allowed[0]} to {allowed[-1]}; use one of those or none (a "
                             "wider range: #+PRIORITIES: A E C in the file, or [todo] "
                             "priorities in the config)")
        desc = f"{node.title}: priority {p or 'removed'}"
        return self._edit(node, "priority", desc,
                          [lambda t, x: edits.set_priority(t, x, p)],
                          lambda x: x.priority == p, located)

    def set_property(self, node: Node, key: str, value: str | None, *,
                     person: bool = False) -> WriteResult:
        """``person``: the person typed ``key`` (the CLI, the TUI) or OpenCortex's own code
        chose it; otherwise (a client, a model's plan) a key that steers Org's commands
        is refused (``check_property_owner``)."""
        check_property_owner(check_property_name(key), person=person)
        key = edits.canonical_key(key)  # :Effort: as org-set-effort writes it, from any spelling
        # one line (the construct check), its inline code defused (a <%%(…)> the agenda runs)
        value = neutralise_value(check_property_value(value)) if value is not None else None
        desc = f"{node.title}: {key} = {value}" if value is not None else f"{node.title}: -{key}"
        return self._edit(node, "set-property", desc,
                          [lambda t, x: edits.set_property(t, x, key, value)],
                          lambda x: x.get(key) == (value if value else None)
                          or (value == "" and x.get(key) == ""),
                          fields=frozenset({"properties"}))

    def tag(self, node: Node, changes: list[str]) -> WriteResult:
        """``changes``: ``+tag`` / ``tag`` to add, ``-tag`` to remove."""
        located = self._locate(node)
        _, doc, idx = located
        tags = list(doc.headings[idx].tags)
        for c in changes:
            name = c[1:] if c[:1] in "+-" else c
            name = check_tag(name)
            if c.startswith("-"):
                tags = [t for t in tags if t != name]
            elif name not in tags:
                tags.append(name)
        return self._edit(node, "tag", f"{node.title}: tags {' '.join(changes)}",
                          [lambda t, x: edits.set_tags(t, x, tags)],
                          lambda x: list(x.tags) == tags, located, frozenset({"tags"}))

    def set_date(self, node: Node, kind: str, when: dt.date | dt.datetime | None,
                 repeater: str | None = None) -> WriteResult:
        """SCHEDULED or DEADLINE (None removes it)."""
        kind = kind.upper()
        if kind not in ("SCHEDULED", "DEADLINE"):
            raise WriteError(f"{kind}: only SCHEDULED or DEADLINE can be set")
        ts = (format_timestamp(when, active=True, with_time=isinstance(when, dt.datetime),
                               repeater=repeater) if when is not None else None)
        attr = kind.lower()
        op = "schedule" if kind == "SCHEDULED" else "deadline"
        return self._edit(node, op, f"{node.title}: {kind} {ts or 'removed'}",
                          [lambda t, x: edits.set_planning(t, x, kind, ts)],
                          lambda x: (getattr(x, attr).raw if getattr(x, attr) else None) == ts,
                          fields=frozenset({attr}))

    def append(self, node: Node, text: str, *, model: bool = False) -> WriteResult:
        """Add text at the end of the entry's own section, as text: lines Org would read
        as structure are escaped (neutralise.py); ``model``: the text is a model's
        (Markdown is rendered as Org, no headlines)."""
        text = model_body(text, None) if model else neutralise_body(text)
        text = text.rstrip()
        if not text.strip():
            raise WriteError("nothing to append")
        return self._edit(node, "append", f"{node.title}: appended {len(text)} chars",
                          [lambda t, x: edits.append_text(t, x, text)],
                          lambda x: x.body.endswith(text.splitlines()[-1].strip()),
                          fields=frozenset({"body"}))

    def _entry(self, level: int, title: str, body: str, todo: str | None,
               tags: list[str], org_id: str, nl: str) -> str:
        head = "*" * level + " " + (f"{todo} " if todo else "") + title
        if tags:
            tagstr = ":" + ":".join(tags) + ":"
            head += " " * max(1, edits.TAGS_COLUMN - edits._width(tagstr) - edits._width(head))
            head += tagstr
        stamp = format_timestamp(self.clock(), active=False, with_time=True)
        lines = [head, ":PROPERTIES:", edits.prop_line("ID", org_id),
                 edits.prop_line("CREATED", stamp), ":END:"]
        lines += body.split("\n") if body.strip() else []
        return nl.join(lines) + nl

    def capture(self, text: str, target: str | None = None, todo: str | None = None,
                tags: list[str] | None = None, parent: Node | None = None, *,
                model: bool = False, body: str | None = None) -> WriteResult:
        """New entry with an :ID: and :CREATED:, under ``parent`` or at the end of a file.

        ``text``: the title line, then the body (or the body in ``body``).  Both are
        written as text (neutralise.py): the title on one line, no tags or ``@agent``
        request in it; no body line Org would read as structure.  ``model``: the body is a
        model's text -- Markdown rendered as Org (markdown_org.py), its headings as
        sub-entries of the new one."""
        if parent is None:  # where first: a refused target says why before the text does
            self._path(target or self.settings.capture_target)
        first, _, rest = normalise_lines(text).strip().partition("\n")
        rest = rest if body is None else body
        title = neutralise_title(first)
        if title.startswith("*"):
            title = title.lstrip("* ") or title
        if not title:
            raise WriteError("nothing to capture: give the entry's text")
        tags = check_tags(tags)
        org_id = str(uuid.uuid4())
        if parent is not None:
            snap, doc, idx = self._locate(parent)
            h = doc.headings[idx]
            odd = any("odd" in v.lower().split() for v in doc.keywords.get("STARTUP", []))
            # above the subtree's trailing blank lines: the next heading keeps its blank line
            level, pos = h.stars + (2 if odd else 1), edits.before_blank_lines(snap.text,
                                                                                h.subtree_end)
        else:
            rel = target or self.settings.capture_target
            snap = read_snapshot(self._path(rel))
            doc = parse(snap.text, str(snap.path))
            odd = any("odd" in v.lower().split() for v in doc.keywords.get("STARTUP", []))
            level, pos = 1, len(snap.text)
        words = title.split(" ", 1)
        if not todo and words[0] in (*doc.todo_keywords, *doc.done_keywords) and len(words) > 1:
            todo, title = words[0], words[1]  # "TODO buy milk" means a TODO entry
        if title.split(" ", 1)[0] == "COMMENT":  # a word, not Org's "commented out" flag
            title = "=COMMENT=" + title[7:]
        pm = re.match(r"\[#[A-Z0-9]\] (\S.*)", title)
        expected = pm.group(1) if pm else title  # "[#A] Call" keeps its priority cookie
        if todo and todo not in (*doc.todo_keywords, *doc.done_keywords):
            raise WriteError(f"{todo!r} is not a TODO keyword of {self._rel(snap.path)}; "
                             f"use one of: {', '.join([*doc.todo_keywords, *doc.done_keywords])}")
        kws = (*doc.todo_keywords, *doc.done_keywords)
        text_body = model_body(rest, level, odd, kws) if model else neutralise_body(rest)
        added = 1 + (len(parse(text_body).headings) if model else 0)
        nl = edits.newline_of(snap.text) if snap.text else "\n"
        entry = self._entry(level, title, text_body, todo, tags, org_id, nl)
        new_text = edits.insert_entry(snap.text, pos, entry)
        self._verify(doc, new_text, None, lambda x: x.id == org_id and x.title == expected,
                     f"capture {title!r}", added=added, tags=tags)
        return self._commit("capture", f"captured {title!r}", snap, new_text, "id:" + org_id)

    def note_path(self, title: str) -> str:
        """Where :meth:`new_note` puts a note titled ``title``: a free name in the notes
        folder (what a guard checks before the note is written)."""
        folder = self.settings.notes_dir.strip("/") or "."
        base = _slug(neutralise_title(title))
        n = 1
        while True:
            rel = f"{folder}/{base}{'' if n == 1 else f'-{n}'}.org"
            if not self._path(rel).exists():
                return rel
            n += 1

    def new_note(self, title: str, body: str = "", tags: list[str] | None = None, *,
                 model: bool = False) -> WriteResult:
        """A new atomic note: its own file under the notes folder, with an ID.  Title and
        body are written as text (see ``capture``)."""
        title = neutralise_title(title)
        if not title:
            raise WriteError("a note needs a title")
        tags = check_tags(tags)
        rel = self.note_path(title)
        snap = read_snapshot(self._path(rel))
        body = model_body(body, 1) if model else neutralise_body(body)
        added = 1 + (len(parse(body).headings) if model else 0)
        org_id = str(uuid.uuid4())
        head = f"#+TITLE: {title}\n" + (f"#+FILETAGS: :{':'.join(tags)}:\n" if tags else "") + "\n"
        text = head + self._entry(1, title, body, None, [], org_id, "\n")
        self._verify(parse(head, str(snap.path)), text, None, lambda x: x.id == org_id,
                     f"new note {title!r}", added=added, tags=[])
        return self._commit("new-note", f"new note {rel}", snap, text, "id:" + org_id)

    def undo(self, count: int = 1, batch: str | None = None) -> list[WriteResult]:
        """Revert the last ``count`` writes (or every write of ``batch``), newest first;
        stops at a file changed since."""
        out = []
        entries = self.store.journal(limit=count) if batch is None else \
            [e for e in self.store.journal(limit=10_000) if e.batch == batch]
        from ..guard.paths import confine

        for entry in entries:
            # the journal lives in the index store, outside the person's sight: a path in it
            # is re-confined to the memex (not to notes: undoing a skill write is allowed)
            path = confine(entry.path, self.root)
            snap = read_snapshot(path)
            if snap.hash != entry.after_hash:
                raise WriteError(
                    f"cannot undo #{entry.id} ({entry.description}): {path} changed since "
                    f"OpenCortex wrote it; undo your own edits there first, or edit by hand")
            before, _mode = self.store.journal_before(entry.id)
            self.store.begin()
            try:
                self.store.journal_mark_undone(entry.id)
                if before is None:
                    remove_file(snap)
                else:
                    atomic_write(snap, zlib.decompress(before))
                self.store.commit()
            except BaseException:
                self.store.rollback()
                raise
            rel = self._rel(path)
            self._indexed(rel)
            out.append(WriteResult("undo", rel, f"undid #{entry.id}: {entry.description}",
                                   entry.id, None, entry.after_hash, entry.before_hash))
        return out
