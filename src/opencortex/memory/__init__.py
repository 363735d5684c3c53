"""The index: a disposable, incrementally synced SQLite mirror of the memex."""

from __future__ import annotations

from .incremental import SyncSummary, sync
from .nodes import Node, NodeLink
from .store import SqliteStore, open_store

__all__ = ["Node", "NodeLink", "SqliteStore", "SyncSummary", "open_store", "sync"]
