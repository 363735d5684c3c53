"""Typed settings: each config table parsed once in config.py; OPENCORTEX_* read only there."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from opencortex import config
from opencortex.config import (
    GuardSettings,
    RecallSettings,
    ServerSettings,
    TelegramSettings,
    WebSettings,
    load_settings,
)
from opencortex.errors import ConfigError
from opencortex.guard.policy import policy_of

SRC = Path(config.__file__).resolve().parent


def _write(text: str) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text, encoding="utf-8")


def test_sections_are_typed_from_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    _write('[server]\nport = 9999\nrate = 5\nallowed_hosts = ["box.lan"]\n'
           '[telegram]\ntoken_env = "MY_BOT"\nallow = [42, "43"]\n'
           '[web]\nsearch_endpoint = "http://searx:8888"\n'
           '[identity]\nname = "Ada"\ntimezone = "Europe/Berlin"\n'
           '[recall]\nsources = ["git:/src"]\nindex = "store"\n'
           '[guard]\nprivacy_tags = ["secret"]\n')
    monkeypatch.setenv("OPENCORTEX_RECALL_SOURCES", "notes:/n, ")
    monkeypatch.setenv("MY_BOT", " 123:abc ")
    s = load_settings()
    assert s.server == ServerSettings(port=9999, rate=5.0, allowed_hosts=("box.lan",))
    assert s.telegram.allow == (42, 43) and s.telegram.token() == "123:abc"
    assert s.web.search_endpoint == "http://searx:8888"
    assert s.identity.name == "Ada" and s.identity.as_dict()["timezone"] == "Europe/Berlin"
    assert s.recall == RecallSettings(defaults=False, sources=("git:/src", "notes:/n"),
                                      index="store")  # the test env turns defaults off
    pol = policy_of(s.guard)
    assert "secret" in pol.privacy_tags and policy_of(s.guard) is pol  # parsed once


@pytest.mark.parametrize("text, setting", [
    ("[server]\nport = -1\n", "server.port"),
    ("[server]\nport = 1.5\n", "server.port"),
    ('[server]\nallowed_hosts = "x"\n', "server.allowed_hosts"),
    ('[telegram]\nallow = ["me"]\n', "[telegram] allow"),
    ("[web]\nsearch_endpoint = 3\n", "web.search_endpoint"),
    ("[identity]\nname = 3\n", "identity.name"),
    ('[recall]\nindex = "cloud"\n', "recall.index"),
    ('server = "x"\n', "[server]"),
])
def test_a_bad_value_names_the_setting(text: str, setting: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENCORTEX_RECALL_INDEX", raising=False)  # the PostgreSQL pass sets it
    _write(text)
    with pytest.raises(ConfigError, match=re.escape(setting)):
        load_settings()


def test_a_bad_guard_or_llm_table_waits_for_its_user() -> None:
    """`opencortex index` needs neither: the guard and the Runtime report them."""
    _write('guard = "x"\nllm = "y"\n')
    s = load_settings()
    with pytest.raises(ConfigError, match="guard"):
        policy_of(s.guard)


def test_apply_config_replaces_every_section() -> None:
    s = load_settings()
    s.apply_config({"identity": {"name": "Mira"}, "web": {"search_endpoint": "http://s"}})
    assert s.identity.name == "Mira" and s.web.search_endpoint == "http://s"
    assert s.data == {"identity": {"name": "Mira"}, "web": {"search_endpoint": "http://s"}}
    assert isinstance(s.guard, GuardSettings) and s.guard.table == {}


def test_env_fallbacks_live_in_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCORTEX_SEARCH_ENDPOINT", "http://env-searx")
    assert WebSettings.parse({}).search_endpoint == "http://env-searx"
    assert WebSettings.parse({"search_endpoint": ""}).search_endpoint is None
    assert TelegramSettings.parse({}).token_env == "OPENCORTEX_TELEGRAM_TOKEN"
    with pytest.raises(KeyError, match="not a documented"):
        config.env("OPENCORTEX_SOMETHING_NEW")


def test_opencortex_variables_are_read_only_in_config_py() -> None:
    """Outside config.py nobody reads an OPENCORTEX_* variable from os.environ (or writes
    one: --store is passed as a value); every config.env() name is documented."""
    direct = re.compile(r"(?:environ(?:\.get|\.setdefault|\.pop)?\s*[\[(]|getenv\s*\()"
                        r"\s*[\"']OPENCORTEX_")
    strays, undocumented = [], []
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path != SRC / "config.py" and direct.search(text):
            strays.append(str(path.relative_to(SRC)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("env",
                                                                                 "setting") \
                    and node.args and isinstance(node.args[0], ast.Constant) and \
                    str(node.args[0].value).startswith("OPENCORTEX_") and \
                    node.args[0].value not in config.ENVIRONMENT:
                undocumented.append(f"{path.relative_to(SRC)}: {node.args[0].value}")
    assert strays == [] and undocumented == []


@pytest.mark.parametrize("text,message", [
    ('[captur]\ntarget = "in.org"\n', "unknown section [captur]; did you mean [capture]?"),
    ('[server]\nprot = 9000\n', "unknown key 'prot' in [server]; did you mean 'port'?"),
    ('[todo]\nlog_into_drawers = false\n',
     "unknown key 'log_into_drawers' in [todo]; did you mean 'log_into_drawer'?"),
    ('memx = "~/notes"\n', "unknown setting 'memx'; did you mean 'memex'?"),
    ('[archive]\nretention = 30\n', "unknown key 'retention' in [archive]"),
    ('[zzz]\n', "unknown section [zzz] (known sections: [archive], [capture]"),
])
def test_unknown_sections_and_keys_are_errors(text: str, message: str) -> None:
    """Issue 27: a typo was ignored without a word; now it is an error naming the close match."""
    _write(text)
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert message in str(e.value) and "config.toml" in str(e.value)


def test_every_documented_setting_is_known() -> None:
    """The check knows every key the loader and the typed sections read (none refused)."""
    _write('memex = "~/m"\nindex = "/tmp/i.sqlite3"\nnotes_dir = "n"\n'
           '[capture]\ntarget = "inbox.org"\n'
           '[todo]\nlog_into_drawer = true\nlog_states = false\npriorities = "A E C"\n'
           '[retrieval]\nembedder = "minilm"\n[store]\nschema = "x"\n'
           '[archive]\nenabled = true\nretention_days = 0\ninterval = 300\n'
           '[server]\nhost = "127.0.0.1"\nport = 1\nheartbeat = 1\nrate = 1\nburst = 1\n'
           'approval_timeout = 1\nmax_body = 1\nrequest_timeout = 1\nallowed_hosts = []\n'
           '[telegram]\ntoken_env = "X"\nallow = []\npoll_timeout = 3\n'
           '[web]\nsearch_endpoint = "http://s"\n[identity]\nname = "A"\nlocation = "B"\n'
           'timezone = "UTC"\n[recall]\ndefaults = false\nsources = []\nindex = "local"\n'
           '[llm.providers.local]\npreset = "ollama"\n[guard.tools]\nshell = "ask"\n')
    s = load_settings()
    assert s.capture_target == "inbox.org" and s.notes_dir == "n" and s.server.port == 1


def test_every_table_the_settings_read_is_a_known_section() -> None:
    """A section a parser reads (``_table(data, "x")``) but the name check does not know
    would make every config that sets it an error ([sessions] was, once)."""
    import inspect
    import re

    from opencortex import config

    read = set(re.findall(r'_table\(data, "(\w+)"\)', inspect.getsource(config)))
    assert read, "the pattern no longer finds the parsers' tables"
    assert read <= set(config.known_config()), read - set(config.known_config())
    config.check_config_names({"sessions": {"dir": "agent/sessions", "record": True,
                                            "retention_days": 30}})
