"""Properties that steer the person's own Org commands (``:ID:``, ``:EXPORT_FILE_NAME:``,
``:ARCHIVE:``, ``:DIR:``, ``:header-args:``…) are set only by the person.

The rule lives where a property is written (the writer), so a path that does not pass
``Access`` -- the GTD skill's model-planned steps, run by the ``memex.write`` actuator on
the raw memex -- is held to it too."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.errors import AccessDenied
from opencortex.memex import Memex
from opencortex.signal import inject
from opencortex.skills import gtd
from opencortex.skills.base import Action, Context

TASK = "Renew passport"


@pytest.fixture
def mx(tmp_path: Path) -> Memex:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "gtd.org").write_text(f"* TODO {TASK}\n:PROPERTIES:\n:ID: t-1\n:END:\nBody.\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    return m


@pytest.mark.parametrize(("key", "value"), [
    ("EXPORT_FILE_NAME", "~/.bashrc"), ("ARCHIVE", "~/.emacs.d/init.el::"),
    ("header-args", ":eval yes"), ("ID", "someone-elses-id"), ("ARCHIVE+", "/tmp/x.org::"),
    ("header-args+", ":dir /")])
def test_a_model_planned_gtd_step_cannot_set_a_steering_property(mx: Memex, key: str,
                                                                 value: str) -> None:
    """A local model planning a GTD request ("set the effort on the passport task") adds a
    ``set-property`` step for ``:EXPORT_FILE_NAME: ~/.bashrc``: the verifier accepted it and
    the write op wrote it (it runs on the memex, not through ``Access``)."""
    before = (mx.root / "gtd.org").read_bytes()
    ctx = Context(inject({"sensor": "user-input", "text": f"set effort on {TASK}"}), mx)
    steps = [{"op": "set-property", "ref": "id:t-1", "key": "Effort", "value": "1:00"},
             {"op": "set-property", "ref": "id:t-1", "key": key, "value": value}]
    skill = gtd.skill()
    assert skill.symbolic is not None
    verdict = skill.symbolic({"action": "memex", "op": "gtd", "path": "gtd.org",
                              "steps": steps}, ctx)
    if isinstance(verdict, Action):
        with pytest.raises(AccessDenied, match="only you"):
            gtd.apply_memex_op(mx, verdict.args)
    assert (mx.root / "gtd.org").read_bytes() == before  # the Effort step was undone too


def test_the_person_still_sets_them(mx: Memex) -> None:
    """The CLI (``opencortex set-property``) is the person: the same write passes there."""
    r = mx.set_property("id:t-1", "EXPORT_FILE_NAME", "passport.pdf", person=True)
    assert r.changed
    assert ":EXPORT_FILE_NAME: passport.pdf" in (mx.root / "gtd.org").read_text()
    with pytest.raises(AccessDenied, match="only you"):
        mx.set_property("id:t-1", "DIR", "/etc")  # no one said it was the person


@pytest.mark.parametrize("key", ["ARCHIVE+", "EXPORT_FILE_NAME+", "header-args+", "DIR+"])
def test_the_plus_spelling_is_the_same_property(mx: Memex, key: str) -> None:
    """Org appends ``:ARCHIVE+:`` to ``:ARCHIVE:`` (``org-entry-get``): a client (MCP,
    HTTP) that could not set ``ARCHIVE`` set ``ARCHIVE+`` instead."""
    from opencortex.access import Access

    before = (mx.root / "gtd.org").read_bytes()
    with pytest.raises(AccessDenied, match="only you"):
        Access(mx, "mcp").set_property("id:t-1", key, "/tmp/elsewhere.org::")
    assert (mx.root / "gtd.org").read_bytes() == before
