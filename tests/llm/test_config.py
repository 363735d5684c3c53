"""Presets, the [llm] config table, the OPENCORTEX_LLM_* override, keys and import cost."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import types

import pytest

from opencortex.errors import ConfigError
from opencortex.llm import PRESETS, Gateway, Message, Provider, is_loopback, preset
from opencortex.llm.config import providers_from_config
from opencortex.llm.providers import resolve_key

from .conftest import Reply, completion

EXAMPLE = """
[llm]
cascade = ["local", "openrouter"]

[llm.providers.local]
preset = "ollama"
models = { fast = "qwen2.5:3b", smart = "qwen2.5:14b" }

[llm.providers.openrouter]
preset = "openrouter"
models = { fast = "meta-llama/llama-3.1-8b-instruct", smart = "anthropic/claude-sonnet-4" }
timeout = 30
max_retries = 1
"""


@pytest.mark.parametrize(("kind", "url", "key_env", "local"), [
    ("ollama", "http://127.0.0.1:11434/v1", None, True),
    ("llamacpp", "http://127.0.0.1:8080/v1", None, True),
    ("vllm", "http://127.0.0.1:8000/v1", None, True),
    ("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", False),
    ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", False),
    ("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", False),
    ("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY",
     False),
])
def test_presets(kind, url, key_env, local):
    p = preset(kind, models={"fast": "m"})
    assert (p.name, p.base_url, p.api_key_env, p.local) == (kind, url, key_env, local)
    assert kind in PRESETS


def test_preset_headers_are_copied_not_shared():
    a = preset("openrouter")
    a.headers["X"] = "1"
    assert "X" not in preset("openrouter").headers


@pytest.mark.parametrize(("url", "local"), [
    ("http://localhost:11434/v1", True), ("http://127.0.0.2:1/v1", True),
    ("http://[::1]:8080/v1", True), ("https://api.openai.com/v1", False),
    ("http://192.168.1.5:11434/v1", False), ("http://localhost.evil.com/v1", False),
])
def test_loopback(url, local):
    assert is_loopback(url) is local


def test_config_example_builds_the_cascade():
    ps = providers_from_config(tomllib.loads(EXAMPLE), env={})
    assert [p.name for p in ps] == ["local", "openrouter"]
    local, remote = ps
    assert local.base_url == "http://127.0.0.1:11434/v1" and local.local
    assert local.models == {"fast": "qwen2.5:3b", "smart": "qwen2.5:14b"}
    assert remote.api_key_env == "OPENROUTER_API_KEY" and not remote.local
    assert remote.timeout == 30.0 and remote.max_retries == 1
    gw = Gateway.from_config(tomllib.loads(EXAMPLE), env={})
    assert gw.configured and [p.name for p in gw.providers] == ["local", "openrouter"]


def test_llm_table_alone_and_default_cascade_order():
    data = {"providers": {"b": {"preset": "vllm", "models": {"fast": "x"}},
                          "a": {"base_url": "http://10.0.0.2:9000/v1", "models": {"fast": "y"},
                                "api_key_env": "MY_KEY", "local": True,
                                "headers": {"X-Org": "me"}}}}
    ps = providers_from_config(data, env={})
    assert [p.name for p in ps] == ["b", "a"]
    assert ps[1].local is True and ps[1].headers == {"X-Org": "me"}


def test_no_config_means_not_configured():
    assert not Gateway.from_config(None, env={}).configured
    assert not Gateway.from_config({"memex": "~/m"}, env={}).configured
    assert not Gateway.from_config({"llm": {}}, env={}).configured


@pytest.mark.parametrize(("llm", "match"), [
    ({"cascade": ["x"], "providers": {}}, r"no \[llm.providers.x\]"),
    ({"providers": {"x": {"preset": "nope", "models": {"fast": "m"}}}}, "unknown preset"),
    ({"providers": {"x": {"preset": "ollama"}}}, "needs models"),
    ({"providers": {"x": {"models": {"fast": "m"}}}}, "needs a preset"),
    ({"providers": {"x": {"preset": "ollama", "models": {"fast": "m"}, "timout": 3}}},
     "unknown setting 'timout'"),
    ({"providers": {"x": {"preset": "ollama", "models": {"fast": "m"}, "timeout": "3"}}},
     "timeout must be"),
    ({"providers": {"x": {"preset": "ollama", "models": {"fast": "m"}, "max_retries": -1}}},
     "max_retries"),
    ({"providers": {"x": {"preset": "ollama", "models": ["m"]}}}, "models must be"),
    ({"cascade": "x", "providers": {}}, "cascade must be a list"),
    ({"providers": {}, "cascde": []}, "unknown key"),
])
def test_config_errors_say_what_to_fix(llm, match):
    with pytest.raises(ConfigError, match=match):
        providers_from_config({"llm": llm}, env={})


def test_env_override_replaces_the_cascade():
    env = {"OPENCORTEX_LLM_BASE_URL": "http://127.0.0.1:9999/v1",
           "OPENCORTEX_LLM_MODEL": "tiny", "OPENCORTEX_LLM_API_KEY": "k"}
    (p,) = providers_from_config(tomllib.loads(EXAMPLE), env=env)
    assert p.name == "env" and p.base_url == "http://127.0.0.1:9999/v1"
    assert p.models == {"fast": "tiny", "smart": "tiny"}
    assert p.api_key_env == "OPENCORTEX_LLM_API_KEY" and not p.key_required


def test_env_override_with_a_preset_name():
    (p,) = providers_from_config(None, env={"OPENCORTEX_LLM_BASE_URL": "groq",
                                            "OPENCORTEX_LLM_MODEL": "llama"})
    assert p.base_url == "https://api.groq.com/openai/v1" and p.api_key_env == "GROQ_API_KEY"
    (p,) = providers_from_config(None, env={"OPENCORTEX_LLM_BASE_URL": "groq",
                                            "OPENCORTEX_LLM_MODEL": "llama",
                                            "OPENCORTEX_LLM_API_KEY": "k"})
    assert p.api_key_env == "OPENCORTEX_LLM_API_KEY"


@pytest.mark.parametrize("env", [
    {"OPENCORTEX_LLM_MODEL": "m"},
    {"OPENCORTEX_LLM_BASE_URL": "http://127.0.0.1:1/v1"},
    {"OPENCORTEX_LLM_BASE_URL": "not a url", "OPENCORTEX_LLM_MODEL": "m"},
])
def test_env_override_errors(env):
    with pytest.raises(ConfigError, match="OPENCORTEX_LLM_"):
        providers_from_config(None, env=env)


def test_env_override_end_to_end(server, monkeypatch):
    monkeypatch.setenv("OPENCORTEX_LLM_BASE_URL", server.url)
    monkeypatch.setenv("OPENCORTEX_LLM_MODEL", "env-model")
    monkeypatch.setenv("OPENCORTEX_LLM_API_KEY", "sk-env")
    server.push(Reply(body=completion("via env")))
    gw = Gateway.from_config(tomllib.loads(EXAMPLE))
    assert gw.complete([Message("user", "hi")]).text == "via env"
    assert server.last.body["model"] == "env-model"
    assert server.last.headers["Authorization"] == "Bearer sk-env"


def test_key_from_keyring_when_importable(monkeypatch):
    monkeypatch.delenv("SOME_API_KEY", raising=False)
    p = Provider("x", "https://example.invalid/v1", api_key_env="SOME_API_KEY")
    monkeypatch.setitem(sys.modules, "keyring", None)  # not installed
    assert resolve_key(p) is None and p.key_status() == "missing"
    fake = types.ModuleType("keyring")
    fake.get_password = lambda service, user: ("from-keyring" if (service, user) ==
                                               ("opencortex", "SOME_API_KEY") else None)
    monkeypatch.setitem(sys.modules, "keyring", fake)
    assert resolve_key(p) == "from-keyring"
    monkeypatch.setenv("SOME_API_KEY", "from-env")
    assert resolve_key(p) == "from-env"  # the environment wins


def test_broken_keyring_means_no_key(monkeypatch):
    monkeypatch.delenv("SOME_API_KEY", raising=False)
    fake = types.ModuleType("keyring")

    def boom(service, user):
        raise RuntimeError("no backend")

    fake.get_password = boom
    monkeypatch.setitem(sys.modules, "keyring", fake)
    assert resolve_key(Provider("x", "https://e.invalid/v1", api_key_env="SOME_API_KEY")) is None


def test_repr_hides_headers():
    p = preset("openai", headers={"X-Secret-Header": "s3cret"})
    assert "s3cret" not in repr(p)


def test_import_is_light():
    code = ("import sys, opencortex.llm; "
            "heavy = [m for m in ('http.client', 'ssl', 'opencortex.llm.gateway', 'jsonschema') "
            "if m in sys.modules]; print(heavy); assert not heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gateway_from_settings_reads_the_config_file(server, tmp_path, monkeypatch):
    from opencortex.llm import gateway_from_settings

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[llm.providers.local]\nbase_url = "{server.url}"\n'
                   'models = { fast = "from-file" }\n', encoding="utf-8")
    monkeypatch.setenv("OPENCORTEX_CONFIG", str(cfg))
    gw = gateway_from_settings(object())
    assert gw.configured and gw.redact is not None  # the guard's redactor by default
    gw.complete([Message("user", "hi")])
    assert server.last.body["model"] == "from-file"
    cfg.write_text("[llm\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        gateway_from_settings(None)


def test_gateway_from_settings_prefers_raw_data_and_no_config_is_offline(tmp_path, monkeypatch):
    from opencortex.llm import gateway_from_settings

    monkeypatch.setenv("OPENCORTEX_CONFIG", str(tmp_path / "missing.toml"))
    assert not gateway_from_settings(None).configured
    settings = types.SimpleNamespace(data=tomllib.loads(EXAMPLE))
    gw = gateway_from_settings(settings, redact=None)
    assert [p.name for p in gw.providers] == ["local", "openrouter"] and gw.redact is None


def test_connection_targets_and_proxies(monkeypatch):
    import http.client

    from opencortex.llm._http import _connection

    for var in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    conn, target = _connection("https://api.openai.com/v1/chat/completions", 1.0)
    assert isinstance(conn, http.client.HTTPSConnection)
    assert (conn.host, conn.port, target) == ("api.openai.com", 443, "/v1/chat/completions")
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    conn, _ = _connection("https://api.openai.com/v1/chat/completions", 1.0)
    assert (conn.host, conn.port) == ("proxy.example", 3128)
    assert conn._tunnel_host == "api.openai.com"
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    conn, target = _connection("http://127.0.0.1:11434/v1/chat/completions", 1.0)
    assert conn.host == "127.0.0.1" and target == "/v1/chat/completions"  # loopback: direct
    monkeypatch.setenv("no_proxy", "api.openai.com")
    conn, _ = _connection("https://api.openai.com/v1/chat/completions", 1.0)
    assert conn.host == "api.openai.com"
