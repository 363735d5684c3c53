"""One exception tree for OpenCortex: every error it raises on purpose is defined here.

    OpenCortexError                 500  base; ``status`` is the HTTP status it maps to
     ├── ConfigError                500  bad config file / value (the message names it)
     ├── OrgParseError              422  a file could not be read at all
     ├── NotRegularError            400  a FIFO, socket, device or directory (also OSError)
     ├── IndexStoreError            503  the index database is unusable
     ├── NodeNotFoundError          404  a node reference matched nothing (or too much)
     ├── QuerySyntaxError           400  a structured query does not parse
     ├── ValidationError            422  client input that does not fit the schema
     │    └── InvalidOrgConstruct   422  a tag, keyword, property or title that is not one
     ├── SessionIdError             422  a session id that is not one (also ValueError)
     ├── SignalError                422  a raw message that cannot become a Signal
     ├── ScanError                  400  a literal scan that cannot run (no ripgrep, bad regex)
     ├── EmbeddingError             503  an embedder could not be built or could not embed
     ├── RecallError                400  a recall request that cannot run (also ValueError)
     │    ├── UnknownRecallSession  404  no recall session with that id
     │    └── OutsideBoundary       403  a client named a root the person did not configure
     ├── GitError                   500  git could not run or refused (also RuntimeError)
     ├── WebError                   502  a web fetch was refused or failed
     ├── ServerError                500  the daemon cannot start as asked
     ├── BackendError               502  the chat TUI's backend could not carry out a request
     ├── TelegramError              502  a Telegram Bot API call failed for good
     ├── AccessDenied               403  the guard refused a client's effect
     │    └── NeedsApproval         403  the policy says "ask" and this client cannot ask
     ├── WriteError                 409  a write to the memex was refused or failed
     │    ├── ConflictError         409  the file changed on disk since it was read
     │    ├── VerifyError           422  the edited text does not parse as intended
     │    ├── InvalidOrgConstruct
     │    └── UnsafePathError       403  the path leaves the memex (also a GuardError)
     ├── GuardError                 403  a guard refusal or failure
     │    ├── GuardDenied           403  an action the policy does not allow (``.decision``)
     │    ├── ShellError            403  a shell command refused or not startable
     │    ├── ApprovalError         409  an approval already resolved
     │    │    └── UnknownApproval  404  no approval with that id
     │    └── UnsafePathError
     ├── GatewayError               502  no model provider could answer (``.failures``)
     │    ├── ProviderError         502  one provider failed (``.upstream_status``)
     │    ├── NeedsKeyError         503  a provider needs an API key that is not set
     │    └── RateLimitedError      429  a provider kept answering 429
     ├── BadModelOutput             502  the model answered, but not with what was asked for
     └── AnswerLimit                502  a model's answer passed the byte cap or the time limit

Every message says what to do about it.  Gateways turn an error into one JSON body,
:func:`error_body` (``--json`` on the CLI and every HTTP error): ``ok``, ``error``,
``type``, ``status``.  ``tests/test_errors.py`` checks this drawing against the classes.
"""

from __future__ import annotations

from typing import Any

__all__ = [
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
    "NeedsApproval",
    "NeedsKeyError",
    "NodeNotFoundError",
    "NotRegularError",
    "OpenCortexError",
    "OrgParseError",
    "OutsideBoundary",
    "ProviderError",
    "QuerySyntaxError",
    "RateLimitedError",
    "RecallError",
    "ScanError",
    "ServerError",
    "SessionIdError",
    "ShellError",
    "SignalError",
    "TelegramError",
    "UnknownApproval",
    "UnknownRecallSession",
    "UnsafePathError",
    "ValidationError",
    "VerifyError",
    "WebError",
    "WriteError",
    "error_body",
]


class OpenCortexError(Exception):
    """Base of every error OpenCortex raises on purpose.  ``status`` is the HTTP status a
    gateway answers with (a class default; ``status=`` overrides it for one instance)."""

    status: int = 500

    def __init__(self, *args: object, status: int | None = None) -> None:
        super().__init__(*args)
        if status is not None:
            self.status = status


def error_body(message: str, status: int, kind: str = "error") -> dict[str, Any]:
    """The one JSON error shape of the CLI (``--json``) and the HTTP API."""
    return {"ok": False, "error": message, "type": kind, "status": status}


def body_of(e: BaseException, status: int | None = None) -> dict[str, Any]:
    """:func:`error_body` for an exception (its own status unless ``status`` is given)."""
    st = status if status is not None else getattr(e, "status", 500)
    return error_body(str(e), st if isinstance(st, int) else 500, type(e).__name__)


class ConfigError(OpenCortexError):
    """A bad config file or value; the message names the setting to fix."""


class OrgParseError(OpenCortexError):
    status = 422


class NotRegularError(OpenCortexError, OSError):
    """The path names a FIFO, socket, device or directory: skipped, never opened for data."""

    status = 400


class IndexStoreError(OpenCortexError):
    status = 503


class NodeNotFoundError(OpenCortexError):
    status = 404


class QuerySyntaxError(OpenCortexError):
    status = 400


class ValidationError(OpenCortexError):
    """Input that does not fit the schema; the message names the field and the fix."""

    status = 422


class SessionIdError(OpenCortexError, ValueError):
    """A session id a client sent is not one (the message says what to fix)."""

    status = 422


class SignalError(OpenCortexError):
    """A raw message that cannot become a Signal (it is logged and dropped)."""

    status = 422


class ScanError(OpenCortexError):
    status = 400


class EmbeddingError(OpenCortexError):
    """An embedder could not be built or could not embed; the message says how to fix it."""

    status = 503


class RecallError(OpenCortexError, ValueError):
    """A recall request that cannot run (unknown session, bad --source)."""

    status = 400


class UnknownRecallSession(RecallError):
    """No recall session with that id (never started, or its state file is gone)."""

    status = 404


class OutsideBoundary(RecallError):
    """A client (or a cue) named a recall root the person did not configure."""

    status = 403


class GitError(OpenCortexError, RuntimeError):
    """git could not run or refused (the message says which)."""


class WebError(OpenCortexError):
    """A fetch refused (SSRF, type, size) or failed; the message says which and why."""

    status = 502


class ServerError(OpenCortexError):
    """The daemon cannot start as asked (bad bind, no token)."""


class BackendError(OpenCortexError):
    """A request the chat backend could not carry out (daemon down, bad id, ...)."""

    status = 502


class TelegramError(OpenCortexError):
    """A Bot API call failed for good (after retries, or a non-retryable answer);
    ``upstream_status`` is the Bot API's HTTP status when there was one."""

    status = 502

    def __init__(self, message: str, upstream_status: int | None = None) -> None:
        super().__init__(message)
        self.upstream_status = upstream_status


class AccessDenied(OpenCortexError):
    """The guard refused an effect (policy deny, a path outside the memex)."""

    status = 403


class NeedsApproval(AccessDenied):
    """The policy says "ask" and this client cannot ask the person: nothing was written."""


class WriteError(OpenCortexError):
    status = 409


class ConflictError(WriteError):
    """The file changed on disk after OpenCortex read it; nothing was written."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        msg = (
            f"{path} changed on disk since it was read; nothing was written. "
            "Save or reload the file (e.g. revert the Emacs buffer) and run the command again."
        )
        super().__init__(msg + (f" ({detail})" if detail else ""))


class VerifyError(WriteError):
    status = 422


class InvalidOrgConstruct(ValidationError, WriteError):
    """A tag, keyword, priority, property or title a client gave is not that one Org
    construct (org/constructs.py); nothing was written."""

    status = 422


class GuardError(OpenCortexError):
    """Base of every guard refusal or failure."""

    status = 403


class GuardDenied(GuardError):
    """An actuator was asked to run something the guard does not allow (carries the Decision)."""

    def __init__(self, decision: Any) -> None:  # a guard.action.Decision (errors import nothing)
        self.decision = decision
        super().__init__(decision.reason)


class UnsafePathError(GuardError, WriteError):
    """A path would leave the memex (or is not a writable Org file); nothing was touched.

    Also a WriteError so code that already handles refused memex writes handles this too.
    """

    status = 403


class ShellError(GuardError):
    """A shell command was refused or could not be started."""


class ApprovalError(GuardError):
    """An approval was already resolved (nothing changed)."""

    status = 409


class UnknownApproval(ApprovalError):
    """No approval (pending or recently resolved) has that id."""

    status = 404


class GatewayError(OpenCortexError):
    """No configured provider produced an answer."""

    status = 502

    def __init__(self, message: str, failures: list[tuple[str, GatewayError]] | None = None) -> None:
        super().__init__(message)
        self.failures: list[tuple[str, GatewayError]] = list(failures or [])
        """``(provider name, its error)`` for every provider tried, in cascade order."""


class ProviderError(GatewayError):
    """One provider failed; ``upstream_status`` is its HTTP status when there was one."""

    def __init__(self, provider: str, message: str, upstream_status: int | None = None,
                 retryable: bool = False) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider, self.upstream_status, self.retryable = provider, upstream_status, \
            retryable


class NeedsKeyError(GatewayError):
    """A provider needs an API key: the message names the environment variable to set."""

    status = 503

    def __init__(self, provider: str, env_var: str, message: str | None = None) -> None:
        super().__init__(message or (
            f"{provider}: needs an API key: set the environment variable {env_var} "
            f"(or store it with `keyring set opencortex {env_var}`)"))
        self.provider, self.env_var = provider, env_var


class RateLimitedError(GatewayError):
    """A provider kept answering 429; ``retry_after`` is its last hint in seconds, if any."""

    status = 429

    def __init__(self, provider: str, message: str, retry_after: float | None = None, *,
                 prefixed: bool = True) -> None:
        super().__init__(f"{provider}: {message}" if prefixed else message)
        self.provider, self.retry_after = provider, retry_after


class BadModelOutput(OpenCortexError):
    """The answer is not valid JSON / does not match the schema / has malformed tool arguments.

    ``raw`` is the model's text as received, ``reason`` what is wrong with it.
    """

    status = 502

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


class AnswerLimit(OpenCortexError):
    """A model's answer passed the byte cap or the whole-answer time limit (llm/_http.py):
    reading stopped, and the request answers without it."""

    status = 502
