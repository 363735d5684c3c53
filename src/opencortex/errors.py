"""One exception tree for OpenCortex.

    OpenCortexError
     ├── ConfigError          bad config file / value
     ├── OrgParseError        a file could not be read at all
     ├── IndexStoreError      the index database is unusable
     ├── NodeNotFoundError    a node reference matched nothing (or too much)
     └── WriteError           a write to the memex was refused or failed
          ├── ConflictError   the file changed on disk since it was read
          └── VerifyError     the edited text does not parse as intended

Every message says what to do about it.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ConflictError",
    "IndexStoreError",
    "NodeNotFoundError",
    "OpenCortexError",
    "OrgParseError",
    "VerifyError",
    "WriteError",
]


class OpenCortexError(Exception):
    """Base of every error OpenCortex raises on purpose."""


class ConfigError(OpenCortexError):
    pass


class OrgParseError(OpenCortexError):
    pass


class IndexStoreError(OpenCortexError):
    pass


class NodeNotFoundError(OpenCortexError):
    pass


class WriteError(OpenCortexError):
    pass


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
    pass
