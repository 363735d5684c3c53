"""Exceptions raised by the guard (defined in :mod:`opencortex.errors`, the one tree)."""

from __future__ import annotations

from ..errors import (
    ApprovalError,
    GuardDenied,
    GuardError,
    ShellError,
    UnknownApproval,
    UnsafePathError,
)

__all__ = ["ApprovalError", "GuardDenied", "GuardError", "ShellError", "UnknownApproval",
           "UnsafePathError"]
