"""The HTTP face of the kernel: a Starlette app that turns requests into signals.

Gateways hold no agent logic: every route validates its input (opencortex.schema), then
either submits a signal (events, chat) or reads the memex through the guarded facade
(opencortex.access: privacy, policy, confinement) under the kernel's lock.  The Gate in
front checks the Host header, rate, token and body size, and bounds each request in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..memex import Memex
from ..signal import conversation
from .edge import CLIENT_SENSORS, META_FIELDS, allowed_host, host_refusal, in_thread

if TYPE_CHECKING:
    from ..pipeline.kernel import Kernel

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_TIMEOUT", "RateLimiter", "create_app"]

DEFAULT_MAX_BODY = 2 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take before its first byte (routes that wait on the person:
this plus the approval timeout)."""
LONG_ROUTES = ("/v1/chat", "/v1/chat/completions")
WATCH_EVERY = 0.25
"""Seconds between checks of the request deadlines."""
SEARCH_MODES = ("hybrid", "sparse", "dense")


class JSON(JSONResponse):
    """JSON that never fails on a stray datetime or Path in reply data."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8")


def error(status: int, message: str, headers: dict[str, str] | None = None,
          kind: str | None = None) -> JSON:
    """The one error body (:func:`opencortex.errors.error_body`, as the CLI's ``--json``);
    ``kind`` defaults to the status's name, e.g. ``Unauthorized``."""
    from http import HTTPStatus

    from ..errors import error_body

    if kind is None:
        try:
            kind = HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")
        except ValueError:
            kind = "error"
    return JSON(error_body(message, status, kind), status, headers=headers)


# -- gate: rate limit, auth, body size, before anything is parsed -------------------------
class RateLimiter:
    """A token bucket per client address: ``rate`` requests/s sustained, ``burst`` at once.
    Runs on the event loop only, so it needs no lock."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self._buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str) -> float:
        """0 if allowed; else seconds until a token is available."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > 10_000:  # forget full buckets (idle clients)
            full = [k for k, (t, _) in self._buckets.items() if t >= self.burst - 1]
            for k in full:
                self._buckets.pop(k, None)
        return 0.0


class Gate:
    """Pure ASGI middleware (cheap, and safe for streaming responses): rate limit, then
    bearer token (all but ``GET /healthz``), then declared body size."""

    def __init__(self, app: ASGIApp, token: str, limiter: RateLimiter, max_body: int, *,
                 timeout: float = DEFAULT_TIMEOUT, long_timeout: float | None = None,
                 hosts: tuple[str, ...] = ()) -> None:
        self.app = app
        self.token = token.encode()
        self.limiter = limiter
        self.max_body = max_body
        self.timeout = timeout
        self.long_timeout = long_timeout or timeout
        self.hosts = hosts
        self._hosts_ok: set[tuple[Any, Any]] = set()
        self._inflight: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._watchdog: asyncio.Future[None] | None = None
        """Extra Host names a loopback daemon answers (``--allow-host``)."""
        self.state: Any = getattr(app, "state", None)
        """The wrapped app's state (kernel, memex): serve() reaches the kernel through it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host, server = headers.get(b"host"), scope.get("server")
        server = tuple(server) if server is not None else None
        if (host, server) not in self._hosts_ok:
            if not allowed_host(server, host, self.hosts):
                await error(421, host_refusal(host, server))(scope, receive, send)
                return
            if len(self._hosts_ok) < 64:  # the few names real clients send, remembered
                self._hosts_ok.add((host, server))
        client = (scope.get("client") or ("?", 0))[0]
        wait = self.limiter.allow(client)
        if wait:
            await error(429, "too many requests: slow down",
                        {"Retry-After": str(max(1, round(wait)))})(scope, receive, send)
            return
        if not (scope["path"] == "/healthz" and scope["method"] in ("GET", "HEAD")):
            auth = headers.get(b"authorization", b"")
            scheme, _, given = auth.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(),
                                                                      self.token):
                await error(401, "missing or wrong bearer token (see `opencortex token`)",
                            {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        length = headers.get(b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_body
            except ValueError:
                await error(400, "bad Content-Length")(scope, receive, send)
                return
            if too_big:
                await error(413, f"body over {self.max_body} bytes")(scope, receive, send)
                return
        await self._bounded(scope, receive, send)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the request; if no response has started within the timeout, cancel it and
        answer 504 (a stream, once started, runs on).  One watchdog task checks the
        deadlines, so a request costs a dict entry, not a timer."""
        limit = self.long_timeout if scope["path"] in LONG_ROUTES else self.timeout
        task = asyncio.current_task()
        assert task is not None
        started = False

        async def send_(message: Any) -> None:
            nonlocal started
            if not started and message["type"] == "http.response.start":
                started = True
                self._inflight.pop(task, None)
            await send(message)

        self._inflight[task] = time.monotonic() + limit
        if self._watchdog is None or self._watchdog.done():
            self._watchdog = asyncio.ensure_future(self._watch())
        try:
            await self.app(scope, receive, send_)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()
            if not started:
                await error(504, f"the request took longer than {limit:g} s and was "
                            "stopped; the daemon is still serving — try again, or check "
                            "`opencortex doctor` if it keeps happening")(scope, receive, send)
        finally:
            self._inflight.pop(task, None)

    async def _watch(self) -> None:
        while self._inflight:
            await asyncio.sleep(WATCH_EVERY)
            now = time.monotonic()
            for task, deadline in list(self._inflight.items()):
                if deadline <= now:
                    self._inflight.pop(task, None)
                    self._expired.add(task)
                    task.cancel()


async def read_json(request: Request) -> Any:
    """The body as JSON; 413 past the size limit even without Content-Length, 400 if not
    JSON — so a malformed request never reaches the pipeline."""
    limit: int = request.app.state.max_body
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"body over {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise HTTPException(400, "empty body: send a JSON object")
    from ..schema import ValidationError, loads, no_nul_anywhere

    try:
        body = loads(raw)
        no_nul_anywhere(body, "body")
    except ValidationError as e:
        raise HTTPException(400, f"body: {e}") from None
    return body


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise HTTPException(422, "the body must be a JSON object")
    return body


def cancel_pending(kernel: Kernel, by: str = "shutdown") -> int:
    """Deny every open approval (so waiting requests finish when the daemon stops)."""
    n = 0
    for p in kernel.approvals.pending():
        with contextlib.suppress(Exception):
            kernel.approvals.cancel(p.id, by=by)
            n += 1
    return n


async def run_chat(kernel: Kernel, text: str, session: str, source: str,
                   history: list[dict[str, str]] | None = None, deltas: bool = False
                   ) -> AsyncIterator[tuple[str, Any]]:
    """Submit one request; yield ``("delta", text)`` (a model answer's text as it streams:
    provisional), ``("reply", (text, data))`` and ``("approval", pending)`` as the pipeline
    produces them, without holding a thread while it works or waits.
    ``history``: the conversation's earlier turns (``{"role", "text"}``) the client sent,
    for skills to read the request in their context (``opencortex.signal.history``)."""
    loop = asyncio.get_running_loop()
    q: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(item: tuple[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
            loop.call_soon_threadsafe(q.put_nowait, item)

    meta: dict[str, Any] = {"source": source, "session": session, "gateway": "http",
                            "reply": lambda t, d=None: put(("reply", (t, d))),
                            "on_approval": lambda p: put(("approval", p))}
    if history:
        meta["history"] = history
    if deltas:  # only a streaming client sees the words before the verified reply
        meta["partial"] = lambda t: put(("delta", t))
    fut = kernel.submit({"payload": {"sensor": "user-input", "text": text}, "meta": meta})
    if fut is None:
        raise HTTPException(503, "not accepting requests (shutting down)")
    fut.add_done_callback(lambda _f: put(("done", None)))
    while True:
        kind, item = await q.get()
        if kind == "done":
            return
        yield kind, item


def final_data(replies: list[tuple[str, Any]]) -> Any:
    """Structured data of the final reply (intents/results/answer/citations), else null."""
    for _, d in reversed(replies):
        if isinstance(d, dict) and "intents" in d:
            return d
    return replies[-1][1] if replies else None


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n" \
        .encode()


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


# -- routes --------------------------------------------------------------------------------
async def healthz(request: Request) -> Response:
    return JSON({"ok": True, "version": __version__})


async def events(request: Request) -> Response:
    from ..signal import ASYNC_SENSORS, SYNC_SENSORS, SignalError, inject

    body = await read_json(request)
    if isinstance(body, dict):
        # a client's signal is what the API documents: a payload, meta.source and
        # meta.session.  The kernel's own keys (the write batch its undo rolls back, whether
        # the turn is recorded, an approval, a history), the type and depth are the
        # kernel's to set: a client that sent them would steer them
        meta = body.get("meta")
        body = {k: v for k, v in body.items() if k not in ("meta", "type", "depth")}
        if isinstance(meta, dict):
            body["meta"] = {k: meta[k] for k in META_FIELDS if k in meta}
    raw = body.get("payload", body) if isinstance(body, dict) else None
    if isinstance(raw, dict) and raw.get("text") is not None and \
            not isinstance(raw["text"], str):
        raise HTTPException(422, "payload.text must be a string")
    try:
        sig = inject(body)
    except SignalError as e:
        raise HTTPException(422, str(e)) from None
    p = sig.payload
    if sig.sensor == "interrupt":
        raise HTTPException(422, "interrupt stops the whole daemon's intake: send SIGTERM "
                                 "to stop it instead")
    if sig.sensor not in CLIENT_SENSORS:
        what = ("the kernel's own feedback, not a client's to send"
                if sig.sensor in ASYNC_SENSORS | SYNC_SENSORS else "unknown")
        raise HTTPException(422, f"sensor {sig.sensor!r} is {what}: one of "
                                 f"{', '.join(sorted(CLIENT_SENSORS))}")
    memex: Memex = request.app.state.memex
    from ..errors import NodeNotFoundError
    from ..schema import ValidationError
    from .edge import check_event

    def validate() -> None:
        check_event(sig.sensor, p, sig.meta, memex.root)
        if sig.sensor == "point-update" and p.get("id"):  # accepted means it will work
            with request.app.state.kernel.memex_lock:
                memex.resolve(p["id"])

    try:
        await in_thread(validate)
    except (ValidationError, NodeNotFoundError) as e:
        raise HTTPException(422, str(e)) from None
    if conversation(sig.meta) is not None:
        from ..sessions.ids import SessionIdError, validate_session_id

        try:
            validate_session_id(sig.meta["session"])
        except SessionIdError as e:
            raise HTTPException(422, f"meta.{e}") from None
    sig.meta.pop("reply", None)
    sig.meta.pop("on_approval", None)
    sig.meta["gateway"] = "http"  # who sent it decides what it may see (opencortex.access)
    if sig.meta.get("source") == "system":
        sig.meta["source"] = "http"
    fut = request.app.state.kernel.submit(sig)
    if fut is None:
        raise HTTPException(503, "not accepting events (shutting down)")
    return JSON({"accepted": True, "id": sig.id}, 202)


def _chat_args(body: Any) -> tuple[str, str, bool]:
    body = _object(body)
    msg = body.get("message")
    if not isinstance(msg, str) or not msg.strip():
        raise HTTPException(422, "message must be a non-empty string")
    from ..sessions.ids import SessionIdError, new_session_id, validate_session_id

    session = body.get("session")
    if session is not None:
        try:
            validate_session_id(session)
        except SessionIdError as e:
            raise HTTPException(422, str(e)) from None
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise HTTPException(422, "stream must be true or false")
    return msg, session or new_session_id("http"), stream


async def chat(request: Request) -> Response:
    msg, session, stream = _chat_args(await read_json(request))
    kernel = request.app.state.kernel
    if not kernel.accepting:
        raise HTTPException(503, "not accepting requests (shutting down)")
    if not stream:
        replies = [item async for kind, item in run_chat(kernel, msg, session, "http")
                   if kind == "reply"]
        return JSON({"reply": replies[-1][0] if replies else "",
                     "replies": [t for t, _ in replies], "data": final_data(replies),
                     "session": session})

    from ..guard.trust import approval_kind

    async def gen() -> AsyncIterator[bytes]:
        n = 0
        async for kind, item in run_chat(kernel, msg, session, "http", deltas=True):
            if kind == "approval":
                yield sse("approval", {"id": item.id, "reason": item.reason,
                                       "tool": item.action.tool, "args": item.action.args,
                                       "kind": approval_kind(item.action)})
            elif kind == "delta":  # the model's words as they come; the reply is the answer
                yield sse("delta", {"text": item})
            else:
                n += 1
                yield sse("reply", {"text": item[0], "data": item[1]})
        yield sse("done", {"session": session, "replies": n})

    return StreamingResponse(gen(), media_type="text/event-stream", headers=SSE_HEADERS)


def _is_person(request: Request) -> bool:
    """Does the request carry the approver token (the person's own tool)?"""
    from .auth import APPROVER_HEADER

    want = request.app.state.approver_token
    given = request.headers.get(APPROVER_HEADER, "")
    return bool(want) and hmac.compare_digest(given.encode(), want.encode())


async def approvals_list(request: Request) -> Response:
    """The person (approver token) sees every pending approval with its arguments; any
    other client only those its own requests raised, without arguments or reason (they
    may hold private text the guard is asking about)."""
    from ..guard.trust import approval_kind

    kernel = request.app.state.kernel
    if _is_person(request):
        return JSON({"pending": [{"id": p.id, "tool": p.action.tool, "args": p.action.args,
                                  "reason": p.reason, "created": p.created.isoformat(),
                                  "kind": approval_kind(p.action), "raised_by": p.raised_by}
                                 for p in kernel.approvals.pending()]})
    return JSON({"pending": [{"id": p.id, "tool": p.action.tool,
                              "created": p.created.isoformat(),
                              "kind": approval_kind(p.action)}
                             for p in kernel.approvals.pending() if p.raised_by == "http"]})


async def approvals_resolve(request: Request) -> Response:
    """Only the person resolves an approval: the request must carry the approver token,
    which the API token's holders do not have."""
    from ..guard.errors import ApprovalError
    from .auth import APPROVER_HEADER

    if not _is_person(request):
        return error(403, "only the person approves: send the approver token (the file "
                     "approver-token beside the API token, or $OPENCORTEX_APPROVER_TOKEN) "
                     f"in the {APPROVER_HEADER} header, from your own CLI, TUI or Emacs",
                     kind="AccessDenied")
    body = _object(await read_json(request))
    approve = body.get("approve")
    if not isinstance(approve, bool):
        raise HTTPException(422, "approve must be true or false")
    ident = request.path_params["id"]
    try:
        request.app.state.kernel.approvals.resolve(ident, approve, by="person")
    except ApprovalError as e:  # unknown id 404, already resolved 409: the error says
        return error(e.status, str(e), kind=type(e).__name__)
    return JSON({"ok": True, "id": ident, "approved": approve})


def _int_param(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be an integer") from None
    if not lo <= v <= hi:
        raise HTTPException(400, f"{name} must be between {lo} and {hi}")
    return v


async def search(request: Request) -> Response:

    q = request.query_params.get("q", "").strip()
    if not q:
        raise HTTPException(400, "q (the query) is required")
    k = _int_param(request, "k", 10, 1, 200)
    mode = request.query_params.get("mode", "hybrid")
    if mode not in SEARCH_MODES:
        raise HTTPException(400, f"mode must be one of {', '.join(SEARCH_MODES)}")
    access = request.app.state.access
    if "\x00" in q:
        raise HTTPException(400, "q contains a NUL byte: remove it")
    return JSON(await in_thread(lambda: access.search(q, mode, k).to_dict()))


async def node(request: Request) -> Response:
    from ..errors import NodeNotFoundError
    from ..schema import ValidationError, node_ref

    ref = request.path_params["ref"]
    budget = _int_param(request, "budget", 16_000, 1, 1_000_000)
    access = request.app.state.access
    try:
        node_ref(ref, "the node reference")
        res = await in_thread(lambda: access.read([ref], 0, budget).to_dict())
    except ValidationError as e:
        raise HTTPException(400, str(e)) from None
    except NodeNotFoundError as e:
        raise HTTPException(404, str(e)) from None
    if not res["nodes"]:
        raise HTTPException(404, f"{ref!r} is indexed but its file is gone: re-index")
    return JSON(res["nodes"][0])


async def recall(request: Request) -> Response:
    """One round of a recall: ``{"cue", "sources"?, "invoked"?}`` starts one,
    ``{"session", "reply"}`` continues it (the same engine as the CLI, chat and MCP)."""
    from ..recall.engine import RecallError, parse_source

    body = await read_json(request)
    if not isinstance(body, dict):
        raise HTTPException(400, "the body must be a JSON object")
    session, reply, cue = body.get("session"), body.get("reply"), body.get("cue")
    sources = body.get("sources") or []
    if (session is not None and not isinstance(session, str)) or \
            (reply is not None and not isinstance(reply, str)) or \
            (cue is not None and not isinstance(cue, str)) or \
            not isinstance(sources, list) or not all(isinstance(x, str) for x in sources):
        raise HTTPException(422, "session, reply and cue are strings; sources a list of "
                                 "KIND:PATH strings")
    if session is None and not (cue or "").strip():
        raise HTTPException(400, "give a cue to start a recall, or session + reply")
    access = request.app.state.access

    def run() -> dict[str, Any]:
        with access.locked():
            engine = access.recall([parse_source(x) for x in sources])
            rnd = (engine.reply(session, reply) if session is not None
                   else engine.start(cue or "", invoked=bool(body.get("invoked", True))))
            return {**rnd.to_dict(), "text": rnd.render()}

    try:
        return JSON(await in_thread(run))
    except RecallError as e:  # an unknown session is 404, a bad request 400
        return error(e.status, str(e), kind=type(e).__name__)


async def openapi(request: Request) -> Response:
    from .openapi import spec

    return JSON(spec(listening(request)))


def listening(request: Request) -> str:
    """The daemon's own address, as the socket this request came in on (not a Host
    header a client chose)."""
    server = request.scope.get("server")
    if not server or server[1] is None:
        return "http://127.0.0.1:8765"
    host, port = str(server[0]), int(server[1])
    return f"{request.url.scheme}://{f'[{host}]' if ':' in host else host}:{port}"


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None)


async def _project_error(request: Request, exc: Exception) -> Response:
    """An OpenCortexError a route let through: its own status and type; the message only
    for a client error (a server-side one is logged, its text stays here, as before)."""
    from ..errors import OpenCortexError

    assert isinstance(exc, OpenCortexError)
    kind = type(exc).__name__
    if exc.status >= 500:
        request.app.state.kernel.log.error("HTTP %s %s failed: %s: %s", request.method,
                                           request.url.path, kind, exc)
        return error(exc.status, f"internal error: {kind}", kind=kind)
    return error(exc.status, str(exc), kind=kind)


async def _server_error(request: Request, exc: Exception) -> Response:
    request.app.state.kernel.log.error("HTTP %s %s failed: %s: %s", request.method,
                                       request.url.path, type(exc).__name__, exc)
    return error(500, f"internal error: {type(exc).__name__}")


# -- the app -----------------------------------------------------------------------------
def create_app(memex: Memex, kernel: Kernel | None = None, token: str | None = None, *,
               heartbeat: float = 60.0, watch: float = 2.0, approval_timeout: float = 3600.0,
               rate: float = 20.0, burst: float = 100.0, max_body: int = DEFAULT_MAX_BODY,
               workers: int = 4, shutdown_timeout: float = 30.0,
               on_stop: Callable[[], None] | None = None,
               request_timeout: float = DEFAULT_TIMEOUT,
               allowed_hosts: tuple[str, ...] = (), runtime: Any = None,
               approver_token: str | None = None) -> Gate:
    """The ASGI app over ``memex``.  Without ``kernel`` one is built (and shut down with
    the app).  ``heartbeat`` seconds between heartbeat signals (0: none); ``rate``/``burst``
    the per-client token bucket (rate 0: no limit).  ``watch`` seconds between checks of
    the memex's files (mtime/size stat walk): a change re-indexes at once, without waiting
    for the heartbeat (0: heartbeat only).  ``request_timeout``: seconds before a request
    that has not started answering gets 504 (chat routes: plus ``approval_timeout``);
    ``allowed_hosts``: Host names a loopback daemon answers besides its own address.
    ``runtime``: the process's :class:`~opencortex.runtime.Runtime` (default: one around
    ``memex``) — the kernel, skills, model and guard facade come from it.
    ``approver_token``: the person's credential for resolving approvals (default: the
    approver-token file, created 0600 when missing)."""
    from ..errors import OpenCortexError
    from .openai_compat import Conversations, chat_completions, models

    if token is None:
        from .auth import load_or_create_token

        token = load_or_create_token()[0]
    if not token:
        raise ValueError("an empty token would let anyone in")
    if approver_token is None:
        from .auth import load_approver_token

        approver_token = load_approver_token() or ""
    if approver_token == token:
        raise ValueError("the approver token must differ from the API token: a client "
                         "holding the API token could then approve its own requests")
    if runtime is None:
        from ..runtime import Runtime

        runtime = Runtime(memex=memex)  # a broken [llm] is a ConfigError here, at start
    own = kernel is None
    if kernel is None:
        kernel = runtime.kernel(workers=workers)
    kernel.approval_timeout = approval_timeout

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def beat() -> None:
            while True:
                await asyncio.sleep(heartbeat)
                kernel.submit({"payload": {"sensor": "heartbeat"},
                               "meta": {"source": "server"}})

        def snapshot() -> dict[str, tuple[int, int]]:
            from ..memory.incremental import iter_org_files

            return {rel: (st.st_mtime_ns, st.st_size) for rel, st in
                    iter_org_files(memex.root, exclude=memex.settings.record_filter())}

        def indexed() -> dict[str, tuple[int, int]]:
            with kernel.memex_lock:
                return {rel: (m, z) for rel, (m, z, _) in memex.store.file_states().items()}

        async def watcher() -> None:
            # the baseline is what the index holds, not a first stat walk: a file written
            # between start-up and that walk would otherwise never count as changed
            seen = await run_in_threadpool(indexed)
            while True:
                await asyncio.sleep(watch)
                now = await run_in_threadpool(snapshot)
                if now != seen:
                    seen = now
                    kernel.submit({"payload": {"sensor": "heartbeat", "embed": 0},
                                   "meta": {"source": "watcher"}})

        tasks = [t for t in (asyncio.create_task(beat()) if heartbeat > 0 else None,
                             asyncio.create_task(watcher()) if watch > 0 else None) if t]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if own:
                cancel_pending(kernel)
                done = await run_in_threadpool(kernel.shutdown, shutdown_timeout)
                kernel.log.info("server stopped; kernel %s", "drained" if done else
                                "timed out with signals in flight")
            if on_stop is not None:
                on_stop()

    from .skills_routes import routes as skills_routes

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/v1/events", events, methods=["POST"]),
        Route("/v1/chat", chat, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/approvals", approvals_list, methods=["GET"]),
        Route("/v1/approvals/{id}", approvals_resolve, methods=["POST"]),
        Route("/v1/search", search, methods=["GET"]),
        Route("/v1/nodes/{ref:path}", node, methods=["GET"]),
        Route("/v1/recall", recall, methods=["POST"]),
        *skills_routes(),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: _http_error,
                                        OpenCortexError: _project_error, 500: _server_error})
    app.state.memex = memex
    app.state.kernel = kernel
    app.state.approver_token = approver_token
    app.state.max_body = max_body
    app.state.runtime = runtime
    app.state.access = runtime.access("http")
    app.state.conversations = Conversations()  # the OpenAI endpoint's sessions
    access = app.state.access
    if not access.sees_private:
        from .egress import EgressLayer

        # every response to a client that may not see private notes, from any route (and
        # the exception handlers), passes the egress check on its way out
        app.add_middleware(EgressLayer, check=access.egress)
    return Gate(app, token, RateLimiter(rate, burst), max_body, timeout=request_timeout,
                long_timeout=request_timeout + approval_timeout, hosts=tuple(allowed_hosts))
