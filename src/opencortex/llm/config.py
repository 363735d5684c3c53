"""Providers from the config file's ``[llm]`` table and the ``OPENCORTEX_LLM_*`` override.

TOML shape::

    [llm]
    cascade = ["local", "openrouter"]          # order of trial; default: table order

    [llm.providers.local]
    preset = "ollama"                          # ollama llamacpp vllm openrouter openai groq gemini
    models = { fast = "qwen2.5:3b", smart = "qwen2.5:14b" }

    [llm.providers.openrouter]
    preset = "openrouter"                      # key from $OPENROUTER_API_KEY (or the keyring)
    models = { fast = "...", smart = "..." }
    # any Provider field may be set too: base_url, api_key_env, key_required, timeout,
    # connect_timeout, max_retries, backoff, max_backoff, supports_json_schema,
    # stream_usage, headers, local, profile

    profile = "small"                          # prompt sizes: small | large (default: the
                                               # first provider's; llamacpp/ollama: small)
    budget = 30                                # seconds a request waits for the model
                                               # before the offline answer (default: profile's)

Environment override (replaces the whole cascade; handy for one-off runs and CI):
``OPENCORTEX_LLM_BASE_URL`` (a URL or a preset name) + ``OPENCORTEX_LLM_MODEL`` (all tiers),
optional ``OPENCORTEX_LLM_API_KEY``; ``OPENCORTEX_LLM_PROFILE`` / ``OPENCORTEX_LLM_BUDGET``
override ``[llm] profile`` / ``budget``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError
from .providers import PRESETS, Provider, preset

if TYPE_CHECKING:
    from .gateway import Gateway

__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_BUDGET",
    "ENV_MODEL",
    "ENV_PROFILE",
    "gateway_from_settings",
    "options_from_config",
    "providers_from_config",
]

ENV_BASE_URL = "OPENCORTEX_LLM_BASE_URL"
ENV_MODEL = "OPENCORTEX_LLM_MODEL"
ENV_API_KEY = "OPENCORTEX_LLM_API_KEY"
ENV_PROFILE = "OPENCORTEX_LLM_PROFILE"
ENV_BUDGET = "OPENCORTEX_LLM_BUDGET"

_FLOAT = ("timeout", "connect_timeout", "backoff", "max_backoff")
_BOOL = ("key_required", "supports_json_schema", "stream_usage", "local")
_STR = ("base_url", "api_key_env")


def _profile_name(value: Any, where: str) -> str:
    from .profiles import PROFILES

    if not isinstance(value, str) or value not in PROFILES:
        raise ConfigError(f"{where} must be one of {', '.join(sorted(PROFILES))}, got {value!r}")
    return value


def _budget(value: Any, where: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds, got {value!r}")
    return float(value)


def options_from_config(data: Mapping[str, Any] | None,
                        env: Mapping[str, str] | None = None
                        ) -> tuple[str | None, float | None]:
    """``(profile, budget)`` from ``[llm]`` and ``OPENCORTEX_LLM_PROFILE``/``_BUDGET``
    (None: not set — the gateway takes the first provider's profile and its budget)."""
    if env is None:
        from ..config import env as setting

        env = {k: v for k in (ENV_PROFILE, ENV_BUDGET) if (v := setting(k)) is not None}
    data = data or {}
    llm = data.get("llm", data if ("providers" in data or "cascade" in data) else {})
    llm = llm if isinstance(llm, Mapping) else {}
    name: str | None = None
    budget: float | None = None
    if env.get(ENV_PROFILE, "").strip():
        name = _profile_name(env[ENV_PROFILE].strip(), ENV_PROFILE)
    elif "profile" in llm:
        name = _profile_name(llm["profile"], "llm.profile")
    if env.get(ENV_BUDGET, "").strip():
        budget = _budget(env[ENV_BUDGET].strip(), ENV_BUDGET)
    elif "budget" in llm:
        budget = _budget(llm["budget"], "llm.budget")
    return name, budget


def providers_from_config(data: Mapping[str, Any] | None,
                          env: Mapping[str, str] | None = None) -> list[Provider]:
    """The cascade, in order; empty when nothing is configured (offline mode)."""
    if env is None:
        from ..config import env as setting

        env = {k: v for k in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY) if (v := setting(k)) is not None}
    if env.get(ENV_BASE_URL, "").strip():
        return [_from_env(env)]
    if env.get(ENV_MODEL, "").strip():
        raise ConfigError(f"{ENV_MODEL} is set but {ENV_BASE_URL} is not: set both (e.g. "
                          f"{ENV_BASE_URL}=ollama {ENV_MODEL}=qwen2.5:3b), or unset {ENV_MODEL}")
    data = data or {}
    llm = data.get("llm", data if ("providers" in data or "cascade" in data) else {})
    if not isinstance(llm, Mapping):
        raise ConfigError("[llm] in the config must be a table")
    tables = llm.get("providers") or {}
    if not isinstance(tables, Mapping):
        raise ConfigError("llm.providers must be a table of [llm.providers.NAME] tables")
    unknown = set(llm) - {"providers", "cascade", "profile", "budget"}
    if unknown:
        raise ConfigError(f"unknown key(s) in [llm]: {', '.join(sorted(unknown))} "
                          "(allowed: cascade, providers, profile, budget)")
    cascade = llm.get("cascade", list(tables))
    if not isinstance(cascade, list) or not all(isinstance(n, str) for n in cascade):
        raise ConfigError('llm.cascade must be a list of provider names, e.g. ["local"]')
    out = []
    for name in cascade:
        if name not in tables:
            raise ConfigError(f"llm.cascade names {name!r} but there is no [llm.providers.{name}] "
                              f"table (defined: {', '.join(tables) or 'none'})")
        out.append(_provider(name, tables[name]))
    return out


def _provider(name: str, table: Any) -> Provider:
    where = f"llm.providers.{name}"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table")
    fields: dict[str, Any] = {}
    kind = table.get("preset")
    for key, value in table.items():
        path = f"{where}.{key}"
        if key == "preset":
            if kind not in PRESETS:
                raise ConfigError(f"{path}: unknown preset {value!r}; use one of "
                                  f"{', '.join(sorted(PRESETS))}")
        elif key == "models":
            if not isinstance(value, Mapping) or not all(
                    isinstance(v, str) and v for v in value.values()):
                raise ConfigError(f'{path} must be a table of model names, e.g. '
                                  '{ fast = "qwen2.5:3b", smart = "qwen2.5:14b" }')
            fields["models"] = dict(value)
        elif key == "headers":
            if not isinstance(value, Mapping) or not all(
                    isinstance(v, str) for v in value.values()):
                raise ConfigError(f"{path} must be a table of header names to strings")
            fields["headers"] = dict(value)
        elif key in _FLOAT:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{path} must be a non-negative number of seconds")
            fields[key] = float(value)
        elif key == "max_retries":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{path} must be a whole number >= 0")
            fields[key] = value
        elif key in _BOOL:
            if not isinstance(value, bool):
                raise ConfigError(f"{path} must be true or false")
            fields[key] = value
        elif key == "profile":
            fields[key] = _profile_name(value, path)
        elif key in _STR:
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path} must be a non-empty string")
            fields[key] = value.strip()
        else:
            raise ConfigError(f"{path}: unknown setting {key!r}")
    if not fields.get("models"):
        raise ConfigError(f'{where} needs models, e.g. models = {{ fast = "MODEL", '
                          f'smart = "MODEL" }}')
    if kind is not None:
        return preset(kind, name, **fields)
    if "base_url" not in fields:
        raise ConfigError(f"{where} needs a preset ({', '.join(sorted(PRESETS))}) or a base_url")
    return Provider(name=name, **fields)


def _from_env(env: Mapping[str, str]) -> Provider:
    url = env[ENV_BASE_URL].strip()
    model = env.get(ENV_MODEL, "").strip()
    if not model:
        raise ConfigError(f"{ENV_BASE_URL} is set but {ENV_MODEL} is not: name the model too")
    models = {"fast": model, "smart": model}
    has_key = bool(env.get(ENV_API_KEY, "").strip())
    if url in PRESETS:
        extra: dict[str, Any] = {"api_key_env": ENV_API_KEY, "key_required": False} if has_key \
            else {}
        return preset(url, "env", models=models, **extra)
    if "://" not in url:
        raise ConfigError(f"{ENV_BASE_URL}={url!r} is neither a URL (http://HOST:PORT/v1) nor a "
                          f"preset ({', '.join(sorted(PRESETS))})")
    return Provider(name="env", base_url=url, models=models, api_key_env=ENV_API_KEY,
                    key_required=False)


class _Default(enum.Enum):
    """``redact`` not given (None means: no redaction)."""
    TOKEN = 0


_DEFAULT = _Default.TOKEN


def gateway_from_settings(settings: Any = None, *,
                          redact: Callable[[str], str] | Literal[_Default.TOKEN] | None = _DEFAULT
                          ) -> Gateway:
    """The gateway for the running app: the ``[llm]`` table of the settings' raw config
    (``settings.data``/``settings.raw`` if the loader keeps it, else the config file itself)
    plus the ``OPENCORTEX_LLM_*`` override.  ``redact`` defaults to the guard's secret
    redactor when that module is importable."""
    from .gateway import Gateway

    data: Any = None
    llm: Any = getattr(settings, "llm", None)
    if callable(getattr(llm, "config", None)):  # config.Settings: its typed [llm] section
        data = llm.config()
    for attr in ("data", "raw", "config") if data is None else ():
        value = getattr(settings, attr, None)
        if isinstance(value, Mapping):
            data = value
            break
    if data is None:
        data = _read_config_file()
    if redact is _DEFAULT:
        guard_redact: Callable[[str], str] | None
        try:
            from ..guard.secrets import redact as guard_redact
        except ImportError:
            guard_redact = None
        redact = guard_redact
    return Gateway.from_config(data, redact=redact)


def _read_config_file() -> dict[str, Any]:
    import tomllib

    from ..config import config_path

    path = config_path()
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML ({e}); fix or remove the file") from e
