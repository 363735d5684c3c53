"""OpenCode sessions in ``$XDG_DATA_HOME/opencode/opencode.db`` (SQLite).

The database is opened through a ``mode=ro`` URI, so reading can never write to it; each
session becomes a Record, every one carrying the database file's revision and hash.
Parts flagged ``synthetic`` were added by OpenCode, not typed, so they are "injected"."""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.parse
from pathlib import Path
from typing import Any

from ..records import (
    Origin,
    Receipt,
    Record,
    Snapshot,
    Turn,
    failed_record,
    guarded,
    head_line,
    is_entry,
    parse_time,
    shell_handle,
)

__all__ = ["EXTRACTOR", "SOURCE", "connect_ro", "default_roots", "discover", "read"]

SOURCE = "opencode"
EXTRACTOR = "opencortex.recall.opencode@1"
DB_NAME = "opencode.db"


def default_roots() -> list[Path]:
    env = os.environ.get("XDG_DATA_HOME")
    base = Path(env).expanduser() if env else Path.home() / ".local" / "share"
    return [base / "opencode"]


def discover(roots: list[Path] | None = None) -> list[Path]:
    """``opencode.db`` in each root (a root may also name the database file)."""
    found = []
    for root in roots if roots is not None else default_roots():
        root = Path(root)
        db = root if is_entry(root) else root / DB_NAME
        if is_entry(db):
            found.append(db)
    return found


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection: SQLite refuses every write on a ``mode=ro`` URI."""
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _root_of(path: Path) -> str:
    return str(path.parent)


def _json(value: Any) -> dict[str, Any] | None:
    try:
        obj = json.loads(value) if isinstance(value, str | bytes) else None
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _part_text(part: dict[str, Any]) -> tuple[str, str]:
    """(kind, text): kind is text|tool|reasoning|other."""
    kind = part.get("type")
    if kind == "text":
        return "text", str(part.get("text") or "")
    if kind == "reasoning":
        return "reasoning", str(part.get("text") or "")
    if kind == "tool":
        state = v if isinstance(v := part.get("state"), dict) else {}
        args = json.dumps(state.get("input"), ensure_ascii=False, sort_keys=True)
        out = state.get("output") or state.get("error") or ""
        return "tool", f"{part.get('tool', '?')}: {args}" + (f"\n{out}" if out else "")
    return "other", ""


def _session_record(conn: sqlite3.Connection, snap: Snapshot, row: sqlite3.Row,
                    cols: set[str]) -> Record:
    path = snap.path
    sid = str(row["id"])
    loc = f"{path}?session={sid}"
    skipped = omitted = 0
    turns: list[Turn] = []
    msgs = conn.execute("SELECT id, time_created, data FROM message WHERE session_id = ? "
                        "ORDER BY time_created, id", (sid,)).fetchall()
    for m in msgs:
        data = _json(m["data"])
        if data is None:
            skipped += 1
            continue
        role = data.get("role")
        ts = parse_time(m["time_created"])
        for p in conn.execute("SELECT id, data FROM part WHERE message_id = ? ORDER BY id",
                              (m["id"],)):
            part = _json(p["data"])
            if part is None:
                skipped += 1
                continue
            kind, text = _part_text(part)
            if kind == "reasoning":
                omitted += len(text)
                continue
            if not text.strip():
                continue
            origin: Origin
            if kind == "tool":
                origin = "tool"
            elif part.get("synthetic"):
                origin = "injected"
            elif role == "user":
                origin = "person"
            elif role == "assistant":
                origin = "assistant"
            else:
                origin = "unknown"
            turns.append(Turn(len(turns), origin, text, ts, f"{loc}&part={p['id']}"))
    cwd = row["directory"] if "directory" in cols else None
    title = row["title"] if "title" in cols and row["title"] else None
    first_person = next((t for t in turns if t.origin == "person"), None)
    receipt = Receipt(source=SOURCE, root=_root_of(path), session_id=sid, locator=loc,
                      revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                      state="succeeded" if turns else ("empty" if not skipped
                                                       else "validation_failed"),
                      skipped_lines=skipped, unverified_person_turns=None,
                      omitted_chars=omitted)
    return Record(source=SOURCE, session_id=sid, root=_root_of(path), locator=loc,
                  title=title or (head_line(first_person.text) if first_person else None),
                  cwd=cwd, branch=None,
                  started=parse_time(row["time_created"]) if "time_created" in cols else None,
                  ended=parse_time(row["time_updated"]) if "time_updated" in cols else None,
                  turns=turns, handle=shell_handle(["opencode", "-s", sid], cwd),
                  receipt=receipt,
                  parent_id=(row["parent_id"] if "parent_id" in cols and row["parent_id"]
                             else None))


def _parse(snap: Snapshot) -> list[Record]:
    path = snap.path
    try:
        if path.exists():
            conn = connect_ro(path)
        else:  # an archived copy of a database that is gone: open its bytes in memory
            conn = sqlite3.connect(":memory:")
            conn.deserialize(snap.data)
            conn.row_factory = sqlite3.Row
    except sqlite3.Error as e:
        return [failed_record(SOURCE, EXTRACTOR, path, _root_of(path), "input_failed",
                              str(e), snap)]
    try:
        cur = conn.execute("SELECT * FROM session ORDER BY time_created, id")
        cols = {d[0] for d in cur.description}
        rows = cur.fetchall()
        return [_session_record(conn, snap, row, cols) for row in rows]
    except sqlite3.Error as e:  # not a database, or not OpenCode's schema
        return [failed_record(SOURCE, EXTRACTOR, path, _root_of(path), "validation_failed",
                              str(e), snap)]
    finally:
        conn.close()


read = guarded(SOURCE, EXTRACTOR, _root_of, _parse)
