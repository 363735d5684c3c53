"""The OpenCortex daemon: an HTTP API (Starlette + uvicorn) over the kernel.

``create_app(memex, ...)`` gives the ASGI app (tests run it in-process); ``serve(...)``
runs it until SIGTERM/SIGINT.
"""

from __future__ import annotations

from .app import create_app
from .auth import ServerError, is_loopback, load_or_create_token, token_path
from .run import DEFAULT_HOST, DEFAULT_PORT, pid_path, serve

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServerError", "create_app", "is_loopback",
           "load_or_create_token", "pid_path", "serve", "token_path"]
