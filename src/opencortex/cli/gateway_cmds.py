"""Gateways: ``opencortex chat`` (terminal) and ``opencortex telegram`` (a Telegram bot).

Settings for the bot (flags win)::

    [telegram]
    token_env = "OPENCORTEX_TELEGRAM_TOKEN"   # the env var holding the bot token
    allow = [123456789]                       # chat ids it answers; others are ignored
    api_base = "https://api.telegram.org"
    poll_timeout = 30                         # seconds per long poll

Both only carry raw messages into the pipeline and show its replies; the agent logic
lives in the kernel.
"""

from __future__ import annotations

import click

from ..sessions.ids import click_session
from .output import common_options, open_runtime

__all__ = ["chat", "telegram"]


@click.command()
@click.option("--connect", "connect", default=None, metavar="URL",
              help="Talk to a running daemon (e.g. http://127.0.0.1:8765) instead of an "
                   "in-process pipeline; token from $OPENCORTEX_TOKEN or the token file.")
@click.option("--session", default=None, callback=click_session,
              help="Session id (the conversation's record file): 1-64 of A-Z a-z 0-9 . _ -.")
@common_options
def chat(connect: str | None, session: str | None, memex: str | None, index: str | None,
         json_: bool) -> None:
    """Interactive chat: Enter sends, Esc-Enter adds a line, /help lists commands."""
    from ..tui.app import ChatApp
    from ..tui.backend import Backend, BackendError, LocalBackend, RemoteBackend

    backend: Backend
    if connect:
        try:
            backend = RemoteBackend(connect)
        except BackendError as e:
            raise click.UsageError(str(e)) from None
        m = None
    else:
        rt = open_runtime(memex, index)  # a broken [llm] stops here, as for ask and serve
        m = rt.memex
        m.sync()
        backend = LocalBackend(m, runtime=rt)
    app = ChatApp(backend, session)
    try:
        code = app.run()
    finally:
        app.close()
        if m is not None:
            m.close()
    raise SystemExit(code)


@click.command()
@click.option("--token-env", default=None, metavar="VAR",
              help="Env var with the bot token (default OPENCORTEX_TELEGRAM_TOKEN).")
@click.option("--allow", "allow", multiple=True, type=int, metavar="CHAT_ID",
              help="A chat id to answer (repeatable; adds to [telegram] allow).")
@common_options
def telegram(token_env: str | None, allow: tuple[int, ...], memex: str | None,
             index: str | None, json_: bool) -> None:
    """Run a Telegram bot that answers allowed chats from the memex (long polling)."""
    import logging
    import signal
    import threading

    from ..telegram.gateway import DEFAULT_API_BASE, TelegramGateway

    rt = open_runtime(memex, index)
    m = rt.memex
    conf = m.settings.telegram
    var = token_env or conf.token_env
    tok = conf.token(var)
    if not tok:
        raise click.UsageError(f"no bot token: set ${var} (from @BotFather)")
    allowed = {*conf.allow, *allow}
    if not allowed:
        click.echo("Warning: no chat is allowed, so every message is ignored; the log "
                   "shows the chat ids that wrote (add them with --allow).", err=True)
    h = logging.StreamHandler()  # the operator sees ignored chat ids and API trouble
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logging.getLogger("opencortex.telegram").addHandler(h)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with m:
        m.sync()
        kernel = rt.kernel(approval_timeout=3600.0)
        gw = TelegramGateway(kernel, tok, allowed,
                             api_base=conf.api_base or DEFAULT_API_BASE,
                             poll_timeout=conf.poll_timeout)
        click.echo(f"Telegram gateway running for {len(allowed)} chat(s); Ctrl-C stops.",
                   err=True)
        try:
            gw.run(stop)
        finally:
            for p in kernel.approvals.pending():
                kernel.approvals.cancel(p.id, by="shutdown")
            kernel.shutdown(timeout=10)
