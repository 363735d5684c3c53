"""Reasoning: pick the skill, get a proposal (model or offline), verify it."""

from __future__ import annotations

from .reasoner import Decision, Reasoner

__all__ = ["Decision", "Reasoner"]
