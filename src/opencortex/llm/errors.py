"""Errors of the model gateway (defined in :mod:`opencortex.errors`, the one tree).

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

from ..errors import (
    BadModelOutput,
    GatewayError,
    NeedsKeyError,
    ProviderError,
    RateLimitedError,
)

__all__ = [
    "BadModelOutput",
    "GatewayError",
    "NeedsKeyError",
    "ProviderError",
    "RateLimitedError",
]
