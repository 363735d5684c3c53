"""The terminal chat gateway (``opencortex chat``): raw messages in, replies out."""

from __future__ import annotations

from .app import ChatApp
from .backend import LocalBackend, RemoteBackend

__all__ = ["ChatApp", "LocalBackend", "RemoteBackend"]
