"""`read FILE:LINE`: a line past the end of the file is an error that says so (issue 27: it
answered with the file's last entry), while every line inside the file reads its entry."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from opencortex.cli import cli


def test_line_past_the_end_is_a_clear_error(memex: Path, tmp_path: Path) -> None:
    env = ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]
    n = len((memex / "gtd.org").read_text().splitlines())
    run = CliRunner().invoke
    r = run(cli, ["read", "gtd.org:9999", *env, "--json"])
    assert r.exit_code != 0, r.output
    body = json.loads(r.output)
    assert body["ok"] is False and "line 9999 is past the end of gtd.org" in body["error"]
    assert f"({n} lines)" in body["error"]
    r = run(cli, ["read", f"gtd.org:{n + 1}", *env])
    assert r.exit_code != 0 and "past the end" in r.output
    r = run(cli, ["read", "gtd.org:0", *env])
    assert r.exit_code != 0 and "out of range" in r.output
    last = run(cli, ["read", f"gtd.org:{n}", *env, "--json"])
    assert last.exit_code == 0 and json.loads(last.output)["nodes"], last.output
    r = run(cli, ["priority", "gtd.org:9999", "A", *env])  # every FILE:LINE reference
    assert r.exit_code != 0 and "past the end" in r.output
