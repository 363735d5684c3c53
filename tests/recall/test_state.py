"""Recall's session state: a versioned dataclass that still reads the files saved before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opencortex.errors import RecallError
from opencortex.recall.engine import session_boundary
from opencortex.recall.state import STATE_VERSION, RecallState

OLD_FILE = {  # what the dict-based engine wrote (version 1), less its optional late keys
    "version": 1, "session": "20261130-0a1b2c3d", "created": "2026-11-30T10:00:00+00:00",
    "now": None, "roots": ["git:/src/app", "notes:/memex"], "memex": "/memex",
    "index": "/cache/i.sqlite3", "turns": [{"origin": "person", "text": "the flaky test",
                                             "role": "cue"}],
    "admitted": [], "places": [], "presented": None, "offered": None, "added_to_cue": False,
    "noted": [], "state": "open", "trace": [{"state": "asked", "cue": {"meant": "x"}}],
}


def test_an_old_session_file_reads_and_round_trips() -> None:
    st = RecallState.from_dict(OLD_FILE)
    assert st.session == OLD_FILE["session"] and st.roots == OLD_FILE["roots"]
    assert st.conversation is None and st.activation is None and not st.closed
    again = st.to_dict()
    assert {k: again[k] for k in OLD_FILE} == OLD_FILE
    assert again["version"] == STATE_VERSION


def test_an_unversioned_file_with_unknown_keys_reads() -> None:
    raw = {k: v for k, v in OLD_FILE.items() if k != "version"} | {"someday": 1}
    assert RecallState.from_dict(raw).state == "open"


@pytest.mark.parametrize("bad", [[], {"session": 3}, {"session": "x"},
                                 {**OLD_FILE, "version": STATE_VERSION + 1}])
def test_what_is_not_a_state_is_a_recall_error(bad: object) -> None:
    with pytest.raises(RecallError):
        RecallState.from_dict(bad)


def test_the_boundary_of_an_old_session_file(tmp_path: Path) -> None:
    (tmp_path / f"{OLD_FILE['session']}.json").write_text(json.dumps(OLD_FILE))
    assert session_boundary(OLD_FILE["session"], tmp_path) == {
        "memex": "/memex", "index": "/cache/i.sqlite3", "roots": OLD_FILE["roots"]}


def test_closed_states() -> None:
    for state, closed in (("open", False), ("identified", True), ("stopped", True),
                          ("unresolved", True)):
        assert RecallState.new("s", state=state).closed is closed
