"""OpenCortex's own conversations: ``<sessions folder>/YYYY/MM/DD-<id>.org`` as written by
``SessionRecorder`` (the folder is ``Settings.sessions_path``; a root given as a memex also
finds the old ``<memex>/sessions/`` layout) — one headline per turn with its origin and an
inactive timestamp, the text in an example block with Org comma-escaping and defused
agenda words, both undone here. Times are local (naive)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from ..records import Origin, Receipt, Record, Snapshot, Turn, guarded, head_line, is_entry

__all__ = ["EXTRACTOR", "SOURCE", "default_roots", "discover", "read", "unescape_block"]

SOURCE = "opencortex"
EXTRACTOR = "opencortex.recall.opencortex_sessions@1"
_HEAD = re.compile(r"^\* \[(\d{4}-\d{2}-\d{2})(?: [^\]\d]+)?(?: (\d{1,2}):(\d{2}))?\] "
                   r"([A-Za-z_-]+): ?(.*)$")
_PROP = re.compile(r"^:([^:\s]+):\s?(.*)$")
_KEYWORD = re.compile(r"^#\+(TITLE|PROPERTY):\s*(.*)$", re.I)
# "external" (text from outside the conversation) is neither the person nor the assistant
_ORIGIN: dict[str, Origin] = {"person": "person", "assistant": "assistant", "tool": "tool",
                              "injected": "injected", "external": "injected"}


def unescape_block(text: str) -> str:
    """Undo ``escape_block`` (the neutraliser's one definition)."""
    from ...write.neutralise import restore_agenda, unescape_block_content
    return restore_agenda(unescape_block_content(text))


def default_roots() -> list[Path]:
    from ...config import load_settings

    try:
        s = load_settings()
    except Exception:  # a broken config must not stop recall from listing anything else
        return [Path("~/memex").expanduser()]
    old = s.memex / "sessions"  # records of the old layout, until they are migrated
    return [s.sessions_path, *([old] if old.is_dir() else [])]



def discover(roots: list[Path] | None = None) -> list[Path]:
    """Session files under each root's ``YYYY/MM/`` (a sessions folder, ``DD-<id>.org``),
    or under its ``sessions/YYYY/MM/`` (a memex given as the root, holding records of the
    old layout)."""
    from ...config import LEGACY_GLOB, RECORD_GLOB

    found: list[Path] = []
    for root in roots if roots is not None else default_roots():
        for glob in (RECORD_GLOB, LEGACY_GLOB):
            if Path(root).is_dir():
                found.extend(sorted(p for p in Path(root).glob(glob) if is_entry(p)))
    return list(dict.fromkeys(found))


def _root_of(path: Path) -> str:
    return str(path.parents[2]) if len(path.parents) > 2 else str(path.parent)


def _parse(snap: Snapshot) -> list[Record]:
    path = snap.path
    skipped = 0
    lines: list[str | None] = []
    for raw in snap.data.split(b"\n"):
        try:
            lines.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError:
            lines.append(None)
            skipped += 1
    title = session = None
    turns: list[Turn] = []
    first_head: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line is None:
            i += 1
            continue
        kw = _KEYWORD.match(line)
        if kw and not turns and first_head is None:
            key, value = kw.group(1).upper(), kw.group(2).strip()
            if key == "TITLE":
                title = value
            elif value.upper().startswith("SESSION "):
                session = value[8:].strip()
            i += 1
            continue
        m = _HEAD.match(line)
        if not m:
            i += 1
            continue
        start = i + 1
        first_head = first_head or start
        date, hour, minute, origin_name = m.group(1), m.group(2), m.group(3), m.group(4)
        try:
            ts = dt.datetime.fromisoformat(date)
            if hour is not None:
                ts = ts.replace(hour=int(hour), minute=int(minute))
        except ValueError:
            ts = None
        props: dict[str, str] = {}
        body: list[str] = []
        i += 1
        in_props = in_block = False
        closed = False
        while i < len(lines):
            cur = lines[i]
            if cur is None:
                i += 1
                continue
            if in_block:
                if cur.strip().lower() == "#+end_example":
                    in_block, closed = False, True
                else:
                    body.append(cur)
            elif cur.startswith("* "):
                break
            elif cur.strip() == ":PROPERTIES:":
                in_props = True
            elif in_props:
                if cur.strip() == ":END:":
                    in_props = False
                elif pm := _PROP.match(cur.strip()):
                    props[pm.group(1).upper()] = pm.group(2)
            elif cur.strip().lower() == "#+begin_example":
                in_block = True
            i += 1
        if not closed and not body:
            body = [m.group(5)]  # no block (hand-edited or truncated): the headline says it
        origin = _ORIGIN.get(props.get("ORIGIN", origin_name).lower(), "unknown")
        text = unescape_block("\n".join(body))
        turns.append(Turn(len(turns), origin, text, ts, f"{path}:{start}-{i}"))

    sid = session or path.stem.split("-", 1)[-1]
    root = _root_of(path)
    loc = f"{path}:1-{len(lines)}"
    times = [t.timestamp for t in turns if t.timestamp]
    if title and title.startswith("Session ") and session and title[8:] == session:
        first_person = next((t for t in turns if t.origin == "person"), None)
        title = (head_line(first_person.text) if first_person else None) or title
    receipt = Receipt(source=SOURCE, root=root, session_id=sid, locator=loc,
                      revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                      state="succeeded" if turns else "empty", skipped_lines=skipped,
                      unverified_person_turns=None, omitted_chars=0)
    return [Record(source=SOURCE, session_id=sid, root=root, locator=loc, title=title,
                   cwd=None, branch=None, started=min(times) if times else None,
                   ended=max(times) if times else None, turns=turns,
                   handle=f"{path}:{first_head or 1}", receipt=receipt)]


read = guarded(SOURCE, EXTRACTOR, _root_of, _parse)
