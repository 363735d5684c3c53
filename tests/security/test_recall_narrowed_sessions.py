"""A client's recall stays inside the person's boundary on every turn, not only the first.

``Recall.narrowed`` checked the roots a client named when it started a recall; a later turn
searched whatever the session's state held: the roots of a session the person started with
``--source git:/elsewhere`` (a client replying to it by id), and a wider search "admitted"
in it -- the git histories of the directories transcripts say their sessions ran in, which a
hostile transcript chooses (``cwd``) and a client answers "yes" to."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from opencortex.memex import Memex
from opencortex.recall.engine import Recall, Root

NOW = dt.datetime(2026, 3, 4, 10, 0, tzinfo=dt.UTC)
CANARY = "zebracrossing7731"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
                        "GIT_AUTHOR_DATE": "2026-03-03T10:00:00Z",
                        "GIT_COMMITTER_DATE": "2026-03-03T10:00:00Z"})


def _other_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "elsewhere"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "x@example.org")
    _git(repo, "config", "user.name", "x")
    (repo / "plan.txt").write_text(f"the {CANARY} rollout plan\n")
    _git(repo, "add", "plan.txt")
    _git(repo, "commit", "-qm", f"Rolled out the {CANARY} cache fix yesterday")
    return repo


def _roots(rnd: object) -> set[str]:
    searched = getattr(rnd, "searched", None) or {}
    return {r["root"] for r in searched.get("roots", [])}


def test_a_client_reply_searches_only_inside_its_boundary(tmp_path: Path) -> None:
    other = _other_repo(tmp_path)
    root = tmp_path / "memex"
    root.mkdir()
    (root / "notes.org").write_text("* Cache work\nSome notes on caching.\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    state = tmp_path / "recall-state"
    person = Recall(m, [Root("git", str(other))], defaults=False, state_dir=state,
                    gateway=False)
    first = person.start(f"the {CANARY} cache fix", now=NOW)
    assert any(str(other) in r for r in _roots(first))  # the person's own source: searched

    client = Recall.narrowed(m, [], defaults=False, state_dir=state, gateway=False)
    again = client.reply(first.session, "the rollout of the cache fix, in the plan")
    assert not any(str(other) in r for r in _roots(again)), _roots(again)
    assert CANARY not in again.render()

    # a wider search over a repository no one configured, admitted in the session
    st = client.load(first.session)
    st.roots = [r for r in st.roots if str(other) not in r]
    st.admitted.append({"kind": "roots", "roots": [f"git:{other}"],
                        "reach": "the git histories of 1 repository your sessions ran in",
                        "cost": "1 commit"})
    client._save(st)
    wider = client.reply(first.session, "the cache fix rollout, once more")
    assert not any(str(other) in r for r in _roots(wider)), _roots(wider)
    assert CANARY not in wider.render()
    m.close()
