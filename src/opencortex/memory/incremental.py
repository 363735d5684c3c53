"""Incremental sync of the memex's .org files into the index store.

Changed files are found by (mtime, size), then confirmed by content hash; only those are
re-parsed (in worker processes when there are many).  The whole sync is one transaction,
so a reader never sees a half-synced file, and an interrupted sync changes nothing.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .nodes import FileRows, content_hash, file_rows
from .store import IndexStore

__all__ = ["MAX_FILE_BYTES", "SyncSummary", "iter_org_files", "load_file", "sync"]

MAX_FILE_BYTES = 256 * 1024 * 1024
"""Files larger than this are skipped (counted), not parsed."""
_POOL_MIN_FILES = 48

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class SyncSummary:
    files: int = 0
    nodes: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    errors: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    """One line per skipped file or per file with read errors."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Exclude = Callable[[str], bool]
"""A test on a memex-relative posix path: True for a file that is not the person's notes
(the agent's own session records, ``Settings.is_record_file``)."""


def iter_org_files(root: Path, special: list[str] | None = None,
                   exclude: Exclude | None = None) -> Iterator[tuple[str, os.stat_result]]:
    """(relative posix path, stat) of every .org file below root; hidden directories
    (.git, caches), editor lock/autosave files, symlinked directories and the files
    ``exclude`` names (the agent's own records) are skipped.
    An ``.org`` name that is a FIFO, socket or device is never yielded (opening it could
    block the sync forever): it is listed in ``special`` if given."""
    stack = [""]
    roots = str(root)
    while stack:
        rel = stack.pop()
        try:
            it = os.scandir(os.path.join(roots, rel) if rel else roots)
        except OSError:
            continue
        with it:
            for e in it:
                name = e.name
                if name.startswith((".", "#")):
                    continue
                r = f"{rel}/{name}" if rel else name
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(r)
                    elif name.endswith(".org"):
                        if exclude is not None and exclude(r):
                            continue
                        if e.is_symlink() and (why := leads_out(root, r)):
                            if special is not None:
                                special.append(why)
                            continue
                        st = e.stat()
                        if stat.S_ISREG(st.st_mode):
                            yield r, st
                        elif special is not None:
                            from ..regular import kind_of

                            special.append(f"{r}: skipped, a {kind_of(st.st_mode)} "
                                           "(only regular files are read)")
                except OSError:
                    continue


def leads_out(root: Path, rel: str) -> str | None:
    """Why ``rel`` is not read, when it resolves (through a symlink) outside the memex:
    a link that arrived by sync must not hand ``~/.ssh/...`` to clients and models."""
    from ..guard.paths import is_inside

    try:
        real = (Path(root) / rel).resolve()
        base = Path(root).resolve()
    except (OSError, RuntimeError):
        return f"{rel}: skipped, a symlink that cannot be resolved"
    if is_inside(real, base):
        return None
    return f"{rel}: skipped, a symlink leading out of the memex (to {real}); not read"


def load_file(abspath: str, relpath: str, known_hash: str | None) -> tuple[
        str, tuple[int, int, str] | None, FileRows | None, str | None]:
    """Read, hash and (if the hash is new) parse one file.  Runs in worker processes.

    Returns (relpath, state, rows or None when unchanged/skipped, problem or None).
    """
    from ..org.parser import parse_bytes
    from ..regular import read_regular

    try:
        st = os.stat(abspath)
        if st.st_size > MAX_FILE_BYTES:
            return relpath, None, None, f"{relpath}: skipped, {st.st_size} bytes > limit"
        data = read_regular(abspath, MAX_FILE_BYTES)
    except OSError as e:
        return relpath, None, None, f"{relpath}: skipped, cannot read ({e.strerror})"
    h = content_hash(data)
    state = (st.st_mtime_ns, len(data), h)
    if h == known_hash:
        return relpath, state, None, None
    try:
        doc = parse_bytes(data, path=abspath)
    except Exception as e:  # the parser must not raise; if it does, count it, go on
        return relpath, None, None, f"{relpath}: skipped, parser error {type(e).__name__}: {e}"
    return relpath, state, file_rows(doc, relpath), None


def _load_star(args: tuple[str, str, str | None]) -> tuple:
    return load_file(*args)


SLOW_SYNC_FILES = 1000
"""Files to (re)index from which a sync without a progress bar announces itself (seconds of
parsing on a small machine)."""


def sync(root: str | os.PathLike[str], store: IndexStore, progress: Progress | None = None,
         workers: int | None = None, only: list[str] | None = None,
         exclude: Exclude | None = None) -> SyncSummary:
    """Bring the index up to date with the files under ``root``.

    ``only``: relative paths to check (e.g. the file just written); others are left as is.
    ``exclude``: files that are not notes (the agent's records): never indexed, and
    dropped from the index if an older sync put them there.
    """
    t0 = time.perf_counter()
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        from ..errors import OpenCortexError

        raise OpenCortexError(
            f"memex {root} is not a directory: pass --memex DIR, set OPENCORTEX_MEMEX, "
            "or set memex = \"...\" in the config file")
    with store.sync_lock():  # PostgreSQL: one sync at a time per store
        return _sync(root, store, progress, workers, only, t0, exclude)



class _NoPoolError(Exception):
    """Never raised: what the pool's ``except`` names when no process pool was started."""

def _sync(root: Path, store: IndexStore, progress: Progress | None, workers: int | None,
          only: list[str] | None, t0: float, exclude: Exclude | None = None) -> SyncSummary:
    out = SyncSummary()
    known = store.file_states()
    special: list[str] = []
    if only is None:
        on_disk = dict(iter_org_files(root, special, exclude))
    else:
        on_disk = {}
        for rel in only:
            if exclude is not None and exclude(rel):
                continue
            if why := leads_out(root, rel):
                special.append(why)
                continue
            try:
                st = (root / rel).stat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                on_disk[rel] = st
            else:
                special.append(f"{rel}: skipped, not a regular file")
    out.skipped += len(special)
    out.problems.extend(special)
    todo: list[tuple[str, str, str | None]] = []
    for rel, st in on_disk.items():
        k = known.get(rel)
        if k and k[0] == st.st_mtime_ns and k[1] == st.st_size:
            out.unchanged += 1
            continue
        todo.append((str(root / rel), rel, k[2] if k else None))
    scope = known.keys() if only is None else [r for r in only if r in known]
    removed = [r for r in scope if r not in on_disk]
    if len(todo) >= SLOW_SYNC_FILES and progress is None:  # no bar shows it: say it
        from ..progress import slow_step

        slow_step(f"indexing {len(todo)} Org files (once: later runs read only what changed)")

    results: Iterator[tuple] | list[tuple]
    # The main process inserts while workers parse: one core stays for the inserts.
    ncpu = os.cpu_count() or 1
    nworkers = workers if workers is not None else min(max(ncpu - 1, 1), 6)
    pool = None
    broken: type[BaseException] = _NoPoolError
    if len(todo) >= _POOL_MIN_FILES and nworkers >= 1 and (ncpu > 1 or nworkers > 1) \
            and workers != 0:
        # imported here: multiprocessing costs every short-lived command (`ask`) ~30 ms
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        broken = BrokenProcessPool

        ctx = mp.get_context("fork") if hasattr(os, "fork") else None
        pool = ProcessPoolExecutor(max_workers=nworkers, mp_context=ctx)
        results = pool.map(_load_star, todo, chunksize=max(1, min(16, len(todo) // (nworkers * 8))))
    else:
        results = (load_file(*t) for t in todo)
    store.begin()
    try:
        for i, (rel, state, rows, problem) in enumerate(results, 1):
            if problem:
                out.skipped += 1
                out.problems.append(problem)
            elif rows is None:
                store.touch_file(rel, state)
                out.unchanged += 1
            else:
                store.put_file(rows, state)
                if rel in known:
                    out.changed += 1
                else:
                    out.added += 1
                if rows.errors:
                    out.errors += 1
                    out.problems.extend(f"{rel}: {e}" for e in rows.errors)
            if progress:
                progress(i, len(todo))
        store.remove_files(removed)
        out.removed = len(removed)
        if out.added or out.changed or out.removed:
            store.resolve_links()
            store.bump_generation()
        store.commit()
    except broken:
        # a worker died (out of memory, killed): nothing was committed; parse in-process
        store.rollback()
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        return _sync(root, store, progress, 0, only, t0)
    except BaseException:
        store.rollback()
        raise
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    c = store.counts()
    out.files, out.nodes = c["files"], c["nodes"]
    out.seconds = round(time.perf_counter() - t0, 3)
    return out
