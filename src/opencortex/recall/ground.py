"""Opening a candidate's members and composing its story from what they carry.

Every member is re-read from its own record (the transcript file through its reader, the
commit through ``git show``, the note from its file, a file's span through ``git log -L``)
— the index row that found it is never quoted. Each claim is one excerpt, an exact
substring of an opened turn, with the speaker as the record names it: the person wrote, the
assistant said (that it was said, not that it held), a tool reported, a commit's message,
a note's text."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cue import Cue
from .find import MAX_MEMBERS, Candidate, stems, term_matches
from .index import IndexedRecord
from .notetext import HEADLINE, note_segments, relative_locator
from .records import Receipt, Record, Turn, snapshot
from .sources import SOURCES
from .sources import git as gitsrc

if TYPE_CHECKING:
    from ..memex import Memex
    from .archive import Archive

__all__ = ["LINES_PER_RECORD", "Claim", "Opened", "agent_record_path", "by_record",
           "open_candidate", "qualifications_of", "record_file_withheld", "record_withheld"]

_SEG_MAX = 280
_SETTLED = re.compile(r"\b(?:decided|decision|settled|agreed|we'?ll go with|going with|"
                      r"conclusion|concluded|from now on|rule of thumb|convention|principle|"
                      r"always|never|policy|the plan is|we chose|chose)\b", re.I)


@dataclass
class Claim:
    text: str
    excerpt: str
    locator: str
    handle: str
    record: str
    origin: str
    terms: list[str] = field(default_factory=list)
    semantic: float = 0.0
    raw: str = ""
    """The exact substring of the record the excerpt shows (when rendering changed it)."""
    where: str = ""
    """The locator relative to its root, as a person reads it."""
    note: str = ""
    """When the excerpt is a memex note's text: that note as ``ask`` cites one (its
    ``id:``, else its ``file::outline`` key)."""

    def to_dict(self) -> dict[str, Any]:
        cite = {"locator": self.locator, "excerpt": self.excerpt, "handle": self.handle,
                "where": self.where or self.locator, "record": self.record}
        if self.note:
            cite["note"] = self.note
        if self.raw and self.raw != self.excerpt:
            cite["raw"] = self.raw
        return {"text": self.text, "cite": cite}


@dataclass
class Opened:
    """One member after the attempt to open it."""

    member: IndexedRecord | None
    locator: str
    gist: str
    handle: str
    opened: bool
    record: Record | None
    receipt: dict[str, Any]
    claims: list[Claim] = field(default_factory=list)
    why: str | None = None

    def member_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"locator": self.locator, "gist": self.gist, "handle": self.handle,
                             "opened": self.opened}
        if self.why:
            d["why"] = self.why
        return d


def _word_windows(sent: str) -> list[str]:
    """A long sentence in pieces of at most ``_SEG_MAX`` cut between words (each an exact
    substring), never inside one."""
    out: list[str] = []
    while len(sent) > _SEG_MAX:
        cut = sent.rfind(" ", 0, _SEG_MAX)
        if cut <= 0:
            cut = sent.find(" ", _SEG_MAX)
            if cut < 0:
                break
        out.append(sent[:cut].strip())
        sent = sent[cut:].strip()
    if sent:
        out.append(sent)
    return out


def _segments(text: str, kind: str = "session") -> list[tuple[str, str]]:
    """``(raw, shown)`` pieces of a turn: a note's whole sentences and list items with its
    markup rendered (``notetext``); otherwise its lines, long ones cut at sentence ends
    and then between words.  ``raw`` is always an exact substring of ``text``; a bare
    Org headline line is a name, never a piece."""
    if kind == "note":
        return note_segments(text)
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        s = line.strip()
        if not s or HEADLINE.match(s):
            continue
        if len(s) <= _SEG_MAX:
            out.append((s, s))
            continue
        for sent in re.split(r"(?<=[.!?])\s+", s):
            out += [(w, w) for w in _word_windows(sent.strip())]
    return out


def _when(turn: Turn, rec: Record) -> str:
    t = turn.timestamp or rec.started
    return t.date().isoformat() if t else "an unknown date"


def _claim_text(rec: Record, turn: Turn, excerpt: str, kind: str) -> str:
    when = _when(turn, rec)
    if kind == "commit":
        author = rec.extra.get("author", "its author")
        if turn.locator.endswith(":paths"):
            return f"Commit {rec.session_id} ({when}) touched: “{excerpt}”"
        return f"Commit {rec.session_id} by {author} ({when}) says: “{excerpt}”"
    if kind == "history":
        return f"In the history of {rec.session_id}, {when}: “{excerpt}”"
    if kind == "note":
        return (f"The note «{rec.title}» ({relative_locator(rec.locator, rec.root)}) says: "
                f"“{excerpt}”")
    who = {"person": "the person wrote", "assistant": "the assistant said",
           "tool": "a tool reported"}.get(turn.origin, "the record shows")
    return f"In {rec.source} session {rec.session_id} on {when}, {who}: “{excerpt}”"


Scorer = Callable[[list[str]], list[float]]
"""Texts to their cosine with the cue (the semantic reading), when an embedder is there."""
SEMANTIC_CLAIM = 0.42


def _semantic_claims(rec: Record, cue: Cue, kind: str, budget: int, scorer: Scorer,
                     settled_only: bool, floor: float = SEMANTIC_CLAIM) -> list[Claim]:
    """Where no segment carries a cue word: the segments nearest the cue in meaning
    (a paraphrase — "kept failing randomly" for "flaky"), each still an exact excerpt."""
    segs: list[tuple[Turn, int, str, str]] = []
    for turn in rec.turns:
        if turn.origin not in ("person", "assistant", "tool"):
            continue
        for j, (raw, seg) in enumerate(_segments(turn.text, kind)):
            if len(seg) >= 12 and (not settled_only or _SETTLED.search(seg)) and \
                    not any(term_matches(x, stems(seg)) for x in cue.excluded):
                segs.append((turn, j, raw, seg))
    segs = segs[:96]
    if not segs:
        return []
    scores = scorer([s for _, _, _, s in segs])
    best = sorted(zip(scores, range(len(segs)), strict=True), reverse=True)[:budget]
    chosen = sorted((i for sc, i in best if sc >= floor),
                    key=lambda i: (segs[i][0].index, segs[i][1]))
    return [_claim(rec, segs[i][0], segs[i][2], segs[i][3], kind, [],
                   semantic=round(float(scores[i]), 3)) for i in chosen]


def _claim(rec: Record, turn: Turn, raw: str, shown: str, kind: str, terms: list[str],
           semantic: float = 0.0) -> Claim:
    return Claim(_claim_text(rec, turn, shown, kind), shown, turn.locator, rec.handle,
                 rec.locator, turn.origin, terms, semantic, raw=raw,
                 where=relative_locator(turn.locator, rec.root), note=note_ref(rec))


def note_ref(rec: Record) -> str:
    """A note record's citation (``id:…``, else its ``file::outline`` key); "" for others."""
    if rec.source != "notes":
        return ""
    return rec.handle if rec.handle.startswith("id:") else rec.session_id


def _claims_from(rec: Record, cue: Cue, kind: str, budget: int,
                 settled_only: bool = False, scorer: Scorer | None = None) -> list[Claim]:
    """The segments of the record carrying the most cue terms, in record order (or, with
    none, the nearest in meaning). Injected and unknown-origin turns never ground."""
    terms = cue.terms
    scored: list[tuple[int, int, int, Turn, tuple[str, str], list[str]]] = []
    for turn in rec.turns:
        if turn.origin not in ("person", "assistant", "tool"):
            continue
        for j, (raw, seg) in enumerate(_segments(turn.text, kind)):
            words = stems(seg)
            hit = [t for t in terms if term_matches(t, words)]
            if not hit or any(term_matches(x, words) for x in cue.excluded):
                continue
            if settled_only and not _SETTLED.search(seg):
                continue
            bonus = 1 if turn.origin == "person" else 0
            scored.append((len(hit) * 2 + bonus, turn.index, j, turn, (raw, seg), hit))
    best = sorted(scored, key=lambda x: (-x[0], x[1], x[2]))[:budget]
    best.sort(key=lambda x: (x[1], x[2]))
    seen: set[str] = set()
    claims: list[Claim] = []
    for _, _, _, turn, (raw, seg), hit in best:
        if seg in seen:
            continue
        seen.add(seg)
        claims.append(_claim(rec, turn, raw, seg, kind, hit))
    weak = len({t for c in claims for t in c.terms}) < min(2, len(terms))
    if scorer is not None and weak and kind != "commit":
        sem = _semantic_claims(rec, cue, kind, budget, scorer, settled_only)
        have = {c.excerpt: c for c in claims}
        for c in sem:
            if c.excerpt in have:  # one excerpt, reached both ways
                have[c.excerpt].semantic = c.semantic
        claims = sorted(claims + [c for c in sem if c.excerpt not in have],
                        key=lambda c: c.locator)[:budget + 1]
        if not claims and term_matches_any(terms, rec.title or ""):
            # the record is named by the cue's words (a note's outline) and its text by
            # none: its line nearest the cue in meaning stands for it, whatever its score
            claims = _semantic_claims(rec, cue, kind, 1, scorer, settled_only, floor=-1.0)
    return claims


def term_matches_any(terms: list[str], text: str) -> bool:
    """Whether any of ``terms`` occurs among the words of ``text``."""
    words = stems(text)
    return any(term_matches(t, words) for t in terms)


LINES_PER_RECORD = 3
"""Lines a record shows beside its lead claim: its best, never its whole body."""


def by_record(story: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The story as records: each record once (its first claim leads, its next best
    lines beneath it, at most ``LINES_PER_RECORD``), in the order they first appear; and
    the story kept to those claims.  A long commit body is one record with a few lines,
    never a bullet per line."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in story:
        cite = c["cite"]
        groups.setdefault(cite.get("record") or cite["locator"], []).append(c)
    records: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for rec, claims in groups.items():
        head, rest = claims[0], claims[1:1 + LINES_PER_RECORD]
        kept += [head, *rest]
        records.append({"record": rec, "text": head["text"], "cite": head["cite"],
                        "lines": [{"excerpt": c["cite"]["excerpt"],
                                   "locator": c["cite"]["locator"]} for c in rest]})
    return records, kept


def _receipt(rec: Record | None, fallback: dict[str, Any]) -> dict[str, Any]:
    return rec.receipt.to_dict() if rec is not None else fallback


def open_session(m: IndexedRecord, archive: Archive | None = None) -> Record | None:
    """Re-read a session from its file — or, the original gone, from the ``archive``'s
    copy (its receipt then says so)."""
    source = SOURCES.get(m.source)
    if source is None:
        return None
    recs = None
    if archive is not None and not os.path.lexists(m.file):
        recs = archive.read_records(m.source, m.file)
    if recs is None:
        recs = source.read(Path(m.file))
    for r in recs:
        if r.session_id == m.session_id:
            return r
    return recs[0] if len(recs) == 1 and not recs[0].turns else None


# columns of ``memory.nodes.FileRows.nodes`` (the index's node rows)
_KEY, _LINE, _TAGS, _START, _END = 1, 4, 10, 21, 22


def _rows_on_disk(data: bytes | None, path: Path, relpath: str) -> list[tuple[Any, ...]]:
    """The index rows of a file's bytes as read now (tags inherited as Org does)."""
    from ..memory.nodes import file_rows
    from ..org.parser import parse_bytes

    return file_rows(parse_bytes(data or b"", str(path)), relpath).nodes


def memex_relpath(file: str, root: Path) -> str | None:
    """A record file's path inside the memex at ``root`` (resolved), or None outside it."""
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def agent_record_path(file: str, memex: Memex | None) -> tuple[Path, str] | None:
    """(path, relative name) of a record file the agent wrote -- in the memex (records of
    the old layout) or in its sessions folder -- or None for a transcript from elsewhere,
    which carries no Org tags to honour."""
    if memex is None:
        return None
    root = Path(memex.root).resolve()
    rel = memex_relpath(file, root)
    if rel is not None:
        return root / rel, rel
    folder = memex.settings.sessions_path
    try:
        rel = Path(file).resolve().relative_to(folder.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    return folder / rel, rel


def record_withheld(file: str, source: str, memex: Memex | None,
                    hide: Callable[[Any], bool], archive: Any = None) -> bool:
    """Whether a session record holds an entry ``hide`` withholds, judged from its own
    bytes wherever it lives: inside the memex, outside it (the agent's session records
    are Org files whatever their folder), behind a symlink (its target's tags count), or,
    the original deleted, in the transcript archive (the copy keeps its origin's privacy).
    Bytes that cannot be read (nor found archived) are withheld: privacy unknown.  Another
    tool's transcript outside the memex carries no Org tags to honour.  Read after the
    record was opened: a session record only grows, so an entry private now was private
    when it was read."""
    from .sources.opencortex_sessions import SOURCE as SESSIONS

    root = Path(memex.root).resolve() if memex is not None else None
    rel = memex_relpath(file, root) if root is not None else None
    if rel is None and source != SESSIONS:
        return False
    path = Path(file)
    try:
        if os.path.lexists(path):
            data: bytes | None = path.read_bytes()  # a symlink: what it points at
        else:
            data = archive.original_bytes(file) if archive is not None else None
    except OSError:
        return True
    if data is None:
        return True
    return any(hide(r[_TAGS].split()) for r in _rows_on_disk(data, path, rel or path.name))


def record_file_withheld(file: str, memex: Memex, hide: Callable[[Any], bool]) -> bool:
    """Whether a session record the agent wrote holds an entry ``hide`` withholds, as
    :func:`record_withheld` judges it (its own bytes, wherever it lives)."""
    from .sources.opencortex_sessions import SOURCE as SESSIONS

    return record_withheld(file, SESSIONS, memex, hide, archive_of(memex))


def _open_note(m: IndexedRecord, memex: Memex,
               hide: Callable[[Any], bool] | None = None) -> Record | None:
    """The note as its file says now.  With ``hide`` (a client that may not see private
    notes): the file read is parsed and the note's heading found by its key in *those*
    bytes, so neither a tag added since the pass chose its scope nor an edit that moved the
    indexed byte range (a private heading saved above it) reaches the client."""
    if memex is None:
        return None
    node = memex.store.nodes_by_keys([m.session_id]).get(m.session_id)
    if node is None:
        return None
    if hide is not None and hide(node.tags):
        return None
    path = Path(memex.root) / node.file
    snap = snapshot(path)
    start, end, line = node.byte_start, node.byte_end, node.line
    if hide is not None:
        row = next((r for r in _rows_on_disk(snap.data, path, node.file)
                    if r[_KEY] == m.session_id), None)
        if row is None or hide(row[_TAGS].split()):
            return None
        start, end, line = row[_START], row[_END], row[_LINE]
    text = snap.data[start:end].decode("utf-8", "replace")
    loc = f"{path}:{line}"
    receipt = Receipt("notes", str(memex.root), m.session_id, loc, snap.revision, snap.sha256,
                      "opencortex.recall.notes@1", "succeeded" if text.strip() else "empty",
                      skipped_lines=0, unverified_person_turns=None, omitted_chars=0)
    return Record("notes", m.session_id, str(memex.root), loc,
                  " / ".join([*node.outline, node.title]), None,
                  None, m.started, m.ended, [Turn(0, "tool", text, m.started, loc)], m.handle,
                  receipt)


def archive_of(memex: Memex) -> Any:
    """The transcript archive of ``memex``'s settings (None without a memex)."""
    settings = getattr(memex, "settings", None)
    if settings is None or not hasattr(settings, "archive_path"):
        return None
    from .archive import Archive

    return Archive.for_settings(settings)


def open_member(m: IndexedRecord, cue: Cue, memex: Memex, budget: int,
                scorer: Scorer | None = None,
                hide: Callable[[Any], bool] | None = None) -> Opened:
    """Re-read one member from its own record and take the claims it carries."""
    settled = cue.whole == "concept" and m.kind != "note"
    rec: Record | None
    why: str | None
    try:
        if m.kind == "commit":
            rec = gitsrc.commit_record(m.root, m.session_id)
        elif m.kind == "note":
            rec = _open_note(m, memex, hide)
        else:
            archive = archive_of(memex)
            rec = open_session(m, archive)
            if rec is not None and hide is not None and record_withheld(
                    m.file, m.source, memex, hide, archive):
                rec = None  # a private entry (perhaps added since the pass chose its scope)
    except OSError as e:
        rec, why = None, f"could not be read: {e}"
    else:
        why = None
    if rec is None or rec.receipt.state not in ("succeeded", "empty") or not rec.turns:
        state = rec.receipt.state if rec else "input_failed"
        detail = (rec.receipt.detail if rec else None) or why or "the record was not found"
        return Opened(m, m.locator, m.gist, m.handle, False, rec,
                      _receipt(rec, {"source": m.source, "root": m.root,
                                     "session_id": m.session_id, "locator": m.locator,
                                     "state": state, "detail": detail}),
                      why=f"{state}: {detail}")
    claims = _claims_from(rec, cue, m.kind, budget, settled_only=settled, scorer=scorer)
    if m.kind == "commit":
        claims = _commit_claims(rec, claims)
    receipt = _receipt(rec, {})
    indexed_sha = m.receipt.get("sha256")
    why = None
    if indexed_sha and receipt.get("sha256") and indexed_sha != receipt["sha256"]:
        why = "the record changed since it was indexed; read as it is now"
    return Opened(m, m.locator, m.gist, rec.handle or m.handle, True, rec, receipt, claims,
                  why)


def _commit_claims(rec: Record, claims: list[Claim]) -> list[Claim]:
    """A commit tells its subject, the matching lines of its message, and what it touched
    (one claim: the first paths of ``git show --name-status``, an exact prefix)."""
    subject = rec.turns[0]
    out = [c for c in claims if not c.locator.endswith(":paths")]
    if not any(c.locator == subject.locator for c in out):
        out.insert(0, Claim(_claim_text(rec, subject, subject.text, "commit"), subject.text,
                            subject.locator, rec.handle, rec.locator, subject.origin, []))
    paths = next((t for t in rec.turns if t.locator.endswith(":paths")), None)
    if paths is not None:
        excerpt = "\n".join(paths.text.splitlines()[:6])
        out.append(Claim(_claim_text(rec, paths, excerpt, "commit"), excerpt, paths.locator,
                         rec.handle, rec.locator, paths.origin,
                         [t for c in claims if c.locator == paths.locator for t in c.terms]))
    return out


def private_history(repo: str, path: str, memex: Memex) -> bool:
    """Provenance of a git span: ``path`` of ``repo`` is a memex file that holds private
    notes now (``Memex.private_prints().files``), or an Org file of the memex the index no
    longer holds (deleted or renamed: what its history carried cannot be told), or an Org
    file -- of the memex or of any other repository -- whose history ever held a privacy
    tag (``tagged_private_once``): its diffs quote what that entry said then, which no
    note holds now for the content check to match."""
    root = Path(memex.root).resolve()
    full = Path(repo, path)
    try:
        rel = full.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        rel = None
    if rel is not None:
        snap = memex.private_prints()
        if rel in snap.files or (rel.endswith(".org") and not full.exists()):
            return True
    return tagged_private_once(repo, path, memex)


def tagged_private_once(repo: str, path: str, memex: Memex) -> bool:
    """Did any commit of the Org file ``path`` add or remove a line carrying a privacy tag
    (a headline's ``:private:``, ``#+FILETAGS``)?  Judged by the history's own bytes, so a
    copy of the memex in another repository counts the same; a history git cannot read is
    counted private."""
    if not path.endswith(".org"):
        return False
    from ..guard.policy import policy_of

    tags = sorted(policy_of(memex.settings.guard).privacy_tags)
    if not tags:
        return False
    pattern = ":(" + "|".join(re.escape(t) for t in tags) + "):"
    try:
        out = gitsrc.run(repo, "log", "-i", "-E", "-G", pattern, "--format=%H", "-n", "1",
                         "--", path, timeout=30)
    except gitsrc.GitError:
        return True
    return bool(out.strip())


def _history_members(cand: Candidate, cue: Cue, budget: int, memex: Memex | None = None,
                     hide: Callable[[Any], bool] | None = None) -> list[Opened]:
    """For an artifact the cue names: the change history of its span in the candidate's
    repositories (``git log -L :ident:path`` when an identifier is named, else --follow).
    With ``hide``: never the history of a memex file that holds private notes (or that is
    no longer indexed: its privacy cannot be told) — its diff lines are private text."""
    arts = [a.value for a in cue.axes if a.kind == "artifact"]
    if not arts:
        return []
    idents = [a.value for a in cue.axes if a.kind == "identifier"]
    repos: list[str] = []
    for m in cand.members:
        root = m.root if m.kind == "commit" else (m.cwd or "")
        top = gitsrc.toplevel(root) if root else None
        if top and str(top) not in repos:
            repos.append(str(top))
    out: list[Opened] = []
    for repo in repos[:2]:
        try:
            files = gitsrc.run(repo, "ls-files").splitlines()
        except gitsrc.GitError:
            continue
        for art in arts[:2]:
            path = next((f for f in files if f == art or f.endswith("/" + art)
                         or Path(f).name == Path(art).name), None)
            if path is None or (hide is not None and memex is not None
                                and private_history(repo, path, memex)):
                continue
            rec = gitsrc.span_history(repo, path, idents[0] if idents else None)
            claims = _claims_from(rec, cue, "history", budget) if rec.turns else []
            if rec.turns and not claims:  # the span's latest change is still what it carries
                first = rec.turns[0]
                head = first.text.splitlines()[0]
                claims = [Claim(_claim_text(rec, first, head, "history"), head, first.locator,
                                rec.handle, rec.locator, first.origin, [])]
            out.append(Opened(None, rec.locator, rec.title or path, rec.handle,
                              bool(rec.turns), rec, rec.receipt.to_dict(), claims,
                              None if rec.turns else rec.receipt.detail))
    return out


def open_candidate(cand: Candidate, cue: Cue, memex: Memex, max_claims: int = 8,
                   scorer: Scorer | None = None,
                   hide: Callable[[Any], bool] | None = None) -> list[Opened]:
    """Open every member (and the span history an artifact cue reaches)."""
    opened: list[Opened] = []
    per = max(2, max_claims // max(1, len(cand.members)))
    for i, m in enumerate(cand.members):
        opened.append(open_member(m, cue, memex, per + (2 if i == 0 else 0), scorer, hide))
    room = MAX_MEMBERS - len(cand.members)  # a presented candidate holds at most 8 records
    if room > 0:
        opened.extend(_history_members(cand, cue, 3, memex, hide)[:room])
    for o in opened:  # every claim shows where it is relative to its root
        root = o.record.root if o.record is not None else (o.member.root if o.member else None)
        for c in o.claims:
            c.where = c.where or relative_locator(c.locator, root)
    return opened


def qualifications_of(opened: list[Opened]) -> list[dict[str, Any]]:
    """What the capture receipts say of each member: failed states, lines skipped, person
    turns unconfirmed, text omitted. Unknown counts stay null (never zero)."""
    out: list[dict[str, Any]] = []
    for o in opened:
        r = o.receipt
        findings: list[str] = []
        if not o.opened:
            findings.append(f"did not open ({o.why})")
        if r.get("skipped_lines"):
            findings.append(f"{r['skipped_lines']} lines of this record failed to parse")
        if r.get("unverified_person_turns"):
            findings.append(f"{r['unverified_person_turns']} person turns could not be "
                            "confirmed against the runtime's own channel")
        if r.get("omitted_chars"):
            findings.append(f"{r['omitted_chars']} characters were not read")
        if o.why and o.opened:
            findings.append(o.why)
        if r.get("archived"):
            findings.append(r["archived"])
        if findings:
            out.append({"locator": o.locator, "finding": "; ".join(findings),
                        "reach": {"extractor": r.get("extractor"), "state": r.get("state"),
                                  "omitted": r.get("omitted_chars")},
                        "scan": {"skipped_lines": r.get("skipped_lines"),
                                 "unverified_person_turns": r.get("unverified_person_turns"),
                                 "omitted_chars": r.get("omitted_chars")}})
    return out
