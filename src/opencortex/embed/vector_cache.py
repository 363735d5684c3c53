"""Content-keyed vectors of short texts, kept on disk across processes.

Why: the extractive notes answer embeds the sentences, list items and table rows of the top
notes for every question (about 20 short texts: 0.2-0.4 s of CPU, the larger part of what a
warm ``ask`` grew by when that answer came in); related questions bring the same notes back,
and a text's vector under one model never changes. So those vectors are looked up by
SHA-256(embedder identity, text) first and only the texts not seen before go to the model.

What is kept: the key (a hash, never the text) and the float32 vector, in a small SQLite file
the caller names (the notes answer keeps one beside the memex's index, mode 0600). Rows not
used for a while go when the file holds more than ``max_rows``. Any error reading or writing
the file falls back to embedding everything: the cache can only save time.

The rows this process read or wrote are also kept in memory (at most ``MEMORY_ROWS``, per
file): a question asked again, or the router's test and the reply reading the same notes,
then opens no file and writes nothing. A row's ``used`` stamp is rewritten only when it is
older than ``TOUCH_AFTER`` seconds, so a pass whose rows were all on disk commits nothing
either (the stamp orders eviction; an hour's precision is plenty for that). The file's I/O
runs with the memex lock released (``locking.slow_work``): it touches no memex.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MEMORY_ROWS", "TOUCH_AFTER", "cached_embed", "identity"]

log = logging.getLogger("opencortex")

MEMORY_ROWS = 4096
"""Vectors kept in memory per process (about 6 MB at 384 dimensions); emptied when full."""
TOUCH_AFTER = 3600
"""Seconds before a row read again gets a new ``used`` stamp (a write)."""
_memory: dict[tuple[str, bytes], np.ndarray] = {}

_SCHEMA = ("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, dim INTEGER NOT NULL, "
           "data BLOB NOT NULL, used INTEGER NOT NULL)")


def identity(embedder: Any) -> str:
    """What makes two embedders give the same vector for a text: class, model name, where
    it runs (a server's URL) and, for the in-process model, the graph built from its weights
    (its file name holds the weights' digest)."""
    parts = (type(embedder).__name__, str(getattr(embedder, "name", "")),
             str(getattr(embedder, "base_url", "")),
             Path(str(getattr(embedder, "graph_path", ""))).name)
    return "|".join(parts)


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists()
    conn = sqlite3.connect(str(path), timeout=5.0)
    if fresh:
        os.chmod(path, 0o600)
        # several processes may share one file (the embedder's own cache): readers then
        # never wait for a writer (the WAL's files take the database file's mode)
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(_SCHEMA)
    return conn


def cached_embed(embedder: Any, texts: Sequence[str], path: Path,
                 max_rows: int = 50_000, *,
                 embed: Callable[[Sequence[str]], np.ndarray] | None = None) -> np.ndarray:
    """``embedder.embed(texts)``, each row taken from the cache at ``path`` when that text
    was embedded by the same embedder before (rows identical to what the model returns).
    ``embed``: what computes the missing rows, when not ``embedder.embed`` (an embedder
    that caches its own batches passes its uncached forward pass)."""
    import numpy as np

    run = embed or embedder.embed

    from ..locking import slow_work

    ident = identity(embedder).encode()
    keys = [hashlib.sha256(ident + b"\0" + t.encode("utf-8", "surrogatepass")).digest()
            for t in texts]
    where = str(path)
    found: dict[bytes, np.ndarray] = {}
    for k in keys:
        vec = _memory.get((where, k))
        if vec is not None:
            found[k] = vec
    todo = [k for k in dict.fromkeys(keys) if k not in found]
    stale: list[bytes] = []
    now = int(time.time())
    conn: sqlite3.Connection | None = None
    if todo:
        with slow_work():
            try:
                conn = _connect(path)
                for i in range(0, len(todo), 500):
                    chunk = todo[i:i + 500]
                    rows = conn.execute(f"SELECT key, dim, data, used FROM vec WHERE key IN "
                                        f"({','.join('?' * len(chunk))})", chunk).fetchall()
                    for key, dim, data, used in rows:
                        vec = np.frombuffer(data, dtype=np.float32)
                        if vec.shape == (dim,):
                            found[key] = vec
                            if now - int(used) >= TOUCH_AFTER:
                                stale.append(key)
            except (sqlite3.Error, OSError) as e:
                log.debug("vector cache %s unreadable (%s): embedding all", path, e)
    missing = [i for i, k in enumerate(keys) if k not in found]
    new = run([texts[i] for i in missing]) if missing else None
    if new is not None and len(new):
        for j, i in enumerate(missing):
            found[keys[i]] = new[j]
    out = (np.stack([found[k] for k in keys]).astype(np.float32, copy=False) if keys
           else run([]))
    if len(_memory) + len(todo) > MEMORY_ROWS:
        _memory.clear()
    for k in todo:
        if k in found:
            _memory[(where, k)] = found[k]
    if conn is not None:
        with slow_work():
            try:
                if new is not None or stale:
                    with conn:
                        _write(conn, keys, missing, new, stale, now, max_rows)
            except sqlite3.Error as e:
                log.debug("vector cache %s not written (%s)", path, e)
            finally:
                conn.close()
    return out


def _write(conn: sqlite3.Connection, keys: list[bytes], missing: list[int],
           new: np.ndarray | None, stale: list[bytes], now: int, max_rows: int) -> None:
    """The new rows, the read rows' fresh ``used`` stamps; then the least recently used
    rows go, down to 90%, when the file holds more than ``max_rows``."""
    import numpy as np

    if new is not None:
        conn.executemany(
            "INSERT OR REPLACE INTO vec (key, dim, data, used) VALUES (?, ?, ?, ?)",
            [(keys[i], int(new[j].shape[0]),
              np.ascontiguousarray(new[j], dtype=np.float32).tobytes(), now)
             for j, i in enumerate(missing)])
    if stale:
        conn.executemany("UPDATE vec SET used = ? WHERE key = ?", [(now, k) for k in stale])
    if new is not None:
        count = conn.execute("SELECT count(*) FROM vec").fetchone()[0]
        if count > max_rows:
            conn.execute("DELETE FROM vec WHERE key IN (SELECT key FROM vec ORDER BY "
                         "used LIMIT ?)", (count - max_rows * 9 // 10,))
