"""Headlines addressed to the agent inside Org text: ``* TODO @agent summarise this week``
or ``@<name> …`` (the configured identity), anywhere in the tree.  A handled headline
carries an ``AGENT_HANDLED`` property, so it is never handled twice."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HANDLED", "AgentRequest", "find_requests"]

from ..memex import AGENT_HANDLED as HANDLED
from ..memory.nodes import heading_keys
from ..org.parser import parse


@dataclass(frozen=True, slots=True)
class AgentRequest:
    key: str
    """The node key of the headline (where the answer goes)."""
    file: str
    line: int
    instruction: str


def find_requests(text: str, file: str, name: str, root: Path) -> list[AgentRequest]:
    p = Path(file)
    rel = (p.resolve().relative_to(root.resolve()).as_posix() if p.is_absolute() else
           p.as_posix())
    names = ["agent"] + ([re.escape(name)] if name and name.lower() != "agent" else [])
    pat = re.compile(r"(?:^|\s)@(?:" + "|".join(names) + r")\b[:,]?\s*(.*)$", re.I)
    doc = parse(text, str(root / rel))
    keys = None
    out = []
    for h in doc.headings:
        if "@" not in h.title:
            continue
        m = pat.search(h.title)
        if not m or not m.group(1).strip() or h.get(HANDLED) is not None:
            continue
        keys = keys or heading_keys(doc, rel)
        out.append(AgentRequest(keys[h.index], rel, h.line, m.group(1).strip()))
    return out
