"""Move session records of the old layout (``<memex>/sessions/YYYY/MM/DD-<id>.org``) to the
sessions folder (``Settings.sessions_path``), and back.

Never loses a file: each record is copied (bytes and mtime, which retention reads), the
copy read back and compared by SHA-256, and only then is the original deleted; a name
already taken by different bytes gets a ``-N`` suffix instead of overwriting.  Every move
is listed in a manifest (``<sessions folder>/migrations/<time>.json``) so ``--undo``
puts each file back where it was, again copy-verify-delete, and refuses to overwrite a
file that reappeared at the old place with other bytes."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic import atomic_write, read_snapshot, remove_file
from ..errors import OpenCortexError

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["MigrationReport", "legacy_records", "migrate", "undo_migration"]


@dataclass(slots=True)
class MigrationReport:
    """What a migration (or its undo) did: counts, the manifest, what it left and why."""

    source: str
    target: str
    moved: int = 0
    already_there: int = 0
    renamed: list[str] = field(default_factory=list)
    """Records whose name was taken by different bytes: moved under a ``-N`` name."""
    left: list[str] = field(default_factory=list)
    """Files not moved, each with the reason."""
    manifest: str | None = None
    dry_run: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def legacy_records(settings: Settings) -> list[Path]:
    """The records of the old layout still in the memex (none when the person chose that
    very folder as the sessions folder)."""
    from ..config import LEGACY_GLOB

    root = settings.memex.expanduser().resolve()
    old = root / "sessions"
    if not old.is_dir() or old.resolve() == settings.sessions_path.resolve():
        return []
    return sorted(p for p in root.glob(LEGACY_GLOB) if p.is_file() and not p.is_symlink())


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _move(src: Path, dst: Path) -> str:
    """Copy ``src`` to ``dst`` (which must not exist), verify, delete ``src``; the hash."""
    snap = read_snapshot(src)
    data = snap.data or b""
    st = src.stat()
    atomic_write(read_snapshot(dst), data)  # never over an existing file
    if _sha(dst.read_bytes()) != _sha(data):
        raise OpenCortexError(f"the copy of {src} at {dst} differs; the original is kept")
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    remove_file(snap)  # only if it still holds what was copied
    return _sha(data)


def _free_name(dst: Path) -> Path:
    n = 2
    while True:
        cand = dst.with_name(f"{dst.stem}-{n}{dst.suffix}")
        if not cand.exists():
            return cand
        n += 1


def _drop_empty_dirs(top: Path) -> None:
    for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        try:
            d.rmdir()
        except OSError:
            pass
    try:
        top.rmdir()
    except OSError:
        pass


def migrate(settings: Settings, dry_run: bool = False,
            now: dt.datetime | None = None) -> MigrationReport:
    """Move every record of the old layout to the sessions folder; report what moved."""
    old = settings.memex.expanduser().resolve() / "sessions"
    new = settings.sessions_path
    rep = MigrationReport(str(old), str(new), dry_run=dry_run)
    moves: list[dict[str, str]] = []
    for src in legacy_records(settings):
        rel = src.relative_to(old)
        dst = new / rel
        if dst.exists():
            if dst.read_bytes() == src.read_bytes():
                rep.already_there += 1
                if not dry_run:
                    remove_file(read_snapshot(src))
                continue
            dst = _free_name(dst)
            rep.renamed.append(f"{rel} -> {dst.relative_to(new)}")
        if dry_run:
            rep.moved += 1
            continue
        try:
            digest = _move(src, dst)
        except (OSError, OpenCortexError) as e:
            rep.left.append(f"{rel}: {e}")
            continue
        moves.append({"from": str(src), "to": str(dst), "sha256": digest})
        rep.moved += 1
    if moves:
        stamp = (now or dt.datetime.now()).strftime("%Y%m%dT%H%M%S%f")
        man = new / "migrations" / f"{stamp}.json"
        atomic_write(read_snapshot(man), json.dumps(
            {"from": str(old), "to": str(new), "moves": moves}, indent=1).encode())
        rep.manifest = str(man)
    if not dry_run and old.is_dir():
        _drop_empty_dirs(old)
    if old.is_dir():
        rep.left += [f"{p.relative_to(old)}: not a session record (kept)"
                     for p in sorted(old.rglob("*")) if p.is_file()
                     and not any(m["from"] == str(p) for m in moves)
                     and p not in legacy_records(settings)]
    return rep


def undo_migration(settings: Settings, manifest: str | None = None) -> MigrationReport:
    """Put back the records one migration moved (the latest, or ``manifest``)."""
    folder = settings.sessions_path / "migrations"
    if manifest is None:
        found = sorted(folder.glob("*.json")) if folder.is_dir() else []
        if not found:
            raise OpenCortexError(f"no migration to undo: {folder} holds no manifest "
                                  "(`opencortex sessions migrate` writes one)")
        path = found[-1]
    else:
        path = Path(manifest).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        moves = data["moves"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise OpenCortexError(f"{path}: not a migration manifest ({e})") from None
    rep = MigrationReport(str(data.get("to")), str(data.get("from")), manifest=str(path))
    for m in moves:
        src, dst = Path(m["to"]), Path(m["from"])
        if not src.is_file():
            rep.left.append(f"{src}: gone since the migration")
            continue
        if _sha(src.read_bytes()) != m["sha256"] and dst.exists():
            rep.left.append(f"{src}: changed since the migration and {dst} exists again")
            continue
        if dst.exists():
            if dst.read_bytes() == src.read_bytes():
                remove_file(read_snapshot(src))
                rep.already_there += 1
            else:
                rep.left.append(f"{dst}: exists again with other bytes; {src} kept")
            continue
        try:
            _move(src, dst)
            rep.moved += 1
        except (OSError, OpenCortexError) as e:
            rep.left.append(f"{src}: {e}")
    if not rep.left:
        path.rename(path.with_suffix(".undone"))
    return rep
