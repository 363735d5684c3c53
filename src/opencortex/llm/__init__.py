"""Model gateway: one client for every OpenAI-compatible chat-completions server.

    from opencortex.llm import Gateway, Message
    gw = Gateway.from_config(toml_data)          # [llm] table + OPENCORTEX_LLM_* override
    if gw.configured:
        answer = gw.complete([Message("user", "hi")], tier="fast")

Importing this package loads no HTTP, TLS or JSON-Schema machinery until a request is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import gateway_from_settings
from .errors import (
    BadModelOutput,
    GatewayError,
    NeedsKeyError,
    ProviderError,
    RateLimitedError,
)
from .providers import PRESETS, Provider, is_loopback, preset
from .types import Completion, Message, StreamEvent, TextDelta, ToolCall, ToolCallDelta, ToolSpec

if TYPE_CHECKING:
    from .gateway import Gateway

__all__ = [
    "PRESETS",
    "BadModelOutput",
    "Completion",
    "Gateway",
    "GatewayError",
    "Message",
    "NeedsKeyError",
    "Provider",
    "ProviderError",
    "RateLimitedError",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "gateway_from_settings",
    "is_loopback",
    "preset",
]


def __getattr__(name: str):  # lazy: the gateway pulls in http.client and ssl
    if name == "Gateway":
        from .gateway import Gateway

        return Gateway
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
