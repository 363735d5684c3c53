"""A third-party package (a dist-info with an entry point, on sys.path) adds a skill, an
actuator and a memex write op through the same registrar the built-ins use, and signals
run through both end to end; the guard still decides (an unknown tool is refused until
config.toml names it) and a plugin cannot take over a built-in tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel

PLUGIN = '''
from opencortex.guard.action import Action
from opencortex.skills.base import Rejection, Skill


def _offline(ctx):
    verb, _, rest = ctx.text.partition(" ")
    if verb == "shout":
        return {"action": "shout", "text": rest}
    return {"action": "memex", "op": "shout-note", "title": rest}


def _symbolic(p, ctx):
    text = str(p.get("text") or p.get("title") or "").strip()
    if not text:
        return Rejection("nothing to shout")
    if p.get("action") == "shout":
        return Action("shout", {"text": text}, origin="shout")
    if p.get("action") == "memex" and p.get("op") == "shout-note":
        slug = "".join(c for c in text.lower() if c.isalnum())[:40] or "shout"
        return Action("memex.write", {"op": "shout-note", "path": f"notes/{slug}.org",
                                      "title": text}, origin="shout")
    return None


def shout(action, signal, env):
    """The plugin's actuator: a reply that also reads the memex under the kernel's lock."""
    with env.memex_lock:
        n = len(env.memex.query("todo"))
    env.reply(signal, action.args["text"].upper() + "!", {"open_todos": n})


def shout_note(action, signal, env):
    """The plugin's write op: a new file through the public, journaled create_file."""
    title = action.args["title"].upper()
    r = env.memex.writer.create_file(action.args["path"], f"* {title}\\n", op="shout-note",
                                     description=f"shouted {title!r}")
    return f"Shouted into {r.file}.", r.to_dict()


def register(r):
    r.skill(Skill("shout", 95, tools=["shout", "memex.write"], offline=_offline,
                  symbolic=_symbolic, description="Shout text back, or into a note.",
                  trigger=lambda c: c.signal.sensor == "user-input"
                  and c.text.startswith(("shout ", "scribble "))))
    r.actuator("shout", shout)
    r.write_op("shout-note", shout_note)


def grab(r):
    r.actuator("whisper", shout)
    r.actuator("shell", shout)  # a built-in tool: refused, the built-in stays
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    (site / "ocshout").mkdir(parents=True)
    (site / "ocshout" / "__init__.py").write_text(PLUGIN)
    di = site / "ocshout-0.1.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: ocshout\nVersion: 0.1\n")
    (di / "entry_points.txt").write_text(
        "[opencortex.skills]\nshout = ocshout:register\ngrab = ocshout:grab\n")
    monkeypatch.syspath_prepend(str(site))
    return site


def _kernel(memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            config: str) -> tuple[Kernel, Memex]:
    cfg = tmp_path / "config.toml"
    cfg.write_text(config)
    monkeypatch.setenv("OPENCORTEX_CONFIG", str(cfg))
    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    return Kernel(m, record_sessions=False), m  # the default registry: built-ins + plugins


def test_plugin_skill_actuator_and_write_op_end_to_end(
        plugin: Path, memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k, m = _kernel(memex, tmp_path, monkeypatch, '[guard.tools]\nshout = "allow"\n')
    try:
        table = k.registry.actuators
        src = "entry-point:ocshout:register"
        assert table.tools()["shout"] == src and table.ops()["shout-note"] == src
        # the built-ins came in by the same registrar, under their own source
        assert table.tools()["shell"] == "builtin" and table.ops()["gtd"] == "builtin"
        st = {s.name: s for s in k.registry.statuses()}
        assert st["shout"].status == "ok" and st["shout"].source == src
        assert "already registered by builtin" in st["grab"].status
        assert "whisper" not in table.tools()  # what the failed plugin added went with it

        out = k.ask_full("shout hello there")
        assert out[-1][0] == "HELLO THERE!"
        assert out[-1][1]["open_todos"] == len(m.query("todo")) > 0

        before = len(m.query('heading:"PLUGINS WRITE"'))
        out = k.ask_full("scribble plugins write")
        assert out[-1][0] == "Shouted into notes/pluginswrite.org.", out
        assert (memex / "notes" / "pluginswrite.org").read_text() == "* PLUGINS WRITE\n"
        assert len(m.query('heading:"PLUGINS WRITE"')) == before + 1  # re-indexed
        # journaled like any write: undo removes the file
        m.undo()
        assert not (memex / "notes" / "pluginswrite.org").exists()
        # a second write to an existing file is refused, not clobbered
        (memex / "notes" / "pluginswrite.org").write_text("mine\n")
        out = k.ask("scribble plugins write")
        assert out[-1].startswith("Sorry — that failed") and "already exists" in out[-1]
        assert (memex / "notes" / "pluginswrite.org").read_text() == "mine\n"
    finally:
        k.shutdown(timeout=10)
        m.close()


def test_plugin_tool_runs_only_where_the_guard_names_it(
        plugin: Path, memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    k, m = _kernel(memex, tmp_path, monkeypatch, "")
    try:
        assert "shout" in k.registry.actuators.tools()
        out = k.ask("shout hello")
        assert out[-1].startswith("Blocked: refused: unknown tool 'shout'"), out
    finally:
        k.shutdown(timeout=10)
        m.close()
