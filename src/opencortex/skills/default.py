"""The one recipe for the skills a memex runs with: built-ins, installed plugins (entry
points), the memex's trusted literate skills.  A :class:`opencortex.runtime.Runtime` builds
it once per process and hands it to the kernel, ``doctor``, ``skills`` and context assembly;
a bare :class:`~opencortex.pipeline.kernel.Kernel` (tests) calls it itself."""

from __future__ import annotations

from pathlib import Path

from .registry import SkillRegistry

__all__ = ["default_registry"]


def default_registry(root: Path) -> SkillRegistry:
    """Every skill for the memex at ``root``, loaded in the order built-ins, plugins,
    literate (so a plugin or a memex file cannot shadow a built-in silently)."""
    reg = SkillRegistry()
    reg.load_builtins()
    reg.load_entry_points(root)
    reg.load_literate(root / "skills")
    return reg
