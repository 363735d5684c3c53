"""Helpers for the edge tests: a memex with private notes planted, and a real daemon."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import APPROVER, TOKEN, Live, run_server

PRIVATE_ID = "5e1c7a00-0000-4000-8000-00000000beef"
SECRETS = ("quixotic walrus", "Zanzibar vault", "Heliotrope marmalade", "Obsidian pangolin",
           "Hidden ledger", "Cerulean armadillo", "7731")
"""Words that appear only in private notes: no untrusted client may ever see one."""

PLANTED = {
    "secret.org": f"""\
        * TODO Zanzibar vault combination :private:
        SCHEDULED: <2026-11-03 Tue>
        :PROPERTIES:
        :ID: {PRIVATE_ID}
        :END:
        The quixotic walrus code is 7731.
        ** Child inherits the tag
        Heliotrope marmalade protocol.
        """,
    "umbrella.org": f"""\
        * Public umbrella plan
        The umbrella plan is public; see [[id:{PRIVATE_ID}][the linked entry]].
        ** Hidden ledger :private:
        Obsidian pangolin ledger entries.
        ** Public rain gauge
        The rain gauge reads ten millimetres.
        """,
    "diary.org": """\
        #+FILETAGS: :private:
        * Cerulean armadillo diary
        Dear diary, the Cerulean armadillo visited.
        """,
}


def plant(memex: Path) -> None:
    for name, text in PLANTED.items():
        (memex / name).write_text(textwrap.dedent(text), encoding="utf-8")


def leaks(text: str) -> list[str]:
    """The secrets ``text`` holds.  A secret of digits inside a hex digest of 16 or more
    characters does not count: a content hash such as ``b2:…7731…`` in an undo's answer
    changes with every run's timestamps and once in a while holds the code's digits."""
    low = text.lower()
    if any(s.isdigit() for s in SECRETS):
        low = re.sub(r"[0-9a-f]{16,}", "#", low)
    return [s for s in SECRETS if s.lower() in low]


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(textwrap.dedent(toml), encoding="utf-8")
    monkeypatch.setenv("OPENCORTEX_CONFIG", str(p))
    return p


def start_live(memex: Path, index: Path, **options: Any) -> tuple[Live, Any]:
    from opencortex.memex import Memex
    from opencortex.server import create_app

    m = Memex(memex, index=index)
    m.sync()
    app = create_app(m, token=TOKEN, **{"heartbeat": 0, "rate": 0, "watch": 0,
                                        "approver_token": APPROVER, **options})
    app.state.kernel.heartbeat_embed = 0
    server, thread, port = run_server(app)
    return Live(port, TOKEN, app, m), (server, thread, m)


def stop_live(handle: Any) -> None:
    from opencortex.server.app import cancel_pending

    server, thread, m = handle
    cancel_pending(server.config.app.state.kernel)
    server.should_exit = True
    thread.join(30)
    m.close()


def daemons(tmp_path: Path) -> Iterator[Any]:
    """Body of each test module's ``live_factory`` fixture: ``make(memex, **options)``
    starts a real daemon on a free loopback port; all are stopped afterwards."""
    started: list[Any] = []

    def make(memex: Path, **options: Any) -> Live:
        live, handle = start_live(memex, tmp_path / f"i{len(started)}.sqlite3", **options)
        started.append(handle)
        return live

    yield make
    for h in started:
        stop_live(h)
