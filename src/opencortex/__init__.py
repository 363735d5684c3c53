"""OpenCortex: a local-first personal AI agent that lives in your Org-mode files.

The public Python API (everything else is internal and may change)::

    from opencortex import Runtime

    with Runtime.open("~/memex") as rt:       # settings: config.toml, OPENCORTEX_*, flags
        rt.memex.sync()
        hits = rt.retriever.search("caching strategies", k=5)
        round_ = rt.access("cli").recall().start("that flaky login test fix")

Names load on first use (module ``__getattr__``), so ``import opencortex`` stays as cheap
as ``opencortex --version`` needs.
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs --version time

if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    # `python -m opencortex.…` put the working directory (often the memex) first on the
    # import path: a synced click.py or *.dist-info there would run unapproved (as -P does)
    del _sys.path[0]

__version__ = "0.1.0"

_ERRORS = (
    "AccessDenied", "AnswerLimit", "ApprovalError", "BackendError", "BadModelOutput", "ConfigError",
    "ConflictError", "EmbeddingError", "GatewayError", "GitError", "GuardDenied", "GuardError",
    "IndexStoreError", "InvalidOrgConstruct", "NeedsApproval", "NeedsKeyError", "NodeNotFoundError",
    "NotRegularError", "OpenCortexError", "OrgParseError", "OutsideBoundary", "ProviderError", "QuerySyntaxError",
    "RateLimitedError", "RecallError", "ScanError", "ServerError", "SessionIdError",
    "ShellError", "SignalError", "TelegramError", "UnknownApproval", "UnknownRecallSession",
    "UnsafePathError", "ValidationError", "VerifyError", "WebError", "WriteError",
)
_WHERE: dict[str, str] = {
    "Access": "opencortex.access",
    "Memex": "opencortex.memex",
    "Node": "opencortex.memory.nodes",
    "Recall": "opencortex.recall.engine",
    "Retriever": "opencortex.retrieval.hybrid",
    "Runtime": "opencortex.runtime",
    "SearchHit": "opencortex.retrieval.hybrid",
    "SearchResult": "opencortex.retrieval.hybrid",
    "Settings": "opencortex.config",
    "Signal": "opencortex.signal",
    "Skill": "opencortex.skills.base",
    "load_settings": "opencortex.config",
    **dict.fromkeys(_ERRORS, "opencortex.errors"),
}
"""Public name → the module that defines it."""

__all__ = [
    "Access",
    "AccessDenied",
    "AnswerLimit",
    "ApprovalError",
    "BackendError",
    "BadModelOutput",
    "ConfigError",
    "ConflictError",
    "EmbeddingError",
    "GatewayError",
    "GitError",
    "GuardDenied",
    "GuardError",
    "IndexStoreError",
    "InvalidOrgConstruct",
    "Memex",
    "NeedsApproval",
    "NeedsKeyError",
    "Node",
    "NodeNotFoundError",
    "NotRegularError",
    "OpenCortexError",
    "OrgParseError",
    "OutsideBoundary",
    "ProviderError",
    "QuerySyntaxError",
    "RateLimitedError",
    "Recall",
    "RecallError",
    "Retriever",
    "Runtime",
    "ScanError",
    "SearchHit",
    "SearchResult",
    "ServerError",
    "SessionIdError",
    "Settings",
    "ShellError",
    "Signal",
    "SignalError",
    "Skill",
    "TelegramError",
    "UnknownApproval",
    "UnknownRecallSession",
    "UnsafePathError",
    "ValidationError",
    "VerifyError",
    "WebError",
    "WriteError",
    "__version__",
    "load_settings",
]

if TYPE_CHECKING:
    from typing import Any

    from .access import Access
    from .config import Settings, load_settings
    from .errors import (
        AccessDenied,
        AnswerLimit,
        ApprovalError,
        BackendError,
        BadModelOutput,
        ConfigError,
        ConflictError,
        EmbeddingError,
        GatewayError,
        GitError,
        GuardDenied,
        GuardError,
        IndexStoreError,
        InvalidOrgConstruct,
        NeedsApproval,
        NeedsKeyError,
        NodeNotFoundError,
        NotRegularError,
        OpenCortexError,
        OrgParseError,
        OutsideBoundary,
        ProviderError,
        QuerySyntaxError,
        RateLimitedError,
        RecallError,
        ScanError,
        ServerError,
        SessionIdError,
        ShellError,
        SignalError,
        TelegramError,
        UnknownApproval,
        UnknownRecallSession,
        UnsafePathError,
        ValidationError,
        VerifyError,
        WebError,
        WriteError,
    )
    from .memex import Memex
    from .memory.nodes import Node
    from .recall.engine import Recall
    from .retrieval.hybrid import Retriever, SearchHit, SearchResult
    from .runtime import Runtime
    from .signal import Signal
    from .skills.base import Skill


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (and cache the name here)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'opencortex' has no attribute {name!r}")
    value = getattr(_importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
