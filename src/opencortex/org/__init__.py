"""Org-mode parsing for OpenCortex, faithful to Emacs's org-element (Org 9.5.5)."""

from .model import Heading, Link, OrgDocument, Timestamp
from .parser import parse, parse_bytes, parse_file
from .timestamps import format_timestamp, parse_timestamp

__all__ = [
    "Heading",
    "Link",
    "OrgDocument",
    "Timestamp",
    "format_timestamp",
    "parse",
    "parse_bytes",
    "parse_file",
    "parse_timestamp",
]
