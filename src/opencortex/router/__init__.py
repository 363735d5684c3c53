"""Offline intent router: decompose a request into ordered atomic intents for the agent's tools.

``decompose("find my notes on X and then run git status")`` ->
``[Intent("notes", {"query": "X"}), Intent("shell", {"command": "git status"})]``.
"""

from __future__ import annotations

from .decompose import TARGETS, Intent, decompose

__all__ = ["TARGETS", "Intent", "decompose"]
