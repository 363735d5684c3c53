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
import logging
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

__all__ = ["NODE_URI", "OpenCortexTools", "build_server"]

log = logging.getLogger("opencortex.mcp")

NODE_URI = "opencortex://node/{id}"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                            idempotent_hint=True, open_world_hint=False)
DIALOGUE = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                           idempotent_hint=False, open_world_hint=False)
"""Reads records only (never writes them); each turn is kept in the recall session."""
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                         idempotent_hint=False, open_world_hint=False)
INSTRUCTIONS = """\
OpenCortex: the user's personal knowledge base (a "memex" of Org-mode files).
Use `search` to find notes, `read` to read chosen nodes in full (following their
links within a token budget), `agenda` for what is scheduled, due, overdue or next,
and `capture` to write a new entry (it goes to the inbox unless `to` names a file or
node). Nodes are also resources: opencortex://node/{id} gives a node's Org text.
"""
_T = TypeVar("_T")
_NODE_FIELDS = ("key", "id", "file", "line", "level", "title", "outline", "todo",
                "priority", "tags", "scheduled", "deadline", "closed")


def _node(n: Any) -> dict[str, Any]:
    d = n.to_dict()
    return {k: d.get(k) for k in _NODE_FIELDS}


class OpenCortexTools:
    """What the MCP tools do, on one memex, independent of the protocol."""

    def __init__(self, memex: Memex, runtime: Runtime | None = None) -> None:
        if runtime is None:
            from ..runtime import Runtime

            runtime = Runtime(memex=memex)
        self.memex = memex
        self._lock = runtime.lock  # the memex's one lock, as the kernel and daemon hold
        self.access = runtime.access("mcp")
        """Every read and write goes through it (privacy, write policy, confinement)."""

    def _call(self, fn: Callable[[], _T], sync: bool = True) -> _T:
        with self._lock:
            try:
                if sync:
                    self.memex.sync()
                return fn()
            except OpenCortexError as e:
                raise ToolError(str(e)) from e

    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: str | None = None) -> dict[str, Any]:
        """Ranked hits (sparse, dense or hybrid), without the ranking internals."""
        def run() -> dict[str, Any]:
            res = self.access.search(query, mode, k, filters).to_dict()
            for h in res["hits"]:
                h.pop("why", None)
            return res

        return self._call(run)

    def read(self, refs: list[str], depth: int = 1, budget: int = 4000) -> dict[str, Any]:
        """The nodes' full text, then what they link to, within ``budget`` tokens."""
        return self._call(lambda: self.access.read(refs, depth, budget).to_dict())

    def agenda(self, days: int = 7, today: str | None = None) -> dict[str, Any]:
        """Scheduled and deadlines in the next ``days``, overdue items, next actions."""
        try:
            day = dt.date.fromisoformat(today) if today else None
        except ValueError:
            raise ToolError(f"today={today!r}: use YYYY-MM-DD") from None

        def run() -> dict[str, Any]:
            view = self.access.agenda(today=day, days=days)
            out: dict[str, Any] = {"today": (day or dt.date.today()).isoformat(),
                                   "days": days}
            out.update({k: [_node(n) for n in v] for k, v in view.items()})
            return out

        return self._call(run)

    def capture(self, text: str, to: str | None = None, todo: str | None = None,
                tags: list[str] | None = None) -> dict[str, Any]:
        """Write a new entry; its key, ID, file and line."""

        def run() -> dict[str, Any]:
            res = self.access.capture(text, to=to, todo=todo, tags=tags or None)
            out: dict[str, Any] = {"key": res.node, "file": res.file, "id": None,
                                   "line": None, "description": res.description,
                                   "journal_id": res.journal_id}
            self.memex.sync()
            if res.node:
                hits = self.memex.store.nodes_by_ref(res.node)
                if len(hits) == 1:
                    out["id"], out["line"] = hits[0].id, hits[0].line
            return out

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

    def node_text(self, ref: str) -> str:
        """The Org text of a node (its whole subtree), read from the file."""
        with self._lock:
            try:
                self.memex.sync()
                return self.access.node_text(ref)
            except OpenCortexError as e:
                raise ResourceError(str(e)) from e


def _tool(server: MCPServer, annotations: ToolAnnotations, title: str,
          egress: Callable[[Any], Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool, its docstring (dedented) as the description; whatever it returns
    passes the egress check (``Access.egress``) on its way to the client: the one wrapper
    every tool is registered through, so a tool added later is covered too."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            return egress(fn(*args, **kwargs))

        server.add_tool(checked, title=title, description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=annotations)
        return checked

    return deco


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
        tags: Annotated[list[str] | None, Field(description="Tags for the entry.")] = None,
    ) -> dict[str, Any]:
        """Write a new entry to the memex (with :ID: and :CREATED:). The write is
        journaled and can be undone with `opencortex undo`. Returns the new entry's
        key, id, file and line."""
        return t.capture(text, to, todo, tags)

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

    server.opencortex_tools = t  # type: ignore[attr-defined]
    return server
