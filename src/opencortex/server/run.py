"""Run the daemon: bind checks, pid file, uvicorn with graceful shutdown on SIGTERM/SIGINT."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from ..memex import Memex
from .auth import MIN_REMOTE_TOKEN, ServerError, is_loopback, load_or_create_token

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "check_port", "pid_path", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def pid_path(memex: Memex) -> Path:
    return memex.settings.state_dir / "serve.pid"


def check_bind(host: str, allow_remote: bool, token: str) -> None:
    """Loopback only, unless asked for explicitly and a real token guards it."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise ServerError(f"refusing to bind {host}: not a loopback address (the API can run "
                          "commands once approved); pass --allow-remote if you mean it")
    if len(token) < MIN_REMOTE_TOKEN:
        raise ServerError(f"refusing to bind {host}: a remote bind needs a token of at least "
                          f"{MIN_REMOTE_TOKEN} characters (`opencortex token`)")


def check_port(host: str, port: int) -> None:
    """Fail before anything starts when ``host:port`` cannot be listened on (another daemon
    has it): uvicorn would otherwise print its traceback after the sync and exit 3."""
    import errno
    import socket

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise ServerError(f"cannot listen on {host}: {e.strerror}; pass --host with an "
                          "address of this machine") from e
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise ServerError(f"port {port} on {host} is already in use (another "
                                  "`opencortex serve`, or another program): pass --port N "
                                  "to use another port, or stop the process that holds it"
                                  ) from e
            raise ServerError(f"cannot listen on {host}:{port}: {e.strerror}; pass another "
                              "--host/--port") from e


def _write_pid(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        try:
            other = int(path.read_text().strip())
            os.kill(other, 0)
        except (ValueError, ProcessLookupError):
            pass  # stale: the last run died without cleaning up
        except PermissionError:
            raise ServerError(f"{path}: another user's daemon (pid file) is running") from None
        else:
            if other != os.getpid():
                raise ServerError(f"a daemon is already running (pid {other}, {path}); "
                                  "stop it or remove the file if it is stale")
    path.write_text(f"{os.getpid()}\n")


def _remove_pid(path: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        if int(path.read_text().strip()) == os.getpid():
            path.unlink()


def serve(memex: Memex, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          token: str | None = None, allow_remote: bool = False, *, sync: bool = True,
          log_level: str = "info", graceful_timeout: float = 30.0, **app_options: Any) -> None:
    """Serve until SIGTERM/SIGINT: in-flight requests finish, waiting approvals are
    denied, the kernel drains, the pid file goes.  ``app_options`` go to ``create_app``."""
    import uvicorn

    from .app import cancel_pending, create_app

    if token is None:
        token = load_or_create_token()[0]
    check_bind(host, allow_remote, token)
    check_port(host, port)
    pid = pid_path(memex)
    _write_pid(pid)
    try:
        if sync:
            memex.sync()
        app = create_app(memex, token=token, shutdown_timeout=graceful_timeout,
                         **app_options)
        kernel = app.state.kernel

        class Server(uvicorn.Server):
            def handle_exit(self, sig: int, frame: FrameType | None) -> None:
                super().handle_exit(sig, frame)
                # exit 0 after a clean stop instead of re-raising the signal at the end
                getattr(self, "_captured_signals", []).clear()
                # requests waiting on the person would hold shutdown up: deny them (in a
                # thread: the queue's lock may be held by the code this signal interrupted)
                threading.Thread(target=cancel_pending, args=(kernel,), daemon=True).start()

        config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                lifespan="on", timeout_graceful_shutdown=graceful_timeout,  # type: ignore[arg-type]  # uvicorn annotates int but awaits it with asyncio.wait_for, which takes float
                                access_log=False, server_header=False)
        kernel.log.info("serving on http://%s:%d (pid %d)", host, port, os.getpid())
        Server(config).run()
    finally:
        _remove_pid(pid)
