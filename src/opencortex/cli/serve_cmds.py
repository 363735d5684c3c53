"""``opencortex serve`` (the daemon) and ``opencortex token`` (its bearer token).

Settings: flags > the ``[server]`` table of config.toml > defaults, e.g.::

    [server]
    port = 8765
    heartbeat = 60          # seconds between heartbeats (re-index, embed, reminders)
    rate = 20               # requests/s per client (0: no limit) ...
    burst = 100             # ... with bursts up to this
    approval_timeout = 3600 # how long an "ask" action waits for the person
    request_timeout = 60    # seconds before a request that has not answered gets 504
    allowed_hosts = []      # Host names answered besides 127.0.0.1/localhost/[::1]
"""

from __future__ import annotations

import json
from typing import Any

import click

from .output import common_options, emit, fail, open_runtime

__all__ = ["serve", "token"]


def _opt(conf: Any, key: str, flag: Any, default: Any) -> Any:
    """The flag, else ``[server] key`` (the typed section), else the default."""
    if flag is not None:
        return flag
    value = getattr(conf, key)
    return default if value is None or value == () else value


@click.command()
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default 8765).")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host (anyone who can reach it needs the token).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another Host name the daemon answers (besides 127.0.0.1, localhost "
              "and [::1] at its port); repeatable; also [server] allowed_hosts.")
@click.option("--heartbeat", type=float, default=None,
              help="Seconds between heartbeat signals (default 60; 0: none).")
@click.option("--rate", type=float, default=None,
              help="Requests/s per client before 429 (default 20; 0: no limit).")
@click.option("--burst", type=float, default=None, help="Burst size per client (default 100).")
@click.option("--approval-timeout", type=float, default=None,
              help="Seconds an action waits for approval via the API (default 3600).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@common_options
def serve(host: str | None, port: int | None, allow_remote: bool,
          allow_hosts: tuple[str, ...], heartbeat: float | None,
          rate: float | None, burst: float | None, approval_timeout: float | None,
          log_level: str, memex: str | None, index: str | None, json_: bool) -> None:
    """Run the daemon: HTTP API for Emacs, chat clients and OpenAI-compatible tools."""
    from ..server.app import DEFAULT_MAX_BODY, DEFAULT_TIMEOUT
    from ..server.auth import ServerError
    from ..server.run import DEFAULT_HOST, DEFAULT_PORT, check_bind, check_port
    from ..server.run import serve as run

    rt = open_runtime(memex, index)
    m = rt.memex
    d = m.settings.server
    h = str(_opt(d, "host", host, DEFAULT_HOST))
    p = int(_opt(d, "port", port, DEFAULT_PORT))
    try:  # before the sync and the model loads: a busy port is said at once, as a usage error
        check_bind(h, allow_remote, _token_for(h))
        check_port(h, p)
    except ServerError as e:
        fail(str(e), json_, "ServerError", code=2)
    if json_:
        click.echo(json.dumps({"ok": True, "url": f"http://{h}:{p}"}))
    with m:
        run(m, h, p, allow_remote=allow_remote, log_level=log_level,
            heartbeat=float(_opt(d, "heartbeat", heartbeat, 60.0)),
            rate=float(_opt(d, "rate", rate, 20.0)),
            burst=float(_opt(d, "burst", burst, 100.0)),
            approval_timeout=float(_opt(d, "approval_timeout", approval_timeout, 3600.0)),
            max_body=int(_opt(d, "max_body", None, DEFAULT_MAX_BODY)),
            request_timeout=float(_opt(d, "request_timeout", None, DEFAULT_TIMEOUT)),
            allowed_hosts=tuple(allow_hosts) or tuple(_opt(d, "allowed_hosts", None, ())),
            runtime=rt)


def _token_for(host: str) -> str:
    """The token a bind check needs: only a non-loopback bind reads (or creates) it."""
    from ..server.auth import is_loopback, load_or_create_token

    return "" if is_loopback(host) else load_or_create_token()[0]


@click.command()
@click.option("--json", "json_", is_flag=True, help="Machine-readable JSON output.")
def token(json_: bool) -> None:
    """Print the daemon's bearer token (created, mode 0600, if missing)."""
    from ..server.auth import load_or_create_token

    tok, where = load_or_create_token()
    emit({"token": tok, "source": where}, json_, lambda: click.echo(tok))
