"""Approvals belong to the person.  An HTTP client holds the API token; the person's own
tools (TUI, Emacs, CLI on this machine) also hold the approver token.  Over a real daemon
on loopback: a client cannot approve its own shell command or skill trust, and it sees
only its own pending approvals, without their arguments."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import APPROVER, PERSON, TOKEN

from .edge_live import daemons

pytest.importorskip("uvicorn")


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)


def _pending(live: Any, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    for _ in range(400):
        st, body, _ = live.request("GET", "/v1/approvals", headers=headers)
        assert st == 200
        if body["pending"]:
            return list(body["pending"])
        time.sleep(0.025)
    return []


def test_a_client_cannot_approve_its_own_shell_command(memex: Path, live_factory: Any) -> None:
    """Finding: the client that raised an approval approved it with the same token."""
    live = live_factory(memex)
    out: dict[str, Any] = {}
    t = threading.Thread(target=lambda: out.update(r=live.request(
        "POST", "/v1/chat", {"message": "run date"})))
    t.start()
    mine = _pending(live)
    assert len(mine) == 1 and mine[0]["tool"] == "shell"
    assert "args" not in mine[0] and "reason" not in mine[0]  # its own, without arguments
    ident = mine[0]["id"]
    for hdr in (None, {"X-OpenCortex-Approver": TOKEN}, {"X-OpenCortex-Approver": ""},
                {"X-OpenCortex-Approver": APPROVER[:-1]}):
        st, body, _ = live.request("POST", f"/v1/approvals/{ident}", {"approve": True},
                                   headers=hdr)
        assert st == 403, body
        assert "only the person approves" in body["error"]
    assert [p["id"] for p in _pending(live)] == [ident]  # still waiting for the person
    full = _pending(live, PERSON)
    assert "date" in json.dumps(full[0]["args"]) and full[0]["raised_by"] == "http"
    st, _, _ = live.request("POST", f"/v1/approvals/{ident}", {"approve": False},
                            headers=PERSON)
    assert st == 200
    t.join(60)
    assert "Not done: denied." in out["r"][1]["reply"]


def test_a_client_cannot_trust_a_skill(memex: Path, live_factory: Any, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    (memex / "skills").mkdir()
    (memex / "skills" / "planted.org").write_text(
        "#+TITLE: planted\n* Skill\n#+begin_src python\n"
        f"open({str(marker)!r}, 'w').write('ran')\n#+end_src\n")
    live = live_factory(memex)
    st, body, _ = live.request("POST", "/v1/skills/trust", {"name": "planted"})
    assert st == 202, body
    ident = body["approval"]["id"]
    st, body, _ = live.request("POST", f"/v1/approvals/{ident}", {"approve": True})
    assert st == 403, body
    st, body, _ = live.request("GET", "/v1/skills")
    row = next(r for r in body["skills"] if r["name"] == "planted")
    assert row["trust"] != "trusted" and not marker.exists()
    live.request("POST", f"/v1/approvals/{ident}", {"approve": False}, headers=PERSON)


def test_a_client_sees_only_its_own_approvals(memex: Path, live_factory: Any) -> None:
    from opencortex.guard.action import Action

    live = live_factory(memex)
    q = live.kernel.approvals
    other = q.request(Action("shell", {"argv": ["cat", "secret.org"]}, origin="shell"),
                      "reads secret.org (quixotic walrus)", raised_by="telegram")
    mine = q.request(Action("shell", {"argv": ["cat", "umbrella.org"]}, origin="shell"),
                     "reads umbrella.org", raised_by="http")
    st, body, _ = live.request("GET", "/v1/approvals")
    assert st == 200 and [p["id"] for p in body["pending"]] == [mine.id]
    text = json.dumps(body)
    assert "secret.org" not in text and "umbrella.org" not in text and "walrus" not in text
    st, body, _ = live.request("GET", "/v1/approvals", headers=PERSON)
    assert {p["id"] for p in body["pending"]} == {mine.id, other.id}
    for p in (mine, other):
        q.cancel(p.id)


def test_the_approver_token_must_differ_from_the_api_token(memex: Path, tmp_path: Path) -> None:
    from opencortex.memex import Memex
    from opencortex.server import create_app

    m = Memex(memex, index=tmp_path / "x.sqlite3")
    try:
        with pytest.raises(ValueError, match="approver token must differ"):
            create_app(m, token=TOKEN, approver_token=TOKEN, heartbeat=0)
    finally:
        m.close()


def test_the_daemon_writes_the_approver_token_0600(memex: Path, tmp_path: Path) -> None:
    from opencortex.server.auth import approver_token_path, load_approver_token

    assert load_approver_token(create=False) is None
    tok = load_approver_token()
    p = approver_token_path()
    assert tok and p.read_text().strip() == tok and (p.stat().st_mode & 0o777) == 0o600
    assert load_approver_token(create=False) == tok
