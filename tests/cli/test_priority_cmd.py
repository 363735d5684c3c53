"""`opencortex priority NODE A|B|C|none`: sets or removes the [#X] cookie where Org puts
it, answers --json, refuses a bad level, and is undone by `opencortex undo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli


@pytest.fixture
def env(memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for k in ("CACHE", "STATE", "CONFIG", "DATA"):
        monkeypatch.setenv(f"XDG_{k}_HOME", str(tmp_path / k.lower()))
    return ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]


def test_priority_set_remove_and_undo(memex: Path, env: list[str]) -> None:
    run = CliRunner().invoke
    original = (memex / "gtd.org").read_text()
    r = run(cli, ["priority", "Fix the kitchen tap washer", "b", *env, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["op"] == "priority" and data["changed"] and data["journal_id"]
    assert "** TODO [#B] Fix the kitchen tap washer" in (memex / "gtd.org").read_text()
    r = run(cli, ["priority", "Read Ink & Switch essay on collaborative writing workflows", "A",
                  *env])
    assert r.exit_code == 0 and "priority A" in r.output
    assert "** [#A] Read Ink & Switch essay" in (memex / "gtd.org").read_text()
    r = run(cli, ["priority", "id:61267f0d-0262-4fd9-9c65-71c59800ba49", "none", *env])
    assert r.exit_code == 0 and "priority removed" in r.output
    assert "** NEXT Update CI quarantine list" in (memex / "gtd.org").read_text()
    assert run(cli, ["undo", "3", *env]).exit_code == 0
    assert (memex / "gtd.org").read_text() == original


def test_priority_rejects_a_bad_level(memex: Path, env: list[str]) -> None:
    r = CliRunner().invoke(cli, ["priority", "Fix the kitchen tap washer", "urgent", *env])
    assert r.exit_code != 0 and "use A, B, C" in r.output


def test_priority_outside_the_files_range_is_refused(memex: Path, env: list[str],
                                                     tmp_path: Path) -> None:
    """Issue 27: `priority NODE Z` wrote [#Z]; Org allows A-C unless #+PRIORITIES (or here the
    config's [todo] priorities) widens the range."""
    run = CliRunner().invoke
    before = (memex / "gtd.org").read_text()
    r = run(cli, ["priority", "Fix the kitchen tap washer", "Z", *env, "--json"])
    assert r.exit_code != 0 and before == (memex / "gtd.org").read_text()
    assert "allows A to C" in r.output and "#+PRIORITIES" in r.output
    r = run(cli, ["priority", "Fix the kitchen tap washer", "D", *env])
    assert r.exit_code != 0 and "[#D]" not in (memex / "gtd.org").read_text()
    # the file's own keyword widens it ...
    (memex / "gtd.org").write_text("#+PRIORITIES: A E C\n" + before)
    r = run(cli, ["priority", "Fix the kitchen tap washer", "E", *env])
    assert r.exit_code == 0, r.output
    assert "** TODO [#E] Fix the kitchen tap washer" in (memex / "gtd.org").read_text()
    r = run(cli, ["priority", "Fix the kitchen tap washer", "F", *env])
    assert r.exit_code != 0 and "#+PRIORITIES: A E C in gtd.org allows A to E" in r.output
    # ... and so does the config, for files without one
    cfg = tmp_path / "config" / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[todo]\npriorities = "A D B"\n')
    (memex / "gtd.org").write_text(before)
    r = run(cli, ["priority", "Fix the kitchen tap washer", "D", *env])
    assert r.exit_code == 0, r.output
