"""Exceptions raised by the guard; all are OpenCortexError so callers can catch one base."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import OpenCortexError, WriteError

if TYPE_CHECKING:
    from .action import Decision

__all__ = ["ApprovalError", "GuardDenied", "GuardError", "ShellError", "UnsafePathError"]


class GuardError(OpenCortexError):
    """Base of every guard refusal or failure."""


class GuardDenied(GuardError):
    """An actuator was asked to run something the guard does not allow (carries the Decision)."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(decision.reason)


class UnsafePathError(GuardError, WriteError):
    """A path would leave the memex (or is not a writable Org file); nothing was touched.

    Also a WriteError so code that already handles refused memex writes handles this too.
    """


class ShellError(GuardError):
    """A shell command was refused or could not be started."""


class ApprovalError(GuardError):
    """An approval id is unknown or was already resolved."""
