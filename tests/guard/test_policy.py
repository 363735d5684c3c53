from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.errors import ConfigError, OpenCortexError
from opencortex.guard import GuardError, GuardPolicy, ShellPolicy

EXAMPLE = {"guard": {
    "tools": {"shell": "ask", "web": "allow", "memex.write": "allow"},
    "shell": {"allow": ["ls", "rg", "git", "date", "cat", "echo", "wc", "head", "tail", "grep",
                        "find"], "allow_shell": False, "timeout": 20, "max_output": 65536},
    "privacy_tags": ["@personal", "private"],
    "remote_ok": False,
}}


def test_defaults() -> None:
    p = GuardPolicy()
    assert p.verdict_for("shell") == "ask"
    assert p.verdict_for("web") == "ask"
    assert p.verdict_for("reply") == "allow"
    assert p.verdict_for("memex.write") == "allow"
    assert p.verdict_for("delegate") == "allow"
    assert p.verdict_for("rocket.launch") is None
    assert p.shell.allow_shell is False and "ls" in p.shell.allow
    assert p.privacy_tags == {"private", "@personal"} and p.remote_ok is False
    assert GuardPolicy.from_config({}) == GuardPolicy.from_config(None)


def test_example_config() -> None:
    p = GuardPolicy.from_config(EXAMPLE)
    assert p.verdict_for("web") == "allow"
    assert p.verdict_for("delegate") == "allow"  # untouched default
    assert p.shell == ShellPolicy(allow=tuple(EXAMPLE["guard"]["shell"]["allow"]),
                                  timeout=20.0, max_output=65536)


@pytest.mark.parametrize("bad", [
    {"guard": {"tools": {"shell": "yes"}}},
    {"guard": {"shell": {"allow_shell": "true"}}},
    {"guard": {"shell": {"timeout": -1}}},
    {"guard": {"shell": {"allow": "ls"}}},
    {"guard": {"shell": {"alow": ["ls"]}}},  # typo: must not silently fall back
    {"guard": {"remote_okay": True}},
    {"guard": {"shell": {"path": ["bin"]}}},
    {"guard": "nope"},
])
def test_bad_config_is_an_error(bad: dict) -> None:
    with pytest.raises(ConfigError):
        GuardPolicy.from_config(bad)


def test_from_toml(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    f.write_text('[guard.tools]\nshell = "allow"\n[guard.shell]\nallow = ["ls"]\n')
    p = GuardPolicy.from_toml(f)
    assert p.verdict_for("shell") == "allow" and p.shell.allow == ("ls",)
    assert GuardPolicy.from_toml(tmp_path / "missing.toml") == GuardPolicy()
    f.write_text("[guard\n")
    with pytest.raises(ConfigError):
        GuardPolicy.from_toml(f)


def test_errors_are_opencortex_errors() -> None:
    assert issubclass(GuardError, OpenCortexError)
