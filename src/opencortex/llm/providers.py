"""Provider settings, presets for the usual OpenAI-compatible servers, and API-key lookup.

Why keys are looked up at request time and never stored on a ``Provider``: a key that is not
held cannot leak through a repr, a log line or a pickled config.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .errors import NeedsKeyError

__all__ = ["PRESETS", "Provider", "is_loopback", "preset", "resolve_key"]

KEYRING_SERVICE = "opencortex"


def is_loopback(base_url: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: text sent there never leaves the machine."""
    host = (urlsplit(base_url).hostname or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(slots=True)
class Provider:
    """One OpenAI-compatible chat-completions endpoint (``POST {base_url}/chat/completions``)."""

    name: str
    base_url: str
    models: dict[str, str] = field(default_factory=dict)
    """Model per tier, e.g. ``{"fast": "qwen2.5:3b", "smart": "qwen2.5:14b"}``."""
    api_key_env: str | None = None
    """Environment variable holding the key (also looked up in the OS keyring, if installed)."""
    key_required: bool = True
    """With ``api_key_env`` set: a missing key is a ``NeedsKeyError`` (False: send no key)."""
    timeout: float = 120.0
    """Read timeout in seconds: the longest silence tolerated while waiting for bytes."""
    connect_timeout: float = 10.0
    max_retries: int = 2
    backoff: float = 0.5
    """First retry delay in seconds; doubles per retry, with ±50% jitter."""
    max_backoff: float = 30.0
    """Longest wait between retries; a ``Retry-After`` above it fails over to the next provider."""
    supports_json_schema: bool = True
    """Send ``response_format: json_schema`` (else ``json_object`` plus a system instruction)."""
    stream_usage: bool = False
    """Ask for token usage in streams (``stream_options.include_usage``; not every server has it)."""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    local: bool | None = None
    """Loopback server (no redaction needed); None = decide from ``base_url``."""
    profile: str = "large"
    """Prompt sizes for this kind of model (``small`` | ``large``, see ``llm.profiles``);
    the ``llamacpp`` and ``ollama`` presets are ``small`` (a model on the person's CPU)."""

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        if self.local is None:
            self.local = is_loopback(self.base_url)

    def model_for(self, tier: str) -> str | None:
        """The model for ``tier``; else the ``default`` entry; else the first one configured."""
        return self.models.get(tier) or self.models.get("default") or next(
            iter(self.models.values()), None)

    def key_status(self) -> str:
        """``none`` (no key used), ``set`` or ``missing`` — for ``doctor``; never the key."""
        if not self.api_key_env:
            return "none"
        return "set" if resolve_key(self) else "missing"


_PRESETS: dict[str, dict[str, Any]] = {
    "ollama": {"base_url": "http://127.0.0.1:11434/v1", "profile": "small"},
    "llamacpp": {"base_url": "http://127.0.0.1:8080/v1", "profile": "small"},
    "vllm": {"base_url": "http://127.0.0.1:8000/v1", "stream_usage": True, "profile": "large"},
    "openrouter": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY",
                   "stream_usage": True,
                   "headers": {"X-Title": "OpenCortex"}},
    "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY",
               "stream_usage": True},
    "groq": {"base_url": "https://api.groq.com/openai/v1", "api_key_env": "GROQ_API_KEY",
             "supports_json_schema": False, "stream_usage": True},
    "gemini": {"base_url": "https://generativelanguage.googleapis.com/v1beta/openai",
               "api_key_env": "GEMINI_API_KEY"},
}
PRESETS: Mapping[str, Mapping[str, Any]] = _PRESETS
"""Preset name → ``Provider`` fields (no models: model names age too fast to hard-code)."""


def preset(kind: str, name: str | None = None, **overrides: Any) -> Provider:
    """A ``Provider`` from a preset, e.g. ``preset("ollama", models={"fast": "qwen2.5:3b"})``."""
    if kind not in _PRESETS:
        raise KeyError(f"unknown provider preset {kind!r}; known: {', '.join(sorted(_PRESETS))}")
    fields: dict[str, Any] = {**_PRESETS[kind], **overrides}
    fields["headers"] = dict(fields.get("headers") or {})
    return Provider(name=name or kind, **fields)


def resolve_key(provider: Provider) -> str | None:
    """The provider's key from its env var, else the OS keyring (service ``opencortex``,
    user = the env var name) when the ``keyring`` package is importable; None if neither."""
    var = provider.api_key_env
    if not var:
        return None
    key = os.environ.get(var, "").strip()
    if key:
        return key
    try:
        import keyring  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        key = keyring.get_password(KEYRING_SERVICE, var) or ""
    except Exception:  # any backend failure (locked, no backend) just means "no key"
        return None
    return key.strip() or None


def require_key(provider: Provider) -> str | None:
    """The key to send, None if the provider uses none; ``NeedsKeyError`` if one is required."""
    key = resolve_key(provider)
    if key is None and provider.api_key_env and provider.key_required:
        raise NeedsKeyError(provider.name, provider.api_key_env)
    return key
