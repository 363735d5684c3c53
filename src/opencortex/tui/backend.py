"""Where the chat TUI sends messages: the in-process kernel, or a running daemon over HTTP.

Both backends expose the same small surface so the terminal front end holds no agent
logic and does not care which one it talks to.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..memex import Memex
    from ..pipeline.kernel import Kernel
    from ..runtime import Runtime

from ..errors import BackendError

__all__ = ["Backend", "BackendError", "LocalBackend", "RemoteBackend", "build_kernel",
           "load_token"]

OnReply = Callable[[str, Any], None]
OnApproval = Callable[[str, str], None]
"""(approval id, reason)."""
OnDelta = Callable[[str], None]
"""A model answer's text as it streams (provisional: the reply that follows is the answer)."""


class Backend(Protocol):
    def chat(self, text: str, session: str, on_reply: OnReply,
             on_approval: OnApproval, on_delta: OnDelta | None = None) -> None: ...
    def search(self, query: str, k: int = 10) -> dict[str, Any]: ...
    def resolve(self, ident: str, approved: bool) -> None: ...
    def locate(self, ref: str) -> str | None: ...
    def close(self) -> None: ...


def build_kernel(memex: Memex, approval_timeout: float = 3600.0,
                 runtime: Runtime | None = None) -> Kernel:
    """A kernel over ``memex`` from its Runtime (the configured model, else the offline
    reasoner), waiting long enough for a person to answer approvals."""
    if runtime is None:
        from ..runtime import Runtime

        runtime = Runtime(memex=memex)
    return runtime.kernel(approval_timeout=approval_timeout)


class LocalBackend:
    """The pipeline in this process: a Kernel over the memex."""

    def __init__(self, memex: Memex, kernel: Kernel | None = None, source: str = "tui",
                 runtime: Runtime | None = None) -> None:
        if runtime is None:
            from ..runtime import Runtime

            runtime = Runtime(memex=memex)
        self.memex = memex
        self.runtime = runtime
        self.kernel = kernel if kernel is not None else build_kernel(memex, runtime=runtime)
        self.source = source
        self.access = runtime.access("tui")
        """The guard facade the TUI reads through (the memex's one lock)."""

    def chat(self, text: str, session: str, on_reply: OnReply,
             on_approval: OnApproval, on_delta: OnDelta | None = None) -> None:
        meta: dict[str, Any] = {"source": self.source, "session": session,
                                "reply": lambda t, d=None: on_reply(t, d),
                                "on_approval": lambda p: on_approval(p.id, p.reason)}
        if on_delta is not None:
            meta["partial"] = on_delta
        fut = self.kernel.submit({"payload": {"sensor": "user-input", "text": text},
                                  "meta": meta})
        if fut is None:
            raise BackendError("the pipeline is not accepting requests (shutting down)")
        fut.result()

    def search(self, query: str, k: int = 10) -> dict[str, Any]:
        return self.access.search(query, "hybrid", k).to_dict()

    def resolve(self, ident: str, approved: bool) -> None:
        from ..guard.errors import ApprovalError

        try:
            self.kernel.approvals.resolve(ident, approved, by=self.source)
        except ApprovalError as e:
            raise BackendError(str(e)) from None

    def locate(self, ref: str) -> str | None:
        try:
            n = self.access.resolve(ref)
        except Exception:
            return None
        return f"{n.file}:{n.line}"

    def close(self) -> None:
        for p in self.kernel.approvals.pending():  # let waiting requests finish now
            try:
                self.kernel.approvals.cancel(p.id, by="exit")
            except Exception:
                pass
        self.kernel.shutdown(timeout=5)


def load_token() -> str:
    """``$OPENCORTEX_TOKEN`` or the daemon's token file (never created here)."""
    from ..config import env as setting
    from ..server.auth import TOKEN_ENV, token_path

    env = (setting(TOKEN_ENV) or "").strip()
    if env:
        return env
    try:
        return token_path().read_text(encoding="utf-8").strip()
    except OSError:
        return ""


class RemoteBackend:
    """A running daemon (``opencortex serve``): SSE chat, approvals and search over HTTP."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0,
                 approver: str | None = None) -> None:
        u = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if u.scheme not in ("http", "https") or not u.hostname:
            raise BackendError(f"{url!r}: expected http://HOST:PORT")
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port
        self.prefix = u.path.rstrip("/")
        self.token = token if token is not None else load_token()
        self.approver = approver
        """The person's approver token (read from its file when first needed): the TUI is
        the person's own tool, so it may resolve approvals."""
        self.timeout = timeout

    def _conn(self, timeout: float | None) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.scheme == "https" else \
            http.client.HTTPConnection
        return cls(self.host, self.port, timeout=timeout)

    def _request(self, method: str, path: str, body: Any = None,
                 timeout: float | None = None, extra: dict[str, str] | None = None
                 ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "*/*", **(extra or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self._conn(timeout)
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            resp = conn.getresponse()
        except OSError as e:
            conn.close()
            raise BackendError(f"cannot reach the daemon at {self.host}:{self.port}: {e}") \
                from None
        if resp.status >= 400:
            raw = resp.read()
            conn.close()
            try:
                msg = json.loads(raw).get("error") or raw.decode()
            except (ValueError, AttributeError):
                msg = raw.decode("utf-8", "replace")
            raise BackendError(f"HTTP {resp.status}: {msg}")
        return conn, resp

    def _json(self, method: str, path: str, body: Any = None,
              extra: dict[str, str] | None = None) -> Any:
        conn, resp = self._request(method, path, body, self.timeout, extra)
        try:
            return json.loads(resp.read())
        finally:
            conn.close()

    def chat(self, text: str, session: str, on_reply: OnReply,
             on_approval: OnApproval, on_delta: OnDelta | None = None) -> None:
        conn, resp = self._request("POST", "/v1/chat",
                                   {"message": text, "session": session, "stream": True})
        try:
            for event, data in _sse(resp):
                if event == "delta":
                    if on_delta is not None:
                        on_delta(str(data.get("text", "")))
                elif event == "reply":
                    on_reply(str(data.get("text", "")), data.get("data"))
                elif event == "approval":
                    on_approval(str(data.get("id")), str(data.get("reason", "")))
                elif event == "done":
                    return
        finally:
            conn.close()

    def search(self, query: str, k: int = 10) -> dict[str, Any]:
        q = urllib.parse.urlencode({"q": query, "k": k})
        return self._json("GET", f"/v1/search?{q}")

    def resolve(self, ident: str, approved: bool) -> None:
        from ..server.auth import APPROVER_HEADER, load_approver_token

        if self.approver is None:
            self.approver = load_approver_token(create=False) or ""
        if not self.approver:
            raise BackendError("no approver token: approving needs the file approver-token "
                               "beside the API token (the daemon writes it) or "
                               "$OPENCORTEX_APPROVER_TOKEN")
        self._json("POST", f"/v1/approvals/{urllib.parse.quote(ident, safe='')}",
                   {"approve": approved}, {APPROVER_HEADER: self.approver})

    def locate(self, ref: str) -> str | None:
        try:
            n = self._json("GET", f"/v1/nodes/{urllib.parse.quote(ref, safe='')}?budget=1")
        except BackendError:
            return None
        return f"{n['file']}:{n['line']}" if n.get("file") else None

    def close(self) -> None:
        pass


def _sse(resp: http.client.HTTPResponse) -> Iterator[tuple[str, Any]]:
    """(event, JSON data) pairs from a text/event-stream body, as they arrive."""
    event = "message"
    data: list[str] = []
    while True:
        raw = resp.readline()
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                try:
                    yield event, json.loads("\n".join(data))
                except ValueError:
                    pass
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
