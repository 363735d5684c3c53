"""The OpenCortex MCP server: search, read, agenda, capture and recollect over a memex.

Built on the official ``mcp`` SDK (``MCPServer``).  Tools are plain synchronous
functions the SDK runs in worker threads; the memex's one lock (``Runtime.lock``)
serialises them, since they share its index connection.  Each call first brings the index up to date
(``Memex.sync`` is incremental: a stat per file when nothing changed).
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import json
import logging
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..errors import OpenCortexError
from ..memex import Memex

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["FILE_URI", "NODE_URI", "OpenCortexTools", "build_server", "node_ref"]

log = logging.getLogger("opencortex.mcp")

NODE_URI = "opencortex://node/{id}"
FILE_URI = "opencortex://file/{+path}"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                            idempotent_hint=True, open_world_hint=False)
DIALOGUE = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                           idempotent_hint=False, open_world_hint=False)
"""Reads records only (never writes them); each turn is kept in the recall session."""
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                         idempotent_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True,
                              idempotent_hint=False, open_world_hint=False)
"""Undo: takes back this client's own earlier writes."""
INSTRUCTIONS = """\
OpenCortex: the user's personal knowledge base (a "memex" of Org-mode files).
Find: `search` (ranked), `query` (structured: todo:NEXT tags:work ...), `agenda`,
`review` (what a span of days held), `links_suggest` (notes close to one that do not
link with it), `recollect` (recall past work with the user). Read: `read` nodes in full
(IDs, keys, FILE:LINE, titles or opencortex://node/... URIs). Write (each journaled; the
user's write policy may refuse): `capture`, `append`, `new_note`, `save_answer`, and on an
existing entry `todo`, `schedule`, `deadline`, `tag`, `priority`, `property`; `undo` takes
back this connection's own writes only. Resources: opencortex://node/{id},
opencortex://file/{path}, opencortex://files and opencortex://agenda.
"""
_T = TypeVar("_T")
_NODE_FIELDS = ("key", "id", "file", "line", "level", "title", "outline", "todo",
                "priority", "tags", "scheduled", "deadline", "closed")
NODE_PREFIX = "opencortex://node/"


def _node(n: Any) -> dict[str, Any]:
    d = n.to_dict()
    return {k: d.get(k) for k in _NODE_FIELDS}


def node_ref(ref: str) -> str:
    """A reference as `read` and the write tools take it: an ``opencortex://node/…`` URI
    (the resource's own address, URL-encoded) names the node after the prefix."""
    if ref.startswith(NODE_PREFIX):
        return urllib.parse.unquote(ref[len(NODE_PREFIX):])
    return ref


def _date(raw: str | None, name: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(raw) if raw else None
    except ValueError:
        raise ToolError(f"{name}={raw!r}: use YYYY-MM-DD") from None


def _written(results: list[Any]) -> dict[str, Any]:
    """What a write tool returns: each write, and how to take it back."""
    rows = [r.to_dict() for r in results]
    return {"writes": rows, "changed": any(r["changed"] for r in rows),
            "undo": "call `undo` (this connection's own writes only)"}


class OpenCortexTools:
    """What the MCP tools do, on one memex, independent of the protocol."""

    def __init__(self, memex: Memex, runtime: Runtime | None = None) -> None:
        if runtime is None:
            from ..runtime import Runtime

            runtime = Runtime(memex=memex)
        self.memex = memex
        self._lock = runtime.lock  # the memex's one lock, as the kernel and daemon hold
        self.access = runtime.access("mcp")
        """Every read and write goes through it (privacy, write policy, confinement,
        the undo journal of this connection's own writes)."""

    def _call(self, fn: Callable[[], _T], sync: bool = True) -> _T:
        with self._lock:
            try:
                if sync:
                    self.memex.sync()
                return fn()
            except OpenCortexError as e:
                raise ToolError(str(e)) from e

    # -- reads -----------------------------------------------------------------------
    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: str | None = None) -> dict[str, Any]:
        """Ranked hits (sparse, dense or hybrid), without the ranking internals."""
        def run() -> dict[str, Any]:
            res = self.access.search(query, mode, k, filters).to_dict()
            for h in res["hits"]:
                h.pop("why", None)
            return res

        return self._call(run)

    def answer(self, question: str) -> dict[str, Any]:
        """The notes answer (``skills.notes_answer``) over what this client may see."""
        def run() -> dict[str, Any]:
            from ..skills.notes_answer import answer, quoted, reply_text

            a = answer(self.access, question)
            return {"answered": a.answered, "answer": reply_text(a),
                    "citations": list(dict.fromkeys(u.citation for u in quoted(a))),
                    "passages": [u.to_dict() for u in quoted(a)],
                    "closest": [h.key for h in a.hits[:3]] if not a.answered else []}

        return self._call(run)

    def read(self, refs: list[str], depth: int = 1, budget: int = 4000) -> dict[str, Any]:
        """The nodes' full text, then what they link to, within ``budget`` tokens."""
        refs = [node_ref(r) for r in refs]
        return self._call(lambda: self.access.read(refs, depth, budget).to_dict())

    def query(self, expr: str, limit: int = 50, order: str = "file",
              today: str | None = None, body: bool = False) -> dict[str, Any]:
        """Nodes matching a structured query (as `opencortex query`)."""
        day = _date(today, "today")

        def run() -> dict[str, Any]:
            nodes = self.access.query(expr, limit, order, day, body)
            rows = [_node(n) | ({"body": n.body} if body else {}) for n in nodes]
            return {"query": expr, "count": len(rows), "nodes": rows}

        return self._call(run)

    def agenda(self, days: int = 7, today: str | None = None) -> dict[str, Any]:
        """Scheduled and deadlines in the next ``days``, overdue items, next actions."""
        day = _date(today, "today")

        def run() -> dict[str, Any]:
            view = self.access.agenda(today=day, days=days)
            out: dict[str, Any] = {"today": (day or dt.date.today()).isoformat(),
                                   "days": days}
            out.update({k: [_node(n) for n in v] for k, v in view.items()})
            return out

        return self._call(run)

    def review(self, when: str | None = None, start: str | None = None,
               end: str | None = None, now: str | None = None) -> dict[str, Any]:
        """What a span of days held (done, clocked, captured, journal, sessions)."""
        try:
            return self._review(when, start, end, now)
        except OverflowError:  # a span's end (the day after it) or week past year 9999
            raise ToolError("that span runs off the calendar (years 1 to 9999): pick days "
                            "before 9999-12-25") from None

    def _review(self, when: str | None, start: str | None, end: str | None,
                now: str | None) -> dict[str, Any]:
        from ..insight.review import resolve_range, review

        base = dt.datetime.combine(_date(now, "now") or dt.date.today(), dt.time())
        a, b = _date(start, "start"), _date(end, "end")
        if when and (a or b):
            raise ToolError("give `when` or `start`/`end`, not both")
        if when:
            got = resolve_range(when, base)
            if got is None:
                raise ToolError(f"no span of days in {when!r} (try 'last week', "
                                "'this month', 'last Tuesday', or start/end dates)")
            lo, hi, phrase = got
        elif a or b:
            lo = a or base.date().replace(day=1)
            last = b or base.date()
            if last < lo:
                raise ToolError("end is before start")
            lo, hi, phrase = lo, last + dt.timedelta(days=1), f"{lo} to {last}"
        else:
            lo = base.date() - dt.timedelta(days=base.weekday())
            hi, phrase = lo + dt.timedelta(days=7), "this week"
        return self._call(lambda: review(self.memex, lo, hi, phrase,
                                         hide=self.access.hide).to_dict())

    def links_suggest(self, node: str, k: int = 5) -> dict[str, Any]:
        """Notes close in meaning to ``node`` that neither link to it nor from it."""
        from ..insight.links_suggest import suggest

        ref = node_ref(node)

        def run() -> dict[str, Any]:
            self.access.resolve(ref)  # withheld: "not found", before any model work
            n, found = suggest(self.memex, ref, k, hide=self.access.hide)
            return {"node": {"key": n.key, "title": n.title, "file": n.file,
                             "line": n.line},
                    "suggestions": [s.to_dict() for s in found]}

        return self._call(run)

    def recollect(self, message: str, session_id: str | None = None) -> dict[str, Any]:
        """One turn of a recall dialogue: the first call starts one (the caller invoked
        it), later calls pass the person's next utterance with the session_id."""
        from ..recall.engine import RecallError

        def run() -> dict[str, Any]:
            engine = self.access.recall()
            try:
                rnd = (engine.reply(session_id, message) if session_id
                       else engine.start(message, invoked=True))
            except RecallError as e:
                raise ToolError(f"{e} — omit session_id to start a new recall") from None
            return {"session_id": rnd.session, "state": rnd.state, "text": rnd.render(),
                    "round": rnd.to_dict()}

        return self._call(run, sync=False)

    # -- writes (each through the Access: privacy, policy, validation, journal) -----
    def capture(self, text: str, to: str | None = None, todo: str | None = None,
                tags: list[str] | None = None) -> dict[str, Any]:
        """Write a new entry; its key, ID, file and line."""
        target = node_ref(to) if to else None

        def run() -> dict[str, Any]:
            res = self.access.capture(text, to=target, todo=todo, tags=tags or None)
            return self._created(res)

        return self._call(run)

    def _created(self, res: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"key": res.node, "file": res.file, "id": None,
                               "line": None, "description": res.description,
                               "journal_id": res.journal_id}
        self.memex.sync()
        if res.node:
            hits = self.memex.store.nodes_by_ref(res.node)
            if len(hits) == 1:
                out["id"], out["line"] = hits[0].id, hits[0].line
        return out

    def new_note(self, title: str, body: str = "", tags: list[str] | None = None
                 ) -> dict[str, Any]:
        return self._call(lambda: self._created(self.access.new_note(title, body, tags)))

    def save_answer(self, node: str, answer: str, question: str = "",
                    citations: list[str] | None = None) -> dict[str, Any]:
        """An answer filed as a child entry under ``node``, as chat's ``/save`` files it
        (Markdown as Org, its citations as links)."""
        from ..skills.save import answer_entry

        ref = node_ref(node)

        def run() -> dict[str, Any]:
            parent = self.access.resolve(ref)
            text = answer_entry(self.access.view(), parent, question, answer, citations or [])
            res = self.access.capture(text, to=f"id:{parent.id}" if parent.id
                                      else parent.key)
            return self._created(res) | {"under": parent.key}

        return self._call(run)

    def edit(self, op: str, node: str, *args: Any) -> dict[str, Any]:
        """One change to an existing entry: ``op`` is the Access method."""
        ref = node_ref(node)
        fn = getattr(self.access, op)
        return self._call(lambda: _written([fn(ref, *args)]))

    def schedule(self, kind: str, node: str, date: str, repeat: str | None) -> dict[str, Any]:
        from ..schema import ValidationError, when

        try:
            day = when(date)
        except ValidationError as e:
            raise ToolError(str(e)) from None
        return self.edit("set_date", node, kind, day, repeat or None)

    def undo(self, count: int = 1) -> dict[str, Any]:
        return self._call(lambda: {"undone": [r.to_dict()
                                              for r in self.access.undo_own(count)]})

    # -- resources -------------------------------------------------------------------
    def _resource(self, fn: Callable[[], _T]) -> _T:
        with self._lock:
            try:
                self.memex.sync()
                return fn()
            except OpenCortexError as e:
                raise ResourceError(str(e)) from e

    def node_text(self, ref: str) -> str:
        """The Org text of a node (its whole subtree), read from the file."""
        return self._resource(lambda: self.access.node_text(ref))

    def file_text(self, path: str) -> str:
        return self._resource(lambda: self.access.file_text(urllib.parse.unquote(path)))

    def files(self) -> str:
        return self._resource(lambda: json.dumps({"files": self.access.files()},
                                                 ensure_ascii=False))

    def agenda_text(self) -> str:
        return self._resource(lambda: json.dumps(self.agenda(7), ensure_ascii=False,
                                                 default=str))


def _tool(server: MCPServer, annotations: ToolAnnotations, title: str,
          egress: Callable[[Any], Any], name: str | None = None
          ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool, its docstring (dedented) as the description; whatever it returns
    passes the egress check (``Access.egress``) on its way to the client: the one wrapper
    every tool is registered through, so a tool added later is covered too."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            try:
                out = fn(*args, **kwargs)
            except Exception as e:  # an error's text leaves to the client too
                said = str(e)
                safe = str(egress(said))
                if safe != said:
                    raise ToolError(safe) from None
                raise
            return egress(out)

        server.add_tool(checked, name=name, title=title,
                        description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=annotations)
        return checked

    return deco


NodeArg = Annotated[str, Field(min_length=1, description=(
    "The entry: an ID, a key (FILE::Outline/Title), FILE:LINE, an exact title, or an "
    "opencortex://node/... URI."))]
DateArg = Annotated[str, Field(description=(
    "YYYY-MM-DD, 'YYYY-MM-DD HH:MM', today, tomorrow, +3d, +1w, +1m, or none to remove."))]
RepeatArg = Annotated[str | None, Field(description="A repeater: +1w, ++1d, .+1m.")]


def _date_tool(t: OpenCortexTools, kind: str) -> Callable[..., dict[str, Any]]:
    """The tool that sets ``kind`` (SCHEDULED or DEADLINE): one shape for both."""

    def set_date(node: NodeArg, date: DateArg, repeat: RepeatArg = None) -> dict[str, Any]:
        return t.schedule(kind, node, date, repeat)

    set_date.__doc__ = f"Set (or remove) an entry's {kind} date."
    return set_date


def build_server(memex: Memex, runtime: Runtime | None = None) -> MCPServer:
    """An MCP server for ``memex`` (not started: call ``.run()`` for stdio)."""
    t = OpenCortexTools(memex, runtime)
    server: MCPServer = MCPServer("opencortex", title="OpenCortex",
                                  version=__version__, instructions=INSTRUCTIONS,
                                  log_level="WARNING")
    egress = t.access.egress

    @_tool(server, READ_ONLY, "Search the memex", egress)
    def search(
        query: Annotated[str, Field(description="What to look for: words, \"a phrase\", "
                                    "or a question.")],
        k: Annotated[int, Field(ge=1, le=100, description="How many hits at most.")] = 10,
        mode: Annotated[Literal["sparse", "dense", "hybrid"] | None, Field(
            description="sparse (BM25 keywords), dense (embeddings) or hybrid (both "
            "fused); default: hybrid when vectors exist, else sparse.")] = None,
        filters: Annotated[str | None, Field(
            description="Optional structured filter as in `opencortex query`, e.g. "
            "'todo:NEXT tags:work'; only matching nodes are ranked.")] = None,
    ) -> dict[str, Any]:
        """Search the user's notes (Org headlines with their text). Returns ranked hits,
        each with id, key, file, line, outline (ancestor titles then its own), title,
        score and a snippet; pass a hit's id or key to `read` for the full text."""
        return t.search(query, k, mode, filters)

    @_tool(server, READ_ONLY, "Answer from the notes", egress)
    def answer(
        question: Annotated[str, Field(description="A question about what the user's "
                                       "notes hold, asked as a person would.")],
    ) -> dict[str, Any]:
        """Answer a question from the user's notes, offline: the sentences, list items or
        table rows that answer it, each cited (file:line, id:), in 'answer', and the notes
        quoted in 'citations'. When nothing scores above the calibrated threshold,
        'answered' is false and the answer says what was searched and the closest notes."""
        return t.answer(question)

    @_tool(server, READ_ONLY, "Read nodes in full", egress)
    def read(
        refs: Annotated[list[str], Field(min_length=1, description=(
            "Nodes to read: an ID, a key from `search` (id:… or FILE::Outline/Title), "
            "FILE:LINE, or an exact title."))],
        depth: Annotated[int, Field(ge=0, le=5, description=(
            "How many link hops to follow from the requested nodes (0: just them)."))] = 1,
        budget: Annotated[int, Field(ge=100, le=100_000, description=(
            "Token budget for all the text returned; what does not fit is listed "
            "under 'omitted'."))] = 4000,
    ) -> dict[str, Any]:
        """Read nodes' full Org text (whole subtrees), then the nodes they link to,
        breadth-first within a token budget. Each node comes with its backlinks."""
        return t.read(refs, depth, budget)

    @_tool(server, READ_ONLY, "Query by structure", egress)
    def query(
        expr: Annotated[str, Field(min_length=1, description=(
            "A structured query as `opencortex query` takes it, e.g. 'todo:NEXT "
            "tags:work', 'deadline:+7', 'prop:K=V', 'file:gtd.org', plus words."))],
        limit: Annotated[int, Field(ge=1, le=500, description="How many nodes at most."
                                    )] = 50,
        order: Annotated[Literal["file", "rank", "scheduled", "deadline", "closed"], Field(
            description="Sort order: file order (default; by relevance when the query "
            "has words), rank, or by that date.")] = "file",
        today: Annotated[str | None, Field(description=(
            "Resolve relative dates (today, +3d) against this day (YYYY-MM-DD)."))] = None,
        body: Annotated[bool, Field(description="Include each node's own text.")] = False,
    ) -> dict[str, Any]:
        """Find entries by structure: TODO state, tags, priority, dates, properties, file,
        plus optional words. Returns each node's key, id, file, line, outline and
        planning; pass a key to `read` or to the editing tools."""
        return t.query(expr, limit, order, today, body)

    @_tool(server, READ_ONLY, "Agenda", egress)
    def agenda(
        days: Annotated[int, Field(ge=0, le=366, description=(
            "How many days ahead to look for scheduled items and deadlines."))] = 7,
        today: Annotated[str | None, Field(description=(
            "Pretend today is this date (YYYY-MM-DD); default: the real today."))] = None,
    ) -> dict[str, Any]:
        """The user's agenda: open tasks scheduled or due in the next `days` days,
        overdue tasks, and NEXT actions, each with file, line, outline and dates."""
        return t.agenda(days, today)

    @_tool(server, WRITES, "Capture an entry", egress)
    def capture(
        text: Annotated[str, Field(min_length=1, description=(
            "The entry: first line is the headline, further lines its body."))],
        to: Annotated[str | None, Field(description=(
            "Where to file it: an .org file (e.g. inbox.org) or a node (ID, "
            "FILE::Outline/Title, exact title); default: the inbox."))] = None,
        todo: Annotated[str | None, Field(description=(
            "Make it a task with this TODO keyword (e.g. TODO, NEXT)."))] = None,
        tags: Annotated[list[str] | None, Field(description=(
            "Tags for the entry (letters, digits, _@#%)."))] = None,
    ) -> dict[str, Any]:
        """Write a new entry to the memex (with :ID: and :CREATED:). The write is
        journaled and can be taken back with `undo`. Returns the new entry's
        key, id, file and line."""
        return t.capture(text, to, todo, tags)

    @_tool(server, WRITES, "Append to an entry", egress)
    def append(
        node: NodeArg,
        text: Annotated[str, Field(min_length=1, description=(
            "Text to add at the end of the entry's own section (kept as text: lines Org "
            "would read as structure are escaped)."))],
    ) -> dict[str, Any]:
        """Add text to the end of an existing entry's own section."""
        return t.edit("append", node, text)

    @_tool(server, WRITES, "Set a TODO state", egress)
    def todo(
        node: NodeArg,
        state: Annotated[str, Field(min_length=1, description=(
            "A TODO keyword of the entry's file (e.g. TODO, NEXT, DONE), or 'none' to "
            "clear it."))],
    ) -> dict[str, Any]:
        """Change an entry's TODO state as Org does: DONE adds CLOSED (a repeating task
        moves to its next date instead), reopening removes it."""
        return t.edit("set_todo", node, state)

    for kind, name, title in (("SCHEDULED", "schedule", "Schedule an entry"),
                              ("DEADLINE", "deadline", "Set a deadline")):
        _tool(server, WRITES, title, egress, name)(_date_tool(t, kind))

    @_tool(server, WRITES, "Change tags", egress)
    def tag(
        node: NodeArg,
        changes: Annotated[list[str], Field(min_length=1, description=(
            "+tag (or tag) adds, -tag removes; tags are letters, digits, _@#%."))],
    ) -> dict[str, Any]:
        """Add or remove an entry's own tags."""
        return t.edit("tag", node, changes)

    @_tool(server, WRITES, "Set a priority", egress)
    def priority(
        node: NodeArg,
        level: Annotated[str, Field(description="A, B, C, or none to remove it.")],
    ) -> dict[str, Any]:
        """Set (or remove) an entry's priority cookie ([#A])."""
        return t.edit("set_priority", node, None if level.lower() == "none" else level)

    @_tool(server, WRITES, "Set a property", egress)
    def property(
        node: NodeArg,
        key: Annotated[str, Field(min_length=1, description=(
            "The property name (no spaces; not END)."))],
        value: Annotated[str | None, Field(description=(
            "Its value (one line); omit or null to remove the property."))] = None,
    ) -> dict[str, Any]:
        """Set (or remove) a property in the entry's :PROPERTIES: drawer."""
        return t.edit("set_property", node, key, value)

    @_tool(server, WRITES, "Create a note", egress)
    def new_note(
        title: Annotated[str, Field(min_length=1, description="The note's title.")],
        body: Annotated[str, Field(description="Its first text.")] = "",
        tags: Annotated[list[str] | None, Field(description=(
            "File tags (letters, digits, _@#%)."))] = None,
    ) -> dict[str, Any]:
        """Create an atomic note: its own file in the notes folder, with an ID."""
        return t.new_note(title, body, tags)

    @_tool(server, WRITES, "Save an answer under an entry", egress)
    def save_answer(
        node: NodeArg,
        answer: Annotated[str, Field(min_length=1, description=(
            "The answer (Markdown is rendered as Org text)."))],
        question: Annotated[str, Field(description=(
            "The question it answers (the new entry's title).")) ] = "",
        citations: Annotated[list[str] | None, Field(description=(
            "Where the answer comes from: id:..., FILE:LINE or URLs (become links)."))
        ] = None,
    ) -> dict[str, Any]:
        """File an answer as a child entry "Answer: QUESTION" under an existing entry,
        its sources as links (as chat's /save does)."""
        return t.save_answer(node, answer, question, citations)

    @_tool(server, DESTRUCTIVE, "Undo my writes", egress)
    def undo(
        count: Annotated[int, Field(ge=1, le=100, description=(
            "How many of this connection's writes to take back, newest first."))] = 1,
    ) -> dict[str, Any]:
        """Take back this connection's own last writes (never the user's, nor another
        client's); refused if the file changed since."""
        return t.undo(count)

    @_tool(server, READ_ONLY, "Review a span of days", egress)
    def review(
        when: Annotated[str | None, Field(description=(
            "A span in words: 'last week', 'this month', 'last Tuesday', 'since the "
            "1st'; default: this week."))] = None,
        start: Annotated[str | None, Field(description="First day (YYYY-MM-DD).")] = None,
        end: Annotated[str | None, Field(description="Last day (YYYY-MM-DD).")] = None,
        now: Annotated[str | None, Field(description=(
            "Resolve `when` against this day (YYYY-MM-DD); default: today."))] = None,
    ) -> dict[str, Any]:
        """What a span of days held: tasks done, time clocked per project and tag,
        captures, journal entries, meetings and agent sessions, each with file:line."""
        return t.review(when, start, end, now)

    @_tool(server, READ_ONLY, "Suggest links", egress)
    def links_suggest(
        node: NodeArg,
        k: Annotated[int, Field(ge=1, le=20, description="How many suggestions.")] = 5,
    ) -> dict[str, Any]:
        """Notes close in meaning to an entry that neither link to it nor are linked
        from it, each with the passage that makes them close (add a link with
        `append`)."""
        return t.links_suggest(node, k)

    @_tool(server, DIALOGUE, "Recollect past work", egress)
    def recollect(
        message: Annotated[str, Field(description=(
            "What you want to recall, or your reply in an ongoing recollection."))],
        session_id: Annotated[str | None, Field(description=(
            "Omit on the first call; then pass the session_id every reply returned."))
        ] = None,
    ) -> dict[str, Any]:
        """Recall past work the user cannot name ("that session a few weeks ago where we
        fixed the flaky login test") from their conversation records, coding-agent
        transcripts, git history and notes. Each call returns one round: a story whose
        every claim cites an opened record (state "presented"), one question ("asked"),
        or an offer to search wider ("offered"). Relay it to the user and pass their
        exact reply back with the session_id; only the user can confirm a candidate
        ("identified" returns the recalled context). Never answer for the user."""
        return t.recollect(message, session_id)

    @server.resource(NODE_URI, name="node", title="Memex node", mime_type="text/x-org",
                     description="A node's Org text (its whole subtree). {id}: an Org ID, "
                     "or any node reference `read` accepts, URL-encoded.")
    def node(id: str) -> str:
        return str(egress(t.node_text(id)))

    @server.resource(FILE_URI, name="file", title="Memex file", mime_type="text/x-org",
                     description="A whole .org file of the memex (path relative to it, "
                     "as opencortex://files lists), private entries cut out.")
    def file(path: str) -> str:
        return str(egress(t.file_text(path)))

    @server.resource("opencortex://files", name="files", title="Memex files",
                     mime_type="application/json",
                     description="The memex's .org files, each with its entry count.")
    def files() -> str:
        return str(egress(t.files()))

    @server.resource("opencortex://agenda", name="agenda", title="Agenda (7 days)",
                     mime_type="application/json",
                     description="Scheduled, deadlines, overdue and next actions for the "
                     "coming week (the `agenda` tool for other spans).")
    def agenda_resource() -> str:
        return str(egress(t.agenda_text()))

    @server.prompt(name="weekly_review", title="Weekly review",
                   description="Review a span of days with the user and plan what next.")
    def weekly_review(when: str = "this week") -> str:
        return (f"Help me review {when}. Call the `review` tool with when={when!r}, then "
                "the `agenda` tool. Summarise what got done and where time went (cite "
                "file:line for each claim), list what is overdue or due soon, and ask me "
                "which next actions to set. Change nothing until I say so; then use `todo`, "
                "`schedule` or `capture`.")

    @server.prompt(name="answer_from_notes", title="Answer from my notes",
                   description="Answer a question from the notes only, citing them.")
    def answer_from_notes(question: str) -> str:
        return ("Answer this question from my notes only. Use `search`, then `read` the "
                "best hits; cite each fact as FILE:LINE; say plainly if the notes do not "
                "hold the answer. If I ask you to keep the answer, use `save_answer` under "
                f"the note it belongs to.\n\nQuestion: {question}")

    server.opencortex_tools = t  # type: ignore[attr-defined]
    return server
