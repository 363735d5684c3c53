"""The composition root: one Runtime per process, the same parts and policies everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.errors import ConfigError
from opencortex.memex import Memex
from opencortex.runtime import Runtime

BROKEN_LLM = '[llm.providers.local]\npreset = "ollama"\ntimeout = "soon"\n'
"""A model config with one wrong value: the error must name ``llm.providers.local.timeout``."""
SETTING = "llm.providers.local.timeout"


def _config(text: str) -> Path:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text, encoding="utf-8")
    return cfg


@pytest.fixture
def broken_llm() -> Path:
    return _config(BROKEN_LLM)


def _args(memex: Path, tmp_path: Path) -> list[str]:
    return ["--memex", str(memex), "--index", str(tmp_path / "i.db")]


# -- a broken [llm] is one clear error in every gateway ----------------------------------
@pytest.mark.parametrize("command", [["ask", "hello"], ["route", "hello"], ["serve"],
                                     ["chat"], ["telegram"], ["mcp"]])
def test_broken_llm_config_is_one_clear_error_in_every_cli_gateway(
        command: list[str], memex: Path, tmp_path: Path, broken_llm: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCORTEX_TELEGRAM_TOKEN", "123:abc")  # past the token check
    r = CliRunner().invoke(cli, [*command, *_args(memex, tmp_path)])
    assert r.exit_code == 1, r.output
    assert SETTING in r.output and "offline" in r.output and str(broken_llm) in r.output
    assert "Traceback" not in r.output


def test_broken_llm_config_under_json_is_the_one_error_body(memex: Path, tmp_path: Path,
                                                            broken_llm: Path) -> None:
    r = CliRunner().invoke(cli, ["ask", "hello", *_args(memex, tmp_path), "--json"])
    body = json.loads(r.output)
    assert r.exit_code == 1 and set(body) == {"ok", "error", "type", "status"}
    assert body["ok"] is False and body["type"] == "ConfigError" and SETTING in body["error"]


def test_broken_llm_config_stops_the_http_tui_and_mcp_builders(memex: Path, tmp_path: Path,
                                                               broken_llm: Path) -> None:
    from opencortex.mcp_server import build_server
    from opencortex.server import create_app
    from opencortex.tui.backend import LocalBackend

    with Memex(memex, tmp_path / "i.db") as m:
        for build in (lambda: create_app(m, token="t" * 20), lambda: LocalBackend(m),
                      lambda: build_server(m), lambda: Runtime(memex=m)):
            with pytest.raises(ConfigError, match=SETTING):
                build()


def test_broken_llm_env_override_names_the_variable(memex: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCORTEX_LLM_MODEL", "qwen2.5:3b")  # without the base URL
    with pytest.raises(ConfigError, match="OPENCORTEX_LLM_BASE_URL"):
        Runtime.open(memex, tmp_path / "i.db")


def test_no_model_configured_answers_offline(memex: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["ask", "caching strategies", *_args(memex, tmp_path),
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["via"] == "offline"
    with Runtime.open(memex, tmp_path / "i.db") as rt:
        assert rt.gateway is None and rt.via == "offline"
        assert not rt.reasoner.has_model


def test_a_configured_model_is_the_reasoner_of_every_kernel(memex: Path, tmp_path: Path
                                                            ) -> None:
    _config('[llm.providers.local]\npreset = "ollama"\nmodels = { fast = "m", smart = "m" }\n')
    with Runtime.open(memex, tmp_path / "i.db") as rt:
        assert rt.via == "model" and [p.name for p in rt.providers] == ["local"]
        gw = rt.gateway
        assert gw is not None and gw is rt.gateway  # built once
        k1, k2 = rt.kernel(), rt.kernel()
        assert k1.reasoner is k2.reasoner is rt.reasoner and rt.reasoner.has_model


# -- one of each part ------------------------------------------------------------------------
def test_one_registry_and_one_lock_for_every_gateway(memex: Path, tmp_path: Path) -> None:
    from opencortex.mcp_server import OpenCortexTools
    from opencortex.server import create_app
    from opencortex.tui.backend import LocalBackend

    with Runtime.open(memex, tmp_path / "i.db") as rt:
        m = rt.memex
        k = rt.kernel()
        assert k.registry is rt.registry is rt.kernel().registry
        assert "router" in {s.name for s in rt.registry.skills()}
        app = create_app(m, token="t" * 20, runtime=rt, heartbeat=0, watch=0)
        tui = LocalBackend(m, runtime=rt)
        tools = OpenCortexTools(m, rt)
        locks = [rt.lock, m.lock, k.memex_lock, app.state.kernel.memex_lock,
                 app.state.access._lock, tui.kernel.memex_lock, tui.access._lock,
                 tools._lock, tools.access._lock, rt.access("cli")._lock]
        assert all(lock is m.lock for lock in locks)
        assert app.state.kernel.registry is rt.registry and app.state.runtime is rt
        assert tui.kernel.registry is rt.registry


def test_gateways_over_one_memex_share_its_lock_without_a_runtime(memex: Path,
                                                                  tmp_path: Path) -> None:
    """Built the old way (just a memex), HTTP, TUI and MCP still hold the same lock."""
    from opencortex.mcp_server import OpenCortexTools
    from opencortex.server import create_app
    from opencortex.tui.backend import LocalBackend

    with Memex(memex, tmp_path / "i.db") as m:
        app = create_app(m, token="t" * 20, heartbeat=0, watch=0)
        tui = LocalBackend(m)
        try:
            assert app.state.kernel.memex_lock is tui.kernel.memex_lock is \
                OpenCortexTools(m)._lock is m.lock
        finally:
            tui.close()
            app.state.kernel.shutdown(timeout=5)


def test_the_retriever_belongs_to_the_memex(memex: Path, tmp_path: Path) -> None:
    from opencortex.retrieval.hybrid import retriever_for

    with Runtime.open(memex, tmp_path / "i.db") as rt:
        r = rt.retriever
        assert r is retriever_for(rt.memex) is rt.retriever
        assert r.memex is rt.memex


def test_close_shuts_down_its_kernels_and_its_own_memex(memex: Path, tmp_path: Path) -> None:
    rt = Runtime.open(memex, tmp_path / "i.db")
    rt.memex.sync()
    k = rt.kernel()
    rt.close()
    assert k.submit({"payload": {"sensor": "heartbeat"}, "meta": {}}) is None  # stopped
    assert rt.memex._store is None  # closed: it opened it
    with Memex(memex, tmp_path / "i.db") as m:
        Runtime(memex=m).close()
        assert m.store.counts()  # not its memex: still open


def test_building_a_runtime_is_lazy() -> None:
    """Settings and the [llm] check only: no store, model client, retriever or skills."""
    code = ("import sys; from opencortex.runtime import Runtime; rt = Runtime(); "
            "heavy = [m for m in ('opencortex.memex', 'opencortex.llm.gateway', 'ssl', "
            "'opencortex.retrieval.hybrid', 'opencortex.skills.registry', 'numpy', "
            "'opencortex.pipeline.kernel') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=dict(os.environ), timeout=60).stdout
    assert out.strip() == "[]"


# -- --store is a value passed down, not an environment variable ---------------------------
def test_store_flag_reaches_the_command_without_touching_the_environment(
        memex: Path, tmp_path: Path) -> None:
    url = "postgresql://nobody@127.0.0.1:9/nowhere?connect_timeout=1"
    before = os.environ.get("OPENCORTEX_STORE_URL")  # set by the PostgreSQL test pass
    r = CliRunner().invoke(cli, ["--store", url, "export", "--format", "nodes",
                                 *_args(memex, tmp_path), "--json"])
    assert r.exit_code == 1, r.output
    body = json.loads(r.output.strip().splitlines()[-1])
    assert body["type"] == "IndexStoreError" and "127.0.0.1" in body["error"]
    assert os.environ.get("OPENCORTEX_STORE_URL") == before


def test_cli_settings_take_the_group_store_flag(memex: Path) -> None:
    import click

    from opencortex.cli.output import cli_settings

    seen = {}

    @click.group()
    @click.option("--store", default=None)
    def root(store: str | None) -> None:
        pass

    @root.command()
    def show() -> None:
        s = cli_settings(str(memex), None)
        seen.update(url=s.store_url, source=s.source.get("store"))

    assert CliRunner().invoke(root, ["--store", "postgresql://h/db", "show"]).exit_code == 0
    assert seen == {"url": "postgresql://h/db", "source": "flag"}


def test_no_gateway_wires_its_own_reasoner_or_borrows_another_gateways_kernel() -> None:
    """The four old copies of "reasoner from settings" and the TUI's kernel builder in
    Telegram are gone: gateways get both from a Runtime."""
    import inspect

    from opencortex.cli import agent_cmds, gateway_cmds, serve_cmds
    from opencortex.mcp_server import server as mcp_server
    from opencortex.server import app
    from opencortex.tui import backend

    for mod in (agent_cmds, gateway_cmds, serve_cmds, app, backend, mcp_server):
        src = inspect.getsource(mod)
        assert "gateway_from_settings" not in src and "Reasoner(" not in src, mod.__name__
    assert "tui" not in inspect.getsource(gateway_cmds.telegram.callback)
