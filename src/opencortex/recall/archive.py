"""The transcript archive: a content-addressed, zstandard-compressed copy of every transcript
file recall can read, so a session survives its tool's cleanup (Claude Code deletes
transcripts after ``cleanupPeriodDays``).

Read-only at the source: a file is opened ``O_RDONLY|O_NOFOLLOW`` (and ``O_NOATIME`` where
allowed), only regular files are taken, nothing there is moved or touched. Objects live at
``objects/<sha[:2]>/<sha256>.zst`` (one per distinct content: a file copied twice, or
unchanged, costs nothing), written to a temporary name, verified and renamed, and flushed
to disk before the manifest line that names it. The manifest
is append-only JSON lines: ``put`` (source, root, path, mtime, size, sha256), ``gone`` (the
original was first seen missing) and ``prune`` (retention dropped it). Recall reads the
archived copy when the original is gone and its receipt says so."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .records import Record, Revision, Snapshot

if TYPE_CHECKING:
    import logging

    from ..memex import Memex

__all__ = ["Archive", "ArchiveSummary", "ArchiveUpkeep", "Entry", "transcript_roots"]

MANIFEST = "manifest.jsonl"
LEVEL = 3  # zstd level: transcripts are JSON, level 3 already shrinks them ~8x


@dataclass
class Entry:
    """The latest archived version of one original file."""

    source: str
    root: str
    path: str
    mtime_ns: int
    size: int
    sha256: str
    archived: str
    stored: int
    gone: str | None = None
    pruned: str | None = None
    versions: list[str] = field(default_factory=list)  # sha256 of every put, oldest first

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["mtime"] = _iso(self.mtime_ns / 1e9)
        return d


@dataclass
class ArchiveSummary:
    files_seen: int = 0
    archived: int = 0
    """New or changed files whose content was not yet stored (a new object)."""
    deduped: int = 0
    """New or changed files whose content the archive already held (no bytes written)."""
    unchanged: int = 0
    not_regular: int = 0
    deferred: int = 0
    """Left for the next pass (a pass's ``limit``)."""
    gone: int = 0
    """Originals first noticed missing in this pass."""
    pruned: int = 0
    kept_only_copy: int = 0
    """Past retention but kept: the original is gone, so the archive holds the only copy."""
    bytes_read: int = 0
    bytes_written: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _iso(t: float | None = None) -> str:
    return dt.datetime.fromtimestamp(time.time() if t is None else t, dt.UTC).isoformat(
        timespec="seconds")


def _zstd() -> Any:
    import zstandard  # lazily: only archiving and archived reads need it

    return zstandard


def _read_ro(path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file, opened read-only without following a symlink and, where
    the kernel allows it, without updating its access time. Raises OSError."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    noatime = getattr(os, "O_NOATIME", 0)
    try:
        fd = os.open(path, flags | noatime)
    except PermissionError:  # O_NOATIME needs ownership of the file
        fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks), st
    finally:
        os.close(fd)


class Archive:
    """One archive directory (``Settings.archive_path``)."""

    _cache: ClassVar[dict[str, tuple[tuple[int, int], Archive]]] = {}
    _cache_lock = threading.Lock()

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.manifest = self.root / MANIFEST
        self._entries: dict[str, Entry] | None = None
        self._unsynced = False
        self.bad_lines = 0

    @classmethod
    def open(cls, root: Path) -> Archive:
        """The archive at ``root``, its manifest read once while it does not change (recall
        opens many members per pass)."""
        m = Path(root) / MANIFEST
        try:
            st = m.stat()
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            key = (0, 0)
        with cls._cache_lock:
            hit = cls._cache.get(str(root))
            if hit and hit[0] == key:
                return hit[1]
            a = cls(Path(root))
            a.entries()
            cls._cache[str(root)] = (key, a)
            return a

    @classmethod
    def for_settings(cls, settings: Any) -> Archive:
        return cls.open(settings.archive_path)

    # -- the manifest ----------------------------------------------------------------------
    def entries(self) -> dict[str, Entry]:
        """path -> the latest state of that original (a replay of the manifest)."""
        if self._entries is not None:
            return self._entries
        out: dict[str, Entry] = {}
        self.bad_lines = 0
        try:
            with open(self.manifest, "rb") as f:
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            lines = []
        for raw in lines:
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
                self._apply(out, d)
            except (ValueError, KeyError, TypeError):
                self.bad_lines += 1  # a torn last line after a crash: counted, skipped
        self._entries = out
        return out

    @staticmethod
    def _apply(out: dict[str, Entry], d: dict[str, Any]) -> None:
        op, path = d["op"], d["path"]
        if op == "put":
            old = out.get(path)
            versions = [*(old.versions if old else []), d["sha256"]]
            out[path] = Entry(d["source"], d["root"], path, int(d["mtime_ns"]), int(d["size"]),
                              d["sha256"], d["at"], int(d["stored"]), versions=versions)
        elif op == "gone" and path in out:
            out[path].gone = d["at"]
        elif op == "prune" and path in out:
            out[path].pruned = d["at"]

    def _append(self, lines: list[dict[str, Any]]) -> None:
        if not lines:
            return
        if self._unsynced:  # objects reach the disk before the lines naming them: one
            os.sync()       # flush per batch of up to 500 (an fsync per object cost 5 ms each)
            self._unsynced = False
        self.root.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in lines)
        with open(self.manifest, "a", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        entries = self.entries()
        for d in lines:
            self._apply(entries, d)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time (the daemon's heartbeat and a CLI run may overlap)."""
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                self._entries = None  # another process may have appended: read afresh
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # -- objects ---------------------------------------------------------------------------
    def object_path(self, sha: str) -> Path:
        return self.root / "objects" / sha[:2] / f"{sha}.zst"

    def _store(self, data: bytes, sha: str) -> int:
        """Write one object (temp name, verified by decompressing, then renamed)."""
        z = _zstd()
        blob = z.ZstdCompressor(level=LEVEL, write_content_size=True).compress(data)
        if hashlib.sha256(z.ZstdDecompressor().decompress(blob)).hexdigest() != sha:
            raise OSError("compressed copy does not decompress to the original")
        dest = self.object_path(sha)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{sha}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, dest)
        self._unsynced = True
        return len(blob)

    def data(self, sha: str) -> bytes:
        """The original bytes of an object, checked against their hash. Raises OSError."""
        blob = self.object_path(sha).read_bytes()
        try:
            data = _zstd().ZstdDecompressor().decompress(blob)
        except Exception as e:  # zstandard.ZstdError: a damaged object
            raise OSError(f"archived object {sha} is damaged: {e}") from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise OSError(f"archived object {sha} does not match its hash")
        return data

    # -- a pass ----------------------------------------------------------------------------
    def run(self, roots: Sequence[Any], *, limit: int | None = None,
            retention_days: float = 0.0, now: float | None = None,
            progress: Callable[[int, int], None] | None = None) -> ArchiveSummary:
        """Archive every new or changed transcript file of ``roots`` (recall ``Root``s of
        transcript kinds); note originals that are gone; prune by ``retention_days``."""
        from .sources import SOURCES

        t0 = time.perf_counter()
        s = ArchiveSummary()
        with self._locked():
            entries = self.entries()
            for root in roots:
                source = SOURCES.get(root.kind)
                if source is None:
                    continue
                lines: list[dict[str, Any]] = []
                seen: set[str] = set()
                found = source.discover([Path(root.path)])
                s.files_seen += len(found)
                for n, p in enumerate(found, 1):
                    key = os.path.abspath(p)
                    seen.add(key)
                    line = self._one(root, key, entries.get(key), s, limit)
                    if line is not None:
                        lines.append(line)
                    if len(lines) >= 500:  # bounded memory, and progress survives a crash
                        self._append(lines)
                        lines = []
                    if progress and n % 200 == 0:
                        progress(n, len(found))
                at = _iso(now)
                for path, e in entries.items():
                    if e.source == root.kind and e.root == root.path and path not in seen \
                            and e.gone is None and not os.path.lexists(path):
                        lines.append({"op": "gone", "path": path, "at": at})
                        s.gone += 1
                self._append(lines)
            if retention_days > 0:
                s.pruned, s.kept_only_copy = self._prune(retention_days, now)
        s.seconds = time.perf_counter() - t0
        return s

    def _one(self, root: Any, key: str, e: Entry | None, s: ArchiveSummary,
             limit: int | None) -> dict[str, Any] | None:
        try:
            st = os.lstat(key)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            s.not_regular += 1
            return None
        if e is not None and e.gone is None and (e.mtime_ns, e.size) == (st.st_mtime_ns,
                                                                           st.st_size):
            s.unchanged += 1
            return None
        if limit is not None and s.archived + s.deduped >= limit:
            s.deferred += 1
            return None
        try:
            data, fst = _read_ro(key)
        except OSError as err:
            s.failed.append(f"{key}: {err}")
            return None
        sha = hashlib.sha256(data).hexdigest()
        s.bytes_read += len(data)
        obj = self.object_path(sha)
        if obj.is_file():
            stored = obj.stat().st_size
            s.deduped += 1
        else:
            try:
                stored = self._store(data, sha)
            except OSError as err:
                s.failed.append(f"{key}: could not store: {err}")
                return None
            s.bytes_written += stored
            s.archived += 1
        # the size is of the bytes we hashed: a file still growing is read again next pass
        return {"op": "put", "source": root.kind, "root": root.path, "path": key,
                "mtime_ns": fst.st_mtime_ns, "size": len(data), "sha256": sha,
                "stored": stored, "at": _iso()}

    def _prune(self, days: float, now: float | None) -> tuple[int, int]:
        """Drop originals whose last change is older than ``days`` (and every object no
        remaining version refers to) — but never one whose original is gone: retention
        limits what the archive duplicates, it must not delete the only copy of a session.
        Returns (pruned, kept because only the archive has them)."""
        cutoff = (time.time() if now is None else now) - days * 86400
        entries = self.entries()
        at = _iso(now)
        old = {p for p, e in entries.items() if e.pruned is None and e.mtime_ns / 1e9 < cutoff}
        only_copy = {p for p in old if entries[p].gone is not None or not os.path.lexists(p)}
        drop = old - only_copy
        self._append([{"op": "prune", "path": p, "at": at} for p in sorted(drop)])
        live = {v for p, e in entries.items() if e.pruned is None and p not in drop
                for v in e.versions}
        dead = {v for p, e in entries.items() if e.pruned is not None or p in drop
                for v in e.versions}
        for sha in dead - live:
            with contextlib.suppress(FileNotFoundError):
                self.object_path(sha).unlink()
        return len(drop), len(only_copy)

    # -- reading ---------------------------------------------------------------------------
    def missing(self, kind: str, root: str, seen: set[str]) -> dict[str, Entry]:
        """Archived originals of (kind, root) that discovery did not find and that are not
        on disk: the records recall must read from the archive."""
        return {p: e for p, e in self.entries().items()
                if e.source == kind and e.root == root and e.pruned is None
                and p not in seen and not os.path.lexists(p)}

    def original_bytes(self, path: str) -> bytes | None:
        """The archived bytes of the original ``path`` (its latest version), None when the
        archive does not hold it (or pruned it).  Raises OSError for a damaged object."""
        e = self.entries().get(os.path.abspath(path))
        return None if e is None or e.pruned is not None else self.data(e.sha256)

    def read_records(self, kind: str, path: str) -> list[Record] | None:
        """The records of the archived copy of ``path``, parsed by its source's reader as if
        read from the original path (locators and handles name the original), each receipt
        saying it is an archived copy; None when the archive does not hold it."""
        from .sources import SOURCES

        e = self.entries().get(os.path.abspath(path))
        source = SOURCES.get(kind)
        if e is None or e.pruned is not None or source is None:
            return None
        data = self.data(e.sha256)
        snap = Snapshot(Path(e.path), data, Revision(e.mtime_ns / 1e9, e.size), e.sha256)
        when = (e.gone or _iso())[:10]
        note = (f"archived copy of {e.path} (archived {e.archived[:10]}, "
                f"{self.object_path(e.sha256)}) — the original was deleted on or before {when}")
        out = []
        for rec in source.from_snapshot(snap):
            rec.receipt = dataclasses.replace(rec.receipt, archived=note)
            out.append(rec)
        return out

    def status(self) -> dict[str, Any]:
        """Counts, bytes, the oldest record and the sources whose originals are gone."""
        entries = self.entries()
        live = [e for e in entries.values() if e.pruned is None]
        objects: dict[str, tuple[int, int]] = {}
        for e in live:
            objects[e.sha256] = (e.size, e.stored)
        versions = sum(len(e.versions) for e in live)
        oldest = min(live, key=lambda e: e.mtime_ns, default=None)
        gone: dict[tuple[str, str], int] = {}
        by_source: dict[str, int] = {}
        for e in live:
            by_source[e.source] = by_source.get(e.source, 0) + 1
            if e.gone is not None:
                gone[(e.source, e.root)] = gone.get((e.source, e.root), 0) + 1
        on_disk = 0
        objdir = self.root / "objects"
        if objdir.is_dir():
            for dirpath, _dirs, files in os.walk(objdir):
                on_disk += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files
                               if f.endswith(".zst"))
        return {"dir": str(self.root), "files": len(live), "versions": versions,
                "objects": len(objects), "by_source": by_source,
                "bytes": {"original": sum(a for a, _ in objects.values()),
                          "stored": sum(b for _, b in objects.values()),
                          "on_disk": on_disk},
                "oldest": None if oldest is None else {
                    "path": oldest.path, "source": oldest.source,
                    "mtime": _iso(oldest.mtime_ns / 1e9)},
                "gone": [{"source": k, "root": r, "files": n}
                         for (k, r), n in sorted(gone.items())],
                "pruned": sum(1 for e in entries.values() if e.pruned is not None),
                "bad_lines": self.bad_lines}


def transcript_roots(recall: Any) -> list[Any]:
    """The transcript roots (not git, not notes) a recall engine reads: what to archive."""
    from .sources import SOURCES

    return [r for r in recall.base_roots if r.kind in SOURCES]


class ArchiveUpkeep:
    """The daemon's share: an archive pass at most every ``archive_interval`` seconds, in
    the background (a first pass over years of transcripts must not stall a heartbeat)."""

    def __init__(self, memex: Memex) -> None:
        self.memex = memex
        self.last: float | None = None
        self.running = threading.Event()
        self.done = threading.Event()
        self.summary: ArchiveSummary | None = None

    def maybe_run(self, submit: Callable[..., Any], log: logging.Logger) -> bool:
        s = self.memex.settings
        now = time.monotonic()
        if not s.archive_enabled or self.running.is_set() or (
                self.last is not None and now - self.last < s.archive_interval):
            return False
        self.last = now
        self.running.set()
        self.done.clear()
        try:
            submit(self._pass, log)
        except RuntimeError:  # the pool is shutting down
            self.running.clear()
            return False
        return True

    def _pass(self, log: logging.Logger) -> None:
        from .engine import Recall

        try:
            s = self.memex.settings
            roots = transcript_roots(Recall(self.memex, gateway=False))
            self.summary = Archive.for_settings(s).run(
                roots, retention_days=s.archive_retention_days)
            if self.summary.archived or self.summary.deduped or self.summary.gone:
                log.info("archive: %d new, %d deduplicated, %d originals gone",
                         self.summary.archived, self.summary.deduped, self.summary.gone)
            for f in self.summary.failed[:5]:
                log.warning("archive: %s", f)
        except Exception as e:  # never let upkeep take the daemon down
            log.warning("archive: pass failed: %s: %s", type(e).__name__, e)
        finally:
            self.running.clear()
            self.done.set()
