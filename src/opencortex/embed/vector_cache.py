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
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["cached_embed", "identity"]

log = logging.getLogger("opencortex")

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
    conn.execute(_SCHEMA)
    return conn


def cached_embed(embedder: Any, texts: Sequence[str], path: Path,
                 max_rows: int = 50_000) -> np.ndarray:
    """``embedder.embed(texts)``, each row taken from the cache at ``path`` when that text
    was embedded by the same embedder before (rows identical to what the model returns)."""
    import numpy as np

    ident = identity(embedder).encode()
    keys = [hashlib.sha256(ident + b"\0" + t.encode("utf-8", "surrogatepass")).digest()
            for t in texts]
    found: dict[bytes, np.ndarray] = {}
    conn: sqlite3.Connection | None = None
    try:
        conn = _connect(path)
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = conn.execute(f"SELECT key, dim, data FROM vec WHERE key IN "
                                f"({','.join('?' * len(chunk))})", chunk).fetchall()
            for key, dim, data in rows:
                vec = np.frombuffer(data, dtype=np.float32)
                if vec.shape == (dim,):
                    found[key] = vec
    except (sqlite3.Error, OSError) as e:
        log.debug("vector cache %s unreadable (%s): embedding all", path, e)
    missing = [i for i, k in enumerate(keys) if k not in found]
    new = embedder.embed([texts[i] for i in missing]) if missing else None
    if new is not None and len(new):
        for j, i in enumerate(missing):
            found[keys[i]] = new[j]
    out = (np.stack([found[k] for k in keys]).astype(np.float32, copy=False) if keys
           else embedder.embed([]))
    if conn is not None:
        try:
            now = int(time.time())
            with conn:
                if new is not None:
                    conn.executemany(
                        "INSERT OR REPLACE INTO vec (key, dim, data, used) VALUES (?, ?, ?, ?)",
                        [(keys[i], int(new[j].shape[0]),
                          np.ascontiguousarray(new[j], dtype=np.float32).tobytes(), now)
                         for j, i in enumerate(missing)])
                fresh = {keys[i] for i in missing}
                hit = [k for k in keys if k not in fresh]
                if hit:
                    conn.executemany("UPDATE vec SET used = ? WHERE key = ?",
                                     [(now, k) for k in hit])
                count = conn.execute("SELECT count(*) FROM vec").fetchone()[0]
                if count > max_rows:  # the least recently used go, down to 90%
                    conn.execute("DELETE FROM vec WHERE key IN (SELECT key FROM vec ORDER BY "
                                 "used LIMIT ?)", (count - max_rows * 9 // 10,))
        except sqlite3.Error as e:
            log.debug("vector cache %s not written (%s)", path, e)
        finally:
            conn.close()
    return out
