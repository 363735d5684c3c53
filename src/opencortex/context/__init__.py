"""Context assembly ("peripheral vision"): the focus in full, the periphery at low
resolution, related notes, all within a token budget and safe for remote models."""

from .assemble import SECTION_PRIORITIES, assemble, default_skills
from .model import AssembledContext, Omission, Section

__all__ = ["SECTION_PRIORITIES", "AssembledContext", "Omission", "Section", "assemble",
           "default_skills"]
