"""Code trust, like direnv: code from the memex (literate skills) runs only when the person
approved exactly its bytes.

The trust store lives OUTSIDE the memex, under the XDG state dir
(``$XDG_STATE_HOME/opencortex/trust/skills.json``), so nothing that arrives in the memex —
a synced file, a capture, a model's draft — can also plant its own approval.  Each entry
is keyed by (memex root, relative path) and records the skill's name, the sha256 of the
approved bytes and those bytes' text (for the diff shown at the next approval).

Inspecting a skill file here never runs it: name, title and description come from the
Org text (``#+TITLE`` / ``#+DESCRIPTION``), the code is the ``#+begin_src python`` blocks.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_write, read_snapshot
from ..errors import ConflictError
from .errors import GuardError
from .paths import CODE_DIR, is_inside

__all__ = ["MAX_SHOWN", "WIDTH", "SkillFile", "TrustEntry", "TrustStore", "approval_kind",
           "approval_text", "diff",
           "inspect_skill", "running_lines", "sha256", "skill_files", "trust_command",
           "visible"]

MAX_SHOWN = 16_000
"""Longest code an approval in chat/daemon shows whole; longer files are trusted only with
``opencortex skills trust`` (the person must be able to read what they approve)."""
_KW = re.compile(r"^[ \t]*#\+(TITLE|DESCRIPTION):[ \t]*(.*)$", re.I | re.M)
_SRC_BEGIN = re.compile(r"^[ \t]*#\+begin_src[ \t]+python\b[^\n]*\n", re.I | re.M)
_SRC_END = re.compile(r"^[ \t]*#\+end_src", re.I | re.M)


def python_blocks(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, body)`` of each ``#+begin_src python`` … ``#+end_src`` block, in one pass:
    a lazy regexp over the whole file retried the rest of it from every opener when none
    was closed (a synced skill file is untrusted: quadratic)."""
    pos = 0
    while (b := _SRC_BEGIN.search(text, pos)) is not None:
        e = _SRC_END.search(text, b.end())
        if e is None:  # no end after this opener: none after any later one either
            return
        yield b.end(), text[b.end():e.start()]
        pos = e.end()
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A literate skill file as read (bytes once; metadata parsed, code never run)."""

    name: str
    """The file's stem: what ``opencortex skills trust NAME`` takes."""
    rel: str
    """Path relative to the memex root (``skills/NAME.org``)."""
    path: Path
    data: bytes
    title: str
    description: str

    @property
    def sha256(self) -> str:
        return sha256(self.data)

    @property
    def text(self) -> str:
        return _text(self.data)

    @property
    def code(self) -> str:
        return "\n".join(body for _, body in python_blocks(self.text))


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file; a FIFO or device (even one swapped in since a stat)
    is refused without blocking."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def inspect_skill(path: Path, root: Path, data: bytes | None = None) -> SkillFile:
    """Read ``path`` (a file in the memex's skills folder) without running any of it."""
    raw = _read_regular(path) if data is None else data
    kws: dict[str, str] = {}
    for m in _KW.finditer(_text(raw)):
        kws.setdefault(m.group(1).upper(), m.group(2).strip())
    title = visible(kws.get("TITLE", ""))  # listed by `skills` / doctor: never repaints
    return SkillFile(path.stem, f"{CODE_DIR}/{path.name}", path, raw,
                     title.removeprefix("Skill:").strip() or title,
                     visible(kws.get("DESCRIPTION", "")))


def skill_files(root: Path) -> dict[str, Path]:
    """The literate skill files of the memex at ``root``, by name (what the registry loads)."""
    folder = root / CODE_DIR
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.org")) if p.is_file()}


def find_skill(root: Path, name: str) -> SkillFile:
    """``name`` is a skill file's stem or ``skills/NAME.org``; a clear error otherwise."""
    stem = name.strip()
    stem = stem.removeprefix(f"{CODE_DIR}/").removesuffix(".org")
    files = skill_files(root)
    if not _NAME.fullmatch(stem) or stem not in files:
        known = ", ".join(files) or "none"
        raise GuardError(f"no literate skill {name!r} in {root / CODE_DIR} (skill files: "
                         f"{known})")
    return inspect_skill(files[stem], root)


@dataclass(slots=True)
class TrustEntry:
    memex: str
    path: str
    name: str
    sha256: str
    trusted_at: str
    by: str
    text: str
    """The approved bytes, decoded: shown as the base of the diff at the next approval."""


class TrustStore:
    """The person's approvals of code, in one JSON file outside every memex."""

    _lock = threading.Lock()

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from ..config import state_dir

            path = state_dir() / "trust" / "skills.json"
        self.path = Path(path)

    @staticmethod
    def _key(root: Path, rel: str) -> str:
        return f"{Path(root).resolve()}\n{rel}"

    def usable_for(self, root: Path) -> bool:
        """False when the store would live inside the memex (a synced file could plant it)."""
        try:
            return not is_inside(self.path.resolve(), Path(root).resolve())
        except OSError:
            return False

    def _read(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise GuardError(f"the trust store {self.path} is unreadable ({e}); move it "
                             "away and trust your skills again") from None
        skills = raw.get("skills") if isinstance(raw, dict) else None
        return skills if isinstance(skills, dict) else {}

    def get(self, root: Path, rel: str) -> TrustEntry | None:
        if not self.usable_for(root):
            return None
        e = self._read().get(self._key(root, rel))
        try:
            return TrustEntry(**e) if isinstance(e, dict) else None
        except TypeError:
            return None

    def is_trusted(self, root: Path, rel: str, data: bytes) -> bool:
        e = self.get(root, rel)
        return e is not None and e.sha256 == sha256(data)

    def state(self, root: Path, rel: str, data: bytes) -> str:
        """``trusted``, ``changed`` (trusted once, edited since) or ``untrusted``."""
        e = self.get(root, rel)
        if e is None:
            return "untrusted"
        return "trusted" if e.sha256 == sha256(data) else "changed"

    def trust(self, root: Path, rel: str, name: str, data: bytes, by: str) -> TrustEntry:
        """Record exactly ``data`` as approved for ``rel`` in the memex at ``root``."""
        if not self.usable_for(root):
            raise GuardError(f"the trust store {self.path} lies inside the memex {root}; "
                             "set XDG_STATE_HOME elsewhere so synced files cannot plant trust")
        entry = TrustEntry(str(Path(root).resolve()), rel, name, sha256(data),
                           dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), by,
                           _text(data))
        self._update(lambda s: s.__setitem__(self._key(root, rel), asdict(entry)))
        return entry

    def untrust(self, root: Path, rel: str) -> bool:
        """Forget the approval; True if there was one."""
        found: list[bool] = []
        self._update(lambda s: found.append(s.pop(self._key(root, rel), None) is not None))
        return bool(found and found[0])

    def _update(self, change: Any) -> None:
        with self._lock:
            for _ in range(5):  # another process wrote meanwhile: re-read and retry
                snap = read_snapshot(self.path)
                skills = self._read()
                change(skills)
                data = json.dumps({"version": 1, "skills": skills}, ensure_ascii=False,
                                  indent=1, sort_keys=True).encode()
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    atomic_write(snap, data)
                    return
                except ConflictError:
                    continue
            raise GuardError(f"the trust store {self.path} kept changing; try again")


def diff(old: str | None, new: str, rel: str) -> str:
    """Unified diff of the last trusted text against the current one ('' if none trusted)."""
    if old is None:
        return ""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        f"{rel} (last trusted)", f"{rel} (now)"))


def approval_kind(action: Any) -> str | None:
    """What an approval is, for clients that show it: code trust or a new skill's code."""
    if action.tool == "skill.trust":
        return "trust skill"
    if action.tool == "memex.write" and action.args.get("op") == "skill":
        return "new skill"
    return None


def trust_command(name: str, memex: str | None = None) -> str:
    import shlex

    extra = f" --memex {shlex.quote(memex)}" if memex else ""
    return f"opencortex skills trust {shlex.quote(name)}{extra}"


WIDTH = 100
"""Widest line an approval shows: longer ones are wrapped, so no code sits off-screen."""
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Printable by Unicode's rules, yet drawn as nothing (Hangul fillers, blank braille)."""


def _shows_as_itself(c: str) -> bool:
    return c == " " or (c.isprintable() and c not in _BLANK)


def visible(s: str) -> str:
    """``s`` as a screen shows it faithfully: tabs expanded as Python reads indentation,
    and every character that is not positively printable (CR, ESC and other controls,
    bidi overrides, zero-width and format characters, line separators, lone surrogates,
    blank fillers) written as a visible ``⟨U+XXXX⟩``, so a terminal, chat app or editor
    cannot overprint, reorder or hide any of it."""
    return "".join(c if _shows_as_itself(c) else f"⟨U+{ord(c):04X}⟩"
                   for c in s.expandtabs(8))


def _wrapped(line: str) -> list[str]:
    """A code line cut every WIDTH characters (nothing dropped, nothing merged)."""
    return [line[i:i + WIDTH] for i in range(0, len(line), WIDTH)] or [""]


def _prose(text: str, indent: str = "") -> list[str]:
    import textwrap

    return textwrap.wrap(visible(text), WIDTH, initial_indent=indent,
                         subsequent_indent=indent + "  ") or [""]


def running_lines(text: str) -> set[int]:
    """1-based numbers of the lines the registry runs: every ``#+begin_src python`` block,
    wherever it sits (an example, a comment, a ``COMMENT`` heading, ``:eval no``)."""
    out: set[int] = set()
    for start, body in python_blocks(text):
        first = text.count("\n", 0, start) + 1
        out.update(range(first, first + body.count("\n")))
    return out


def _code_warnings(body: list[str], runs: set[int]) -> list[str]:
    """What the person must know about code lines a screen cannot show faithfully."""
    hidden: dict[str, list[int]] = {}
    foreign: dict[str, list[int]] = {}
    for n in sorted(runs):
        for c in dict.fromkeys(body[n - 1] if n <= len(body) else ""):
            if c != "\t" and not _shows_as_itself(c):
                hidden.setdefault(f"U+{ord(c):04X}", []).append(n)
            elif not c.isascii():
                import unicodedata

                foreign.setdefault(f"U+{ord(c):04X} {unicodedata.name(c, '?')}", []).append(n)
    out = []
    if hidden:
        out.append("code contains characters a screen does not show as themselves (shown "
                   "as ⟨U+…⟩; a lone ⟨U+000D⟩ starts a new Python line): " + "; ".join(
                       f"{k} on line(s) {', '.join(map(str, v))}" for k, v in hidden.items()))
    if foreign:
        out.append("code contains non-ASCII characters (a look-alike letter can make one "
                   "name read as another): " + "; ".join(
                       f"{k} on line(s) {', '.join(map(str, v))}" for k, v in foreign.items()))
    return out


def approval_text(rel: str, text: str, digest: str, *, previous: str | None = None,
                  lint: list[str] | None = None) -> str:
    """What the person reads before approving code: the whole file (or the diff against
    the version they trusted before), its sha256 and the lint's warnings.  Every line is
    numbered and made :func:`visible`, long lines wrapped, and each line that runs as
    Python is marked ``>`` — what they read is exactly what runs, however it looks in Org."""
    body = text.rstrip("\n").split("\n")
    runs = running_lines(text)
    lines = _prose(f"{rel} is code that will run with your rights (sha256 {digest[:16]}…); "
                   "approving trusts exactly these bytes (always asked, whatever "
                   "guard.tools says).")
    for w in lint or []:
        lines += _prose(f"lint warning: {w}", "  ")
    for w in _code_warnings(body, runs):
        lines += _prose(f"warning: {w}", "  ")
    d = diff(previous, text, rel)
    if d:
        lines.append("--- changes since you last trusted it ---")
        for ln in d.rstrip("\n").split("\n"):
            lines += _wrapped(visible(ln))
    lines += _prose(f"--- {rel} ({len(body)} lines, numbered; lines marked > run as Python; "
                    "a long line goes on in lines marked +) ---")
    for n, ln in enumerate(body, 1):  # no line can fake the end or hide another
        mark = ">" if n in runs else " "
        for i, part in enumerate(_wrapped(visible(ln))):
            lines.append(f"{n:>5}{mark}| {part}" if i == 0 else f"     {mark}+ {part}")
    lines.append(f"--- end of {visible(rel)}: {len(body)} lines ---")
    return "\n".join(lines)
