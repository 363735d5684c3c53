"""Guard policy: which tools run freely, which ask, which are refused, read from ``[guard]``.

Config shape (TOML)::

    [guard]
    privacy_tags = ["@personal", "private"]   # nodes with these tags never go to remote models
    remote_ok = false                         # true = you accept private-tagged text going remote

    [guard.tools]                 # "allow" | "ask" | "deny"; unknown tools are denied
    shell = "ask"
    web = "ask"
    "memex.write" = "allow"

    [guard.shell]
    allow = ["ls", "rg", "git", ...]   # program names (or full paths) that may run
    allow_shell = false                # true = strings with ; | & > < may run under /bin/sh -c
    timeout = 20                       # seconds; the whole process group is killed after
    max_output = 65536                 # bytes kept per stream; the rest is cut and flagged
    path = ["/usr/local/bin", "/usr/bin", "/bin"]   # where programs are looked up
    sandbox = "auto"                   # "auto": bubblewrap when it works (else shell always
                                       # asks); "required": refuse commands without it;
                                       # "off": never sandbox (shell always asks)

    [guard.web]
    allow_private_hosts = false        # true = web may fetch localhost / LAN addresses

Unknown keys are a ConfigError: a typo in a safety setting must not silently fall back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import GuardSettings

__all__ = [
    "DEFAULT_BIN_DIRS",
    "DEFAULT_SHELL_ALLOW",
    "DEFAULT_TOOLS",
    "GuardPolicy",
    "ShellPolicy",
    "Verdict",
    "WebPolicy",
    "policy_of",
]

Verdict = Literal["allow", "ask", "deny"]
SandboxMode = Literal["auto", "required", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")
VERDICTS: tuple[Verdict, ...] = ("allow", "ask", "deny")

DEFAULT_TOOLS: Mapping[str, Verdict] = MappingProxyType({
    "reply": "allow",
    "memex.write": "allow",
    "delegate": "allow",
    "shell": "ask",
    "web": "ask",
    "websearch": "ask",
    "skill.trust": "ask",  # always asked (guard.trust); "deny" switches it off
})
DEFAULT_SHELL_ALLOW: tuple[str, ...] = (
    "ls", "rg", "git", "date", "cat", "echo", "wc", "head", "tail", "grep", "find",
)
DEFAULT_BIN_DIRS: tuple[str, ...] = (
    "/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin",
    "/opt/homebrew/bin", "/run/current-system/sw/bin",
)
DEFAULT_PRIVACY_TAGS: tuple[str, ...] = ("private", "@personal")


@dataclass(frozen=True, slots=True)
class ShellPolicy:
    allow: tuple[str, ...] = DEFAULT_SHELL_ALLOW
    allow_shell: bool = False
    timeout: float = 20.0
    max_output: int = 65536
    path: tuple[str, ...] = DEFAULT_BIN_DIRS
    """Directories programs are looked up in (also the child's PATH)."""
    sandbox: SandboxMode = "auto"
    """Run commands under bubblewrap (see guard/sandbox.py); without it shell always asks."""


@dataclass(frozen=True, slots=True)
class WebPolicy:
    allow_private_hosts: bool = False


@dataclass(frozen=True, slots=True)
class GuardPolicy:
    tools: Mapping[str, Verdict] = field(default_factory=lambda: dict(DEFAULT_TOOLS))
    shell: ShellPolicy = field(default_factory=ShellPolicy)
    web: WebPolicy = field(default_factory=WebPolicy)
    privacy_tags: frozenset[str] = frozenset(DEFAULT_PRIVACY_TAGS)
    """Normalised (casefolded, no colons); compare with privacy.normalise_tag."""
    remote_ok: bool = False

    def verdict_for(self, tool: str) -> Verdict | None:
        """The configured verdict, or None for a tool nobody declared (callers deny it)."""
        return self.tools.get(tool)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> GuardPolicy:
        """Build from the whole parsed config.toml (its ``[guard]`` table); missing = defaults."""
        if not config:
            return cls()
        g = config.get("guard", {})
        if not isinstance(g, Mapping):
            raise ConfigError("[guard] must be a table")
        _known(g, {"tools", "shell", "web", "privacy_tags", "remote_ok", "trusted_clients"},
               "guard")  # trusted_clients: read by config.py (Settings.trusted_clients)
        tools: dict[str, Verdict] = dict(DEFAULT_TOOLS)
        for name, v in _table(g, "tools").items():
            if v not in VERDICTS:
                raise ConfigError(
                    f'guard.tools."{name}" must be "allow", "ask" or "deny", got {v!r}')
            tools[str(name)] = v
        sh = _table(g, "shell")
        _known(sh, {"allow", "allow_shell", "timeout", "max_output", "path", "sandbox"},
               "guard.shell")
        d = ShellPolicy()
        mode = sh.get("sandbox", d.sandbox)
        if mode not in SANDBOX_MODES:
            raise ConfigError(f'guard.shell.sandbox must be "auto", "required" or "off", '
                              f"got {mode!r}")
        shell = ShellPolicy(
            allow=_strings(sh, "allow", d.allow, "guard.shell.allow"),
            allow_shell=_flag(sh, "allow_shell", d.allow_shell, "guard.shell.allow_shell"),
            timeout=_number(sh, "timeout", d.timeout, "guard.shell.timeout"),
            max_output=int(_number(sh, "max_output", d.max_output, "guard.shell.max_output")),
            path=_strings(sh, "path", d.path, "guard.shell.path"),
            sandbox=mode,
        )
        if any(not p.startswith("/") for p in shell.path):
            raise ConfigError("guard.shell.path entries must be absolute directories")
        web = _table(g, "web")
        _known(web, {"allow_private_hosts"}, "guard.web")
        from .privacy import normalise_tag

        tags = _strings(g, "privacy_tags", DEFAULT_PRIVACY_TAGS, "guard.privacy_tags")
        return cls(
            tools=tools,
            shell=shell,
            web=WebPolicy(_flag(web, "allow_private_hosts", False,
                                "guard.web.allow_private_hosts")),
            privacy_tags=frozenset(t for t in map(normalise_tag, tags) if t),
            remote_ok=_flag(g, "remote_ok", False, "guard.remote_ok"),
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> GuardPolicy:
        """Read a config.toml file; a missing file means all defaults."""
        p = Path(path).expanduser()
        if not p.exists():
            return cls()
        import tomllib

        try:
            return cls.from_config(tomllib.loads(p.read_text(encoding="utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{p}: not valid TOML ({e}); fix or remove the file") from e


def _known(table: Mapping[str, Any], keys: set[str], where: str) -> None:
    extra = sorted(set(table) - keys)
    if extra:
        raise ConfigError(
            f"[{where}] has unknown key(s) {', '.join(extra)}; known: {', '.join(sorted(keys))}")


def _table(t: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = t.get(key, {})
    if not isinstance(v, Mapping):
        raise ConfigError(f"guard.{key} must be a table")
    return v


def _strings(t: Mapping[str, Any], key: str, default: tuple[str, ...], name: str) -> tuple[str, ...]:
    if key not in t:
        return default
    v = t[key]
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{name} must be a list of non-empty strings, got {v!r}")
    return tuple(v)


def _flag(t: Mapping[str, Any], key: str, default: bool, name: str) -> bool:
    v = t.get(key, default)
    if not isinstance(v, bool):
        raise ConfigError(f"{name} must be true or false, got {v!r}")
    return v


def _number(t: Mapping[str, Any], key: str, default: float, name: str) -> float:
    v = t.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
        raise ConfigError(f"{name} must be a positive number, got {v!r}")
    return float(v)


def policy_of(section: GuardSettings) -> GuardPolicy:
    """The GuardPolicy of a ``[guard]`` settings section, parsed on first use and kept on
    it (ConfigError naming the bad ``guard.*`` setting)."""
    if section.parsed is None:
        section.parsed = GuardPolicy.from_config({"guard": section.table}
                                                  if section.table else None)
    return section.parsed
