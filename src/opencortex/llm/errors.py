"""Errors of the model gateway.

    OpenCortexError
     ├── GatewayError          no provider could answer (``.failures`` says why, per provider)
     │    ├── ProviderError    one provider failed (HTTP error, bad protocol, timeout, refused)
     │    ├── NeedsKeyError    a provider needs an API key that is not set
     │    └── RateLimitedError a provider kept answering 429
     └── BadModelOutput        the model answered, but not with what was asked for

``GatewayError`` is what a caller catches to fall back to its offline reasoner;
``BadModelOutput`` is what it catches to retry with the error fed back (see ``feedback``).
Messages name the provider and what to do; they never contain an API key.
"""

from __future__ import annotations

from ..errors import OpenCortexError

__all__ = [
    "BadModelOutput",
    "GatewayError",
    "NeedsKeyError",
    "ProviderError",
    "RateLimitedError",
]


class GatewayError(OpenCortexError):
    """No configured provider produced an answer."""

    def __init__(self, message: str, failures: list[tuple[str, GatewayError]] | None = None) -> None:
        super().__init__(message)
        self.failures: list[tuple[str, GatewayError]] = list(failures or [])
        """``(provider name, its error)`` for every provider tried, in cascade order."""


class ProviderError(GatewayError):
    """One provider failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, provider: str, message: str, status: int | None = None,
                 retryable: bool = False) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider, self.status, self.retryable = provider, status, retryable


class NeedsKeyError(GatewayError):
    """A provider needs an API key: the message names the environment variable to set."""

    def __init__(self, provider: str, env_var: str, message: str | None = None) -> None:
        super().__init__(message or (
            f"{provider}: needs an API key: set the environment variable {env_var} "
            f"(or store it with `keyring set opencortex {env_var}`)"))
        self.provider, self.env_var = provider, env_var


class RateLimitedError(GatewayError):
    """A provider kept answering 429; ``retry_after`` is its last hint in seconds, if any."""

    def __init__(self, provider: str, message: str, retry_after: float | None = None, *,
                 prefixed: bool = True) -> None:
        super().__init__(f"{provider}: {message}" if prefixed else message)
        self.provider, self.retry_after = provider, retry_after


class BadModelOutput(OpenCortexError):
    """The answer is not valid JSON / does not match the schema / has malformed tool arguments.

    ``raw`` is the model's text as received, ``reason`` what is wrong with it.
    """

    def __init__(self, reason: str, raw: str, provider: str | None = None) -> None:
        snippet = raw if len(raw) <= 300 else raw[:300] + "…"
        where = f"{provider}: " if provider else ""
        super().__init__(f"{where}model output rejected: {reason} (raw output: {snippet!r}); "
                         "retry with the error fed back (BadModelOutput.feedback)")
        self.reason, self.raw, self.provider = reason, raw, provider

    @property
    def feedback(self) -> str:
        """A user-turn text telling the model what was wrong, for the caller's retry."""
        return (f"Your previous answer was rejected: {self.reason}. "
                "Answer again with only the corrected JSON, no other text.")
