"""Session ids: what a conversation's record file is named after, and what a client may
send.  One validator for every edge (HTTP, CLI, MCP, TUI, Telegram, kernel) and one place
that mints fresh ids, so two chats never share a record by accident."""

from __future__ import annotations

import re

from ..errors import SessionIdError

__all__ = ["SESSION_ID", "SessionIdError", "click_session", "new_session_id",
           "validate_session_id"]

SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A session id: 1-64 ASCII letters, digits, ``.``, ``_`` or ``-``."""


def validate_session_id(value: object) -> str:
    """``value`` if it is a valid session id, else SessionIdError saying what to send."""
    if not isinstance(value, str):
        raise SessionIdError(f"session must be a string, not {type(value).__name__}")
    if not SESSION_ID.fullmatch(value):
        bad = sorted({c for c in value if not re.fullmatch(r"[A-Za-z0-9._-]", c)})
        why = (f"it is {len(value)} characters long" if len(value) > 64 else
               "it is empty" if not value else
               "it contains " + ", ".join(repr(c) for c in bad[:5]))
        raise SessionIdError(f"session must be 1-64 characters of A-Z a-z 0-9 . _ - ({why}); "
                             "omit it to start a new session")
    return value


def new_session_id(source: str = "chat") -> str:
    """A fresh, unique id such as ``http-20261201T225901-3f9a1c2e`` (sortable by time)."""
    import datetime as dt  # lazy: the CLI imports this module at start-up
    import secrets

    prefix = re.sub(r"[^A-Za-z0-9._-]+", "-", source).strip("-")[:20] or "chat"
    return f"{prefix}-{dt.datetime.now():%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"


def click_session(ctx: object, param: object, value: str | None) -> str | None:
    """A click callback for ``--session``: the same check and message as HTTP's 422."""
    if value is None:
        return None
    import click

    try:
        return validate_session_id(value)
    except SessionIdError as e:
        raise click.BadParameter(str(e)) from None
