"""The daemon's edge: which Host it answers, how blocking work leaves the event loop,
and the schemas every request body and event payload must fit before it is accepted."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..schema import Field, ValidationError, check, line_number, no_nul, node_ref

__all__ = ["allowed_host", "check_event", "host_refusal", "in_thread"]

_T = TypeVar("_T")


# -- Host: a loopback daemon answers only its own names (DNS rebinding) -------------------
def _is_loopback(host: str) -> bool:
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None]:
    v = value.strip().lower().rstrip(".")
    if v.startswith("["):
        end = v.find("]")
        name, rest = v[: end + 1], v[end + 1:]
        port = rest[1:] if rest.startswith(":") else None
    elif v.count(":") == 1:
        name, port = v.split(":")
    else:
        name, port = v, None
    if port is None:
        return name, None
    return name, int(port) if port.isascii() and port.isdigit() and len(port) <= 5 else -1


def allowed_host(server: Any, host: bytes | None, extra: tuple[str, ...] = ()) -> bool:
    """True unless the daemon listens on loopback and ``host`` is not one of its own
    names: ``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT`` or a name in ``extra``
    (``--allow-host``; with or without the port).  A web page that re-points its own
    domain at 127.0.0.1 sends its domain as Host, so it is refused."""
    if not server or not _is_loopback(str(server[0])):
        return True  # a remote bind (--allow-remote): the token is the boundary
    if not host:
        return False
    try:
        name, port = _split_host(host.decode("latin-1"))
    except ValueError:
        return False
    own = int(server[1])
    if port is None:
        port = 80
    if name in ("127.0.0.1", "localhost", "[::1]") or (name.startswith("127.") and
                                                       _is_loopback(name)):
        return port == own
    for e in extra:
        en, ep = _split_host(e)
        if name == en and ((ep is None and port == own) or ep == port):
            return True
    return False


def host_refusal(host: bytes | None, server: Any) -> str:
    shown = host.decode("latin-1", "replace")[:100] if host else "(none)"
    port = server[1] if server else "PORT"
    return (f"Host {shown!r} is not this daemon: a loopback daemon answers only "
            f"127.0.0.1:{port}, localhost:{port} or [::1]:{port} (a web page pointing its "
            "own name at this machine is refused); add other names with "
            "`opencortex serve --allow-host NAME` or [server] allowed_hosts")


# -- threads ---------------------------------------------------------------------------
async def in_thread(fn: Callable[[], _T]) -> _T:
    """Run blocking ``fn`` in the thread pool so that the request's timeout can abandon it
    (Starlette's run_in_threadpool cannot be cancelled: a stuck read would hold the
    request, and the client, forever)."""
    import anyio.to_thread

    return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)


# -- events ---------------------------------------------------------------------------------
_ORG_PATH = Field("str", min=1, max=4096)
EVENT_FIELDS: dict[str, dict[str, Field]] = {
    "buffer-update": {"file": Field("str", required=True, min=1, max=4096),
                      "text": Field("str")},
    "point-update": {"file": _ORG_PATH, "id": Field("str", min=1, max=4096),
                     "line": Field("any")},
    "heartbeat": {"embed": Field("int", min=0, max=1_000_000)},
    "user-input": {"text": Field("str")},
    "chat-message": {"text": Field("str")},
    "user-command": {"text": Field("str")},
}
CLIENT_SENSORS = frozenset({"user-input", "chat-message", "user-command", "buffer-update",
                            "point-update", "heartbeat"})
"""The sensors a client may post to ``/v1/events``: what a person or an editor perceives.
``tool-output``, ``delegation`` and ``loop-error`` are the kernel's own feedback (what an
actuator ran, what a skill handed on, what failed): posted by a client they would plant a
"tool" turn in the person's session records or a request that looks a skill's;
``interrupt`` stops the daemon's intake (SIGTERM does that, for whoever may send it)."""

META_FIELDS = {"source": Field("str", max=100), "session": Field("str", max=200)}


def _memex_org_path(f: str, root: Path, sensor: str) -> Path:
    no_nul(f, "payload.file")
    if not f.endswith(".org"):
        raise ValidationError(f"{sensor} needs payload.file, an .org path")
    path = Path(f).expanduser()
    path = (path if path.is_absolute() else root / path).resolve()
    if not path.is_relative_to(root):
        raise ValidationError(f"{f}: not inside the memex ({root})")
    return path


def _lines_of(path: Path) -> int | None:
    """Line count of the file on disk (regular files only), None when it is not there."""
    from ..regular import read_regular

    try:
        data = read_regular(path, max_bytes=64 * 1024 * 1024)
    except OSError:
        return None
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def check_event(sensor: str, payload: dict[str, Any], meta: dict[str, Any],
                root: Path) -> None:
    """Raise ValidationError unless the payload fits its sensor's schema: types, a path
    inside the memex, a line number the file has, a node reference that fits."""
    check(payload, EVENT_FIELDS.get(sensor, {}), "payload")
    check(meta, META_FIELDS, "meta")
    if sensor == "buffer-update" or (sensor == "point-update" and payload.get("file")):
        path = _memex_org_path(payload["file"], root, sensor)
        if sensor == "point-update" and payload.get("line") is not None:
            lines = _lines_of(path)
            payload["line"] = line_number(payload["line"], "payload.line",
                                          None if lines is None else max(lines, 1))
    if sensor == "point-update":
        if not (payload.get("id") or payload.get("file")):
            raise ValidationError("point-update needs payload.id or payload.file")
        if payload.get("id"):
            node_ref(payload["id"], "payload.id")
