"""The CLI: every command answers --json; errors are clean, with the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli


def run(*args: str, ok: bool = True) -> dict | list:
    r = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert (r.exit_code == 0) == ok, r.output
    return json.loads(r.output.strip().splitlines()[-1])


@pytest.fixture
def mx(memex: Path, tmp_path: Path) -> list[str]:
    return ["--memex", str(memex), "--index", str(tmp_path / "i.sqlite3")]


def test_index_summary(mx: list[str]) -> None:
    d = run("index", *mx)
    assert set(d) >= {"files", "nodes", "added", "changed", "removed", "skipped", "errors",
                      "seconds"}
    assert d["added"] == d["files"] > 20
    assert run("index", *mx)["added"] == 0


def test_query_and_views(mx: list[str]) -> None:
    d = run("query", "todo:NEXT", *mx)
    assert d["count"] == len(d["nodes"]) > 0
    n = d["nodes"][0]
    assert {"key", "file", "line", "outline", "title", "todo", "tags", "id"} <= set(n)
    ag = run("agenda", "--today", "2026-11-30", *mx)
    assert set(ag) == {"today", "days", "skipped_sexps"} and len(ag["days"]) == 7
    dash = run("agenda", "--dashboard", "--today", "2026-11-30", *mx)
    assert set(dash) == {"scheduled", "deadlines", "overdue", "next", "done"}
    assert run("projects", "--next", *mx)


def test_write_commands_and_undo(mx: list[str], memex: Path) -> None:
    before = {p: p.read_bytes() for p in memex.rglob("*.org")}
    c = run("capture", "Buy", "stamps", "--todo", "TODO", "--tag", "errand", *mx)
    key = c["node"]
    run("todo", key, "DONE", *mx)
    run("set-property", key, "EFFORT", "0:10", *mx)
    run("tag", key, "+urgent", "-errand", *mx)
    run("schedule", key, "2026-12-01", "--repeat", "+1w", *mx)
    run("deadline", key, "none", *mx)
    run("append", key, "at the post office", *mx)
    note = run("new-note", "Test note", "--tag", "t", *mx)
    hist = run("history", *mx)
    assert [h["op"] for h in hist][:3] == ["new-note", "append", "schedule"]
    got = run("query", f"id:{key[3:]}", "--body", *mx)["nodes"][0]
    assert got["todo"] == "DONE" and got["local_tags"] == ["urgent"]
    assert got["body"].endswith("at the post office")
    assert (memex / note["file"]).exists()
    undone = run("undo", "20", *mx)
    assert len(undone) == 7  # deadline none on a node without one wrote nothing
    after = {p: p.read_bytes() for p in memex.rglob("*.org")}
    assert after == before


def test_errors_are_json_with_the_fix(mx: list[str]) -> None:
    d = run("todo", "no-such-node", "DONE", *mx, ok=False)
    assert d["ok"] is False and "opencortex query" in d["error"]
    d = run("query", "level:x", *mx, ok=False)
    assert "level" in d["error"]
    d = run("index", "--memex", "/nonexistent/dir", ok=False)
    assert "OPENCORTEX_MEMEX" in d["error"]


def test_export_orgfid(memex: Path) -> None:
    r = CliRunner().invoke(cli, ["export", "--memex", str(memex), "--format", "orgfid"])
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in r.output.splitlines()]
    files = {x["file"] for x in recs if x["type"] == "file"}
    assert "gtd.org" in files and "notes/crdt.org" in files
    assert all(not x["file"].startswith("/") for x in recs)


def test_doctor(mx: list[str]) -> None:
    d = run("doctor", *mx)
    assert d["ok"] and any(c["check"] == "index" for c in d["checks"])


def test_env_and_config_layers(memex: Path, tmp_path: Path, monkeypatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'memex = "{tmp_path}/nowhere"\n')
    monkeypatch.setenv("OPENCORTEX_CONFIG", str(cfg))
    from opencortex.config import load_settings

    assert load_settings().memex == tmp_path / "nowhere"
    monkeypatch.setenv("OPENCORTEX_MEMEX", str(memex))
    assert load_settings().source["memex"] == "env"
    assert load_settings(memex="/x").memex == Path("/x")
    cfg.write_text("memex = [unclosed")
    d = run("doctor", ok=False)
    assert d["ok"] is False


def test_doctor_reports_model_with_env(mx: list[str], monkeypatch) -> None:
    monkeypatch.setenv("OPENCORTEX_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENCORTEX_LLM_MODEL", "tiny")
    d = run("doctor", *mx, ok=False)  # a configured provider that does not answer is a fault
    model = next(c for c in d["checks"] if c["check"].startswith("model:"))
    assert "127.0.0.1:9" in model["detail"] and not model["ok"] and "fix" in model
    assert next(c for c in d["checks"] if c["check"] == "bm25")["ok"]


def test_route_and_search_queries_files(mx: list[str], tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text('{"text": "run ls and then find my notes on zfs"}\nnot json\n'
                 '{"text": "hello"}\n')
    r = CliRunner().invoke(cli, ["route", "--queries", str(f), *mx])
    lines = [json.loads(x) for x in r.output.splitlines()]
    assert [[i["target"] for i in x.get("intents", [])] for x in lines] == [
        ["shell", "notes"], [], ["chat"]]
    assert lines[1]["error"].startswith("not JSON")
    g = tmp_path / "s.jsonl"
    g.write_text('{"query": "caching"}\n{"query": "zfs snapshots"}\n')
    r = CliRunner().invoke(cli, ["search", "--queries", str(g), "-k", "3", *mx])
    res = [json.loads(x) for x in r.output.splitlines()]
    assert [x["query"] for x in res] == ["caching", "zfs snapshots"]
    assert all(x["hits"] and {"id", "file", "line", "outline", "title", "score", "snippet",
                               "why"} <= set(x["hits"][0]) for x in res)


def test_init_is_idempotent(tmp_path: Path) -> None:
    from opencortex.config import config_path, load_settings

    root = tmp_path / "newmemex"
    d = run("init", "--yes", "--memex", str(root), "--name", "Ada")
    assert set(d["created"]) >= {"inbox.org", "gtd.org"} and (root / "gtd.org").exists()
    s = load_settings()
    assert s.memex == root and s.data["identity"]["name"] == "Ada"
    (root / "gtd.org").write_text("* mine\n")
    d2 = run("init", "--yes", "--provider", "ollama", "--model", "tiny")
    assert d2["created"] == [] and (root / "gtd.org").read_text() == "* mine\n"
    s2 = load_settings()
    assert s2.memex == root and s2.data["identity"]["name"] == "Ada"
    assert s2.data["llm"]["providers"]["ollama"]["models"]["fast"] == "tiny"
    assert "not reachable" in d2["probe"] or "reachable" in d2["probe"]
    assert config_path().exists() and (config_path().parent / "token").stat().st_mode & 0o077 == 0


def test_init_without_a_terminal_says_which_flags_to_pass(tmp_path: Path) -> None:
    """Issue 27: `init` with no terminal printed only "Aborted!"; answers piped in still work."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "from opencortex.cli import main; main()", "init"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--yes" in proc.stderr and "--memex" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "newmemex").exists()
    piped = subprocess.run([sys.executable, "-c", "from opencortex.cli import main; main()", "init"],
                           input=f"{tmp_path / 'piped'}\nAda\nnone\n", capture_output=True,
                           text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "piped" / "gtd.org").exists()


def test_ask_json_answers_a_notes_question_and_lists_what_it_quotes(mx: list[str]) -> None:
    """`ask --json` over the indexed example memex (vectors too): the fact first, the note
    cited as file:line, and `citations` naming every note the answer quotes."""
    run("index", "--embed", *mx)
    out = run("ask", "where else does the nightly restic job copy to, apart from the usb disk?",
              *mx)
    assert isinstance(out, dict)
    assert [i["target"] for i in out["intents"]] == ["notes"]
    assert "B2" in out["answer"]
    assert "(notes/backups.org:" in out["answer"]
    root = Path(mx[1])
    ids = {i: p.relative_to(root).as_posix() for p in root.rglob("*.org")
           for i in re.findall(r"(?m)^\s*:ID:\s*(\S+)", p.read_text(encoding="utf-8"))}
    quoted = {ids.get(c[3:], c) if c.startswith("id:") else c.split("::")[0]
              for c in out["citations"]}
    named = set(re.findall(r"\(([\w/.-]+\.org):\d+", out["answer"]))
    assert named <= quoted and "notes/backups.org" in quoted, (named, out["citations"])


def test_ask_json_cites_the_notes_a_recall_story_quotes(mx: list[str]) -> None:
    """A recall story that quotes a note cites that note (its id:, else file::outline) in
    `ask --json` citations — not the note file's absolute path:line."""
    out = run("ask", "/recollect that note about cache invalidation strategies", *mx)
    assert isinstance(out, dict)
    story = out["results"][0]["data"]["recall"]["story"]
    assert story and all("note" in c["cite"] for c in story)
    assert "id:6d4942f8-dde5-46fc-aa5e-559c341cc2d6" in out["citations"]
    assert not any(c.startswith("/") for c in out["citations"]), out["citations"]
