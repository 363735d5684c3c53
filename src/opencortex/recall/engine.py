"""The recall dialogue (recognition over retrieval) as a state machine over persisted
sessions: ``start`` runs the first pass, ``reply`` reads the person's next utterance.

A pass reads the cue afresh from every person turn, refreshes the record index for the roots
inside the boundary, searches, groups hits into candidates, opens the leading candidate's
members and composes the story only from what they carry. After a pass exactly one of:
present, ask one open question, offer a wider search (never run until the person admits
it), or close unresolved. Only the person's explicit turn identifies; silence holds."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import OutsideBoundary, RecallError, UnknownRecallSession
from ..locking import OuterLock
from .answer import read_answer
from .state import RecallState

if TYPE_CHECKING:
    from ..config import RecallSettings
from .cue import Cue, activation, bind, read_cue
from .find import Candidate, group, stems, term_matches
from .ground import (
    Opened,
    archive_of,
    by_record,
    memex_relpath,
    open_candidate,
    qualifications_of,
)
from .index import Hit, RecordIndex, Root
from .narrow import narrow
from .sources import SOURCES
from .sources import git as gitsrc

if TYPE_CHECKING:
    from ..llm.gateway import Gateway
    from ..memex import Memex
    from .archive import Archive
    from .ground import Scorer

__all__ = ["CAVEAT", "Recall", "RecallError", "Round", "embed_pending_records", "parse_source"]

CAVEAT = ("Recall shows that this past took place as the records say; it does not show that "
          "it still holds.")
QUESTION = ("What else do you remember about it — roughly when it was, who was involved, a "
            "file or command, or a word that was used?")
PASS_EMBED_LIMIT = 64  # gists a pass embeds itself: its hits (all pending when they fit);
# the heartbeat and `recall --index-only` embed the rest
SEMANTIC_FLOOR = 0.2
RRF_K = 10  # reciprocal rank fusion: small, so the first few of each list stand apart
DENSE_K = 100  # records the semantic list holds (best view each)
SEMANTIC_CANDIDATE = 0.45  # a candidate no cue word reaches must be this near in meaning
SEMANTIC_AGREE = 0.38
"""A candidate one cue word reaches counts when its meaning is this near too: both readings
agree on it (a paraphrased cue shares one word with its record, rarely two)."""
_LOCKS: weakref.WeakValueDictionary[tuple[str, str], OuterLock] = weakref.WeakValueDictionary()
_LOCKS_GUARD = threading.Lock()


def _outer_lock(kind: str, key: str) -> OuterLock:
    """One process-wide lock per (kind, key), alive while someone holds it.  ``OuterLock``s:
    they are held while a model runs with the memex lock released, so they are waited for
    with the memex lock released too (a plain lock deadlocked)."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get((kind, key))
        if lock is None:
            lock = _LOCKS[(kind, key)] = OuterLock()
        return lock


def _turn_lock(path: Path) -> OuterLock:
    """The lock of one recall session (its state file): its turns run one at a time."""
    return _outer_lock("turn", str(path))


def _records_lock(memex: Memex) -> OuterLock:
    """The lock of a memex's record index while a pass or a refresh uses it.  A pass reads
    record ids (its scope: what is private, what is the present conversation), lets go of the
    memex lock while its model embeds, then uses those ids; a refresh meanwhile deletes and
    inserts records, and SQLite gives a deleted row's id to the next — a private note's
    record could take the id the scope allowed.  So passes and refreshes of one record
    index run one at a time (other requests are still served while a pass embeds)."""
    return _outer_lock("records", str(Path(memex.root).resolve()))


_THROUGHPUT = 40e6  # bytes/s a deeper read or wider scan manages here (for cost estimates)


def parse_source(spec: str) -> Root:
    """``KIND:PATH`` (kinds: claude-code, codex, gemini, aider, opencode, opencortex, git,
    notes) to a Root with an absolute path."""
    kind, sep, path = spec.partition(":")
    kinds = sorted([*SOURCES, "git", "notes"])
    if not sep or not path or kind not in kinds:
        raise RecallError(f"bad source {spec!r}: use KIND:PATH with KIND one of "
                          f"{', '.join(kinds)}")
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise RecallError(f"source {spec!r}: {p} does not exist")
    if kind == "git":
        top = gitsrc.toplevel(p)
        if top is None:
            raise RecallError(f"{p} is not inside a git repository")
        p = top
    return Root(kind, str(p))


@dataclass
class Round:
    """What one turn of the recall shows (the JSON round of ``opencortex recall --json``)."""

    session: str
    state: str
    cue: dict[str, Any] | None = None
    recognizable: dict[str, Any] | None = None
    story: list[dict[str, Any]] = field(default_factory=list)
    """Every claim, each citing the excerpt of an opened record that carries it."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """The story as the person reads it: one entry per record (its lead claim, its best
    lines beneath), never a record twice (``ground.by_record``)."""
    adjacent: list[dict[str, Any]] = field(default_factory=list)
    qualifications: list[dict[str, Any]] = field(default_factory=list)
    searched: dict[str, Any] | None = None
    question: str | None = None
    expansion: dict[str, Any] | None = None
    recalled: dict[str, Any] | None = None
    reason: str | None = None
    noted: list[str] = field(default_factory=list)
    caveat: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def render(self) -> str:
        """The round as text for a person (CLI, chat)."""
        lines: list[str] = []
        if self.state == "not_activated":
            return f"Not a recall: {self.reason}"
        if self.state == "holding":
            return "The recall is still open; nothing was identified."
        if self.story and self.recognizable and self.state in ("presented", "identified"):
            rz = self.recognizable
            lines.append(f"This may be the {rz['whole']} you mean:")
            for r in self.records or by_record(self.story)[0]:
                cite = r["cite"]
                lines.append(f"- {r['text']}")
                lines += [f"    “{x['excerpt']}”" for x in r["lines"]]
                lines.append(f"    ↳ {cite.get('where') or cite['locator']}  "
                             f"(reopen: {cite['handle']})")
            if rz.get("joins"):
                lines.append("Joined by: " + "; ".join(rz["joins"]))
            shut = [m for m in rz["members"] if not m["opened"]]
            if shut:
                lines.append("Did not open: " + "; ".join(
                    f"{m['locator']} ({m.get('why', '')})" for m in shut))
        if self.adjacent and self.state == "presented":
            lines.append("Also near the cue: " + "; ".join(a["describe"] for a in self.adjacent))
        for q in self.qualifications:
            lines.append(f"Note: {q['locator']}: {q['finding']}")
        if self.state in ("asked", "offered", "unresolved", "stopped") and self.searched:
            lines.append("Searched: " + self.searched.get("text", ""))
        if self.question:
            lines.append(self.question)
        if self.expansion:
            lines.append(f"I could search wider: {self.expansion['reach']} "
                         f"(cost: {self.expansion['cost']}). Or we stop here.")
        if self.state == "unresolved":
            lines.append("Nothing within this scope carried enough of what you remember to "
                         "present; this does not show it never happened.")
        if self.state == "stopped":
            lines.append("Recall stopped.")
        if self.state == "identified" and self.recalled:
            lines.append(f"Identified by your words: “{self.recalled['identified_by']}”.")
        if self.caveat:
            lines.append(self.caveat)
        if self.noted:
            lines.append("Also mentioned (not searched yet): " + "; ".join(self.noted))
        return "\n".join(lines)


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _index_location(memex: Memex) -> str | None:
    """Where this memex's index lives (a SQLite path; None for a PostgreSQL store, whose URL
    is configuration, not session state)."""
    settings = memex.settings
    if getattr(settings, "store_url", None):
        return None
    return str(Path(settings.index_path).expanduser().resolve())


def session_boundary(session: str, state_dir: Path | None = None) -> dict[str, Any]:
    """The memex, index and roots a recall session was started with, read from its state
    alone (``opencortex recall --session ID --reply …`` opens that memex, not the default)."""
    if not session or not all(c.isalnum() or c == "-" for c in session):
        raise RecallError(f"not a recall session id: {session!r}")
    if state_dir is None:
        from ..config import load_settings

        state_dir = Path(load_settings().state_dir) / "recall"
    try:
        st = RecallState.from_dict(json.loads((state_dir / f"{session}.json")
                                              .read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise UnknownRecallSession(f"no recall session {session!r} (start one with "
                          "`opencortex recall CUE`)") from None
    except ValueError as e:
        raise RecallError(f"recall session {session!r} is unreadable: {e}") from None
    return {"memex": st.memex, "index": st.index, "roots": st.roots}


def _leads_out(root: Path) -> bool:
    """Does a ``.git`` inside the memex (a ``gitdir:`` file, a symlink) lead to a git
    directory outside it?  Then the repository is not the memex's own -- a sync peer can
    plant that pointer -- and recall reads it only when ``[recall] sources`` names it."""
    from ..guard.gitrepo import git_dirs

    top = root.resolve()
    for where, g in git_dirs(top):
        w = where.resolve()
        if (w == top or top in w.parents) and not (g == top or top in g.parents):
            return True
    return False


def within(path: str | Path, roots: Iterable[Root]) -> bool:
    """Is ``path`` one of ``roots`` or inside one (after resolving links)?"""
    try:
        p = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    for r in roots:
        top = Path(r.path)
        if p == top or top in p.parents:
            return True
    return False


class Recall:
    """The recall engine over one memex (its index store holds the record index)."""

    def __init__(self, memex: Memex, roots: list[Root] | None = None, *,
                 defaults: bool | None = None, state_dir: Path | None = None,
                 gateway: Gateway | Literal[False] | None = None) -> None:
        self.memex = memex
        self._gateway = gateway
        self._embedder: Any = None
        self.semantic_note: str | None = None
        settings = memex.settings
        cfg = settings.recall
        if defaults is None:
            defaults = cfg.defaults
        self.given = list(roots or [])
        self.base_roots = self._base_roots(self.given, cfg, defaults)
        self.state_dir = Path(state_dir or Path(settings.state_dir) / "recall")
        self.progress: Any = None  # called (done, total) while a refresh reads many files
        self.narrow = False
        """A client's engine (``narrowed``): every turn searches only inside
        ``base_roots``, whatever the session's state holds -- the roots of a session the
        person started, a wider search admitted in it (a transcript's ``cwd`` chose it)."""
        self.hide: Callable[[Iterable[str]], bool] | None = None
        """Set by ``opencortex.access`` for a client that may not see private notes:
        note records whose tags it is true for are outside every boundary."""

    @property
    def gateway(self) -> Gateway | None:
        """The model gateway when one is configured (it may read the cue and phrase the
        story), else None: recall is complete without it."""
        if self._gateway is None:
            from ..llm import gateway_from_settings

            gw = gateway_from_settings(self.memex.settings)
            self._gateway = gw if gw.configured else False
        return self._gateway or None

    @property
    def embedder(self) -> Any:
        """The sentence embedder for the semantic reading of cues and records, or None when
        it cannot load (recall then runs on words alone and says so)."""
        if self._embedder is None:
            try:
                self._embedder = _shared_embedder(getattr(self.memex.settings, "embedder",
                                                          None))
            except Exception as e:  # not installed, bad spec, server down: words only
                self.semantic_note = f"semantic reading unavailable ({e}); words only"
                self._embedder = False
        return self._embedder or None

    def refresh(self, embed: bool = True) -> Any:
        """Bring the record index up to date for every base root (``recall --index-only``),
        including the vectors of every record gist.  ``seconds`` is the whole of it."""
        t0 = time.perf_counter()
        self.memex.sync()
        index = RecordIndex.for_memex(self.memex)
        with _records_lock(self.memex):
            summary = index.refresh(self.base_roots, self.memex, self.progress,
                                    archive_of(self.memex))
        emb = self.embedder if embed else None
        if emb is not None:
            t1 = time.perf_counter()
            summary.embedded = index.embed_pending(emb, progress=self.progress)
            summary.embed_seconds = time.perf_counter() - t1
        summary.seconds = time.perf_counter() - t0
        return summary

    # -- roots ---------------------------------------------------------------------------
    @classmethod
    def narrowed(cls, memex: Memex, roots: list[Root], **kw: Any) -> Recall:
        """The engine for a client that is not the person: ``roots`` may only narrow to
        places inside the person's boundary (the memex, its repository, ``[recall]
        sources`` and the default transcript folders), never add one (OutsideBoundary)."""
        eng = cls(memex, None, **kw)
        eng.narrow = True
        for r in roots:
            if not within(r.path, eng.base_roots):
                raise OutsideBoundary(
                    f"recall reads only what the person configured ([recall] sources, the "
                    f"memex and its repository); {r} is not one of them — add it to "
                    "[recall] sources in the config to read it")
        return eng

    def _base_roots(self, given: list[Root], cfg: RecallSettings, defaults: bool) -> list[Root]:
        root = str(Path(self.memex.root))
        # the agent's own records: their folder, and the memex while it still holds
        # records of the old layout (until `opencortex sessions migrate`)
        folder = self.memex.settings.sessions_path
        roots = [Root("opencortex", str(folder))]
        old = Path(root) / "sessions"
        if old.is_dir() and old.resolve() != folder.resolve():
            roots.append(Root("opencortex", str(old)))
        roots.append(Root("notes", root))
        top = gitsrc.toplevel(root)
        if top is not None and not _leads_out(Path(root)):
            roots.append(Root("git", str(top)))
        for spec in cfg.sources:
            roots.append(parse_source(spec.strip()))
        roots += given
        if defaults:
            for kind, src in SOURCES.items():
                if kind == "opencortex":
                    continue
                for p in src.default_roots():
                    if Path(p).is_dir():
                        roots.append(Root(kind, str(Path(p).resolve())))
        return list(dict.fromkeys(roots))

    # -- sessions ------------------------------------------------------------------------
    def _path(self, session: str) -> Path:
        if not (0 < len(session) <= 64 and session.isascii()
                and all(c.isalnum() or c == "-" for c in session)):
            raise RecallError(f"not a recall session id: {session[:80]!r} (1-64 of A-Z a-z "
                              "0-9 -, as a recall's first round returned it)")
        return self.state_dir / f"{session}.json"

    def load(self, session: str) -> RecallState:
        path = self._path(session)
        try:
            return RecallState.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise UnknownRecallSession(f"no recall session {session!r} (start one with "
                              "`opencortex recall CUE`)") from None
        except ValueError as e:
            raise RecallError(f"recall session {session!r} is unreadable: {e}") from None

    def _save(self, st: RecallState) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path = self._path(st.session)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(st.to_dict(), ensure_ascii=False, indent=1),
                       encoding="utf-8")
        os.replace(tmp, path)

    # -- the dialogue ----------------------------------------------------------------------
    def start(self, text: str, *, invoked: bool = True, previous: str | None = None,
              now: dt.datetime | None = None, conversation: str | None = None) -> Round:
        """Begin a recall on ``text`` (``invoked``: the person asked for recall by name —
        /recollect, ``opencortex recall``; otherwise it runs only on an empty intention).
        ``conversation``: the id of the OpenCortex conversation this recall runs in; its
        own record is the present, not the past, and is never searched."""
        _short(text)
        session = dt.datetime.now().strftime("%Y%m%d") + "-" + secrets.token_hex(4)
        bound, noted = bind(text, previous)
        on, reason = activation(text, invoked=invoked)
        if not on:
            return Round(session, "not_activated", reason=reason)
        st = RecallState.new(
            session, now=now.isoformat() if now else None,
            roots=[str(r) for r in self.base_roots],
            # the boundary travels with the session: a reply needs no flags again
            memex=str(self.memex.root), index=_index_location(self.memex),
            noted=noted, activation=reason, conversation=conversation,
            withheld=self.hide is not None)
        if bound:
            st.turns.append({"origin": "person", "text": bound, "role": "cue"})
        with _records_lock(self.memex):
            rnd = self._pass(st)
        self._save(st)
        return rnd

    def reply(self, session: str, text: str | None) -> Round:
        """The person's next utterance in ``session`` (None or blank: the round holds).
        Turns of one session run one at a time: a pass lets go of the memex lock while its
        model runs (``locking.slow_work``), and its state is read, changed and saved whole."""
        _short(text or "")
        with _turn_lock(self._path(session)):
            return self._reply(session, text)

    def _reply(self, session: str, text: str | None) -> Round:
        st = self.load(session)
        if self.hide is not None and st.withheld is not True:
            # its saved rounds (presented story, searched) may hold private notes; a reply
            # replays them without a pass, so this client is told no such session exists
            raise UnknownRecallSession(f"no recall session {session!r} (start one with "
                                       "`opencortex recall CUE`)")
        if st.closed:
            raise RecallError(f"recall {session} is closed ({st.state}); start a new one")
        # sources named again (or newly) on a reply widen the stored boundary, never narrow it
        st.roots = list(dict.fromkeys(st.roots + [str(r) for r in self.given]))
        presented = st.presented is not None
        offered = st.offered is not None
        reading = read_answer(text, presented=presented, offered=offered)
        if reading == "silent":
            return Round(session, "holding", cue=st.trace[-1]["cue"] if st.trace else None)
        assert text is not None
        st.turns.append({"origin": "person", "text": text, "role": reading})
        if reading == "identified":
            rnd = self._identified(st, text)
        elif reading in ("stopped", "declined"):
            st.state = "stopped"
            last = st.trace[-1] if st.trace else {}
            rnd = Round(session, "stopped", cue=last.get("cue"), searched=last.get("searched"),
                        qualifications=last.get("scope_qualifications", []))
            st.trace.append({"state": "stopped", "turn": text})
        else:
            if reading == "admitted" and st.offered is not None:
                st.admitted.append(st.offered)
            st.added_to_cue = True
            with _records_lock(self.memex):
                rnd = self._pass(st)
        self._save(st)
        return rnd

    def _identified(self, st: RecallState, text: str) -> Round:
        p = st.presented
        assert p is not None  # read_answer says "identified" only when one was presented
        st.state = "identified"
        recalled = {
            "recognizable": p["recognizable"], "story": p["story"],
            "excerpts": [c["cite"] for c in p["story"]],
            "qualifications": p["qualifications"], "searched": p["searched"],
            "identified_by": text, "identified_at": len(st.turns) - 1,
            "caveat": CAVEAT,
            # the convergence trace: from the first cue through each correction to the close
            "trace": [{"state": t["state"], "cue": (t.get("cue") or {}).get("meant"),
                       "whole": (t.get("cue") or {}).get("whole")} for t in st.trace]
                     + [{"state": "identified", "cue": text, "whole": None}],
        }
        recalled["text"] = recalled_text(recalled)
        st.trace.append({"state": "identified", "turn": text})
        return Round(st.session, "identified", cue=p["cue"], recognizable=p["recognizable"],
                     story=p["story"], records=p.get("records") or by_record(p["story"])[0],
                     qualifications=p["qualifications"], searched=p["searched"],
                     recalled=recalled, caveat=CAVEAT)

    # -- a pass --------------------------------------------------------------------------
    def _now(self, st: RecallState) -> dt.datetime:
        if st.now:
            return dt.datetime.fromisoformat(st.now)
        return dt.datetime.now(dt.UTC)

    def _boundary(self, st: RecallState, cue: Cue) -> tuple[list[Root], bool]:
        roots = [_root(s) for s in st.roots]
        widen_time = False
        for exp in st.admitted:
            if exp["kind"] == "time":
                widen_time = True
            elif exp["kind"] == "roots":
                roots += [_root(s) for s in exp["roots"]]
        for place in cue.places:
            # a cue (the person's words, a transcript quoted into them, a model's reading)
            # may narrow to a place inside the boundary, never name a new root
            p = Path(place).expanduser()
            if not within(p, [_root(s) for s in st.roots]):
                continue
            top = gitsrc.toplevel(p)
            if top is not None:
                roots.append(Root("git", str(top)))
            for kind, src in SOURCES.items():
                if p.is_dir() and src.discover([p]):
                    roots.append(Root(kind, str(p.resolve())))
        if self.narrow:
            roots = [r for r in roots if within(r.path, self.base_roots)]
        return list(dict.fromkeys(roots)), widen_time

    def _pass(self, st: RecallState) -> Round:
        t0 = time.perf_counter()
        session = st.session
        now = self._now(st)
        person = [t["text"] for t in st.turns
                  if t["origin"] == "person" and t["role"] in ("cue", "admitted")]
        cue = read_cue(person, now)
        gw = self.gateway if person else None
        if gw is not None:
            _model_reading(gw, cue, person)
        roots, widen_time = self._boundary(st, cue)
        memex = self.memex
        if any(r.kind == "notes" for r in roots):
            memex.sync()
        index = RecordIndex.for_memex(memex)
        refreshed = index.refresh(roots, memex, self.progress, archive_of(memex))
        window = None if (widen_time or cue.time is None) else (
            cue.time.start.timestamp(), cue.time.end.timestamp())
        scope, out_n, out_chars = index.scope(roots, window)
        scope -= index.present_ids(st.conversation, st.created)
        if self.hide is not None:
            scope -= _hidden_notes(index, memex, self.hide)
        narrowed = narrow(index, scope, person, cue)
        scope = narrowed.scope
        terms = cue.terms
        deep = any(e["kind"] == "deep" for e in st.admitted)
        hits = index.search(terms, scope) if terms else []
        if deep:
            hits = _deepen(hits, index, scope, cue, archive_of(memex))
        scorer, embedded_now = None, 0
        emb = self.embedder if person else None
        if emb is not None:
            embedded_now = index.embed_pending(emb, limit=PASS_EMBED_LIMIT,
                                               first=[h.record for h in hits[:PASS_EMBED_LIMIT]])
            qv = emb.embed([cue_text(person)])[0]
            hits = _fuse(hits, index.dense(qv, scope, emb.name, emb.dim, k=DENSE_K), index)

            def scorer(texts: list[str]) -> list[float]:
                return [float(x) for x in emb.embed(texts) @ qv]
        if cue.undone and hits:
            hits = _reverts_lead(hits, index, scope)
        cands = group(hits, cue, index, scope) if hits else []
        leading, opened, tried = self._lead(cands, hits, cue, scorer, narrowed.chosen)
        searched = self._searched(roots, index, scope, window, cue, out_n, hits, tried,
                                  refreshed, time.perf_counter() - t0, st)
        searched["narrowed"] = narrowed.to_dict()
        searched["semantic"] = (self.semantic_note if emb is None and person else
                                {"model": emb.name, "embedded_now": embedded_now,
                                 "without_vectors": index.still_pending}
                                if emb is not None else None)
        scope_q = index_failures(index, scope)
        rec = {"cue": cue.to_dict(), "searched": searched, "scope_qualifications": scope_q}
        noted = st.noted
        if leading is not None:
            story = [c.to_dict() for o in opened for c in o.claims]
            if gw is not None:
                story = _model_phrasing(gw, cue, opened, story, searched, self.memex)
            records, story = by_record(story)
            recog = {"whole": leading.whole, "joins": leading.joins,
                     "members": [o.member_dict() for o in opened]}
            adjacent = [c.to_dict() for c in cands if c is not leading][:3]
            quals = qualifications_of(opened)
            st.presented = {"recognizable": recog, "story": story, "records": records,
                            "qualifications": quals, "searched": searched,
                            "cue": cue.to_dict()}
            st.offered = None
            st.trace.append({**rec, "state": "presented", "leading": leading.describe()})
            return Round(session, "presented", cue=cue.to_dict(), recognizable=recog,
                         story=story, records=records, adjacent=adjacent,
                         qualifications=quals, searched=searched, caveat=CAVEAT, noted=noted)
        st.presented = None
        if not st.added_to_cue:
            st.offered = None
            st.trace.append({**rec, "state": "asked"})
            return Round(session, "asked", cue=cue.to_dict(), searched=searched,
                         qualifications=scope_q, question=QUESTION, noted=noted)
        expansion = self._expansion(st, roots, index, scope, window, out_n, out_chars, cue,
                                    hits)
        if expansion is not None:
            st.offered = expansion
            st.trace.append({**rec, "state": "offered", "expansion": expansion})
            return Round(session, "offered", cue=cue.to_dict(), searched=searched,
                         qualifications=scope_q,
                         expansion={"reach": expansion["reach"], "cost": expansion["cost"]},
                         noted=noted)
        st.offered = None
        st.state = "unresolved"
        st.trace.append({**rec, "state": "unresolved"})
        return Round(session, "unresolved", cue=cue.to_dict(), searched=searched,
                     qualifications=scope_q, noted=noted)

    def _lead(self, cands: list[Candidate], hits: list[Hit], cue: Cue, scorer: Scorer | None,
              chosen: set[int] | None = None
              ) -> tuple[Candidate | None, list[Opened], list[dict[str, Any]]]:
        """The leading candidate: the first (of three) whose opened records carry a story
        that reaches enough of the cue — by its words, by meaning (its record's or a
        claim's), or by the people or files the person named (``chosen``: the records
        those filters kept)."""
        by_id = {h.record.id: h for h in hits}
        terms = cue.terms
        need = min(len(terms), 2)
        tried: list[dict[str, Any]] = []
        for cand in cands[:3]:
            sem = max((by_id[m.id].semantic for m in cand.members if m.id in by_id),
                      default=0.0)
            named = chosen is not None and any(m.id in chosen for m in cand.members)
            near = sem >= SEMANTIC_CANDIDATE or named or (
                bool(cand.matched) and sem >= SEMANTIC_AGREE)
            if len(cand.matched) < need and not near:
                continue
            ops = open_candidate(cand, cue, self.memex, scorer=scorer, hide=self.hide)
            covered = {t for o in ops for c in o.claims for t in c.terms}
            # a presented record is named by its title (a note's outline, a subject)
            names = stems(" ".join(m.title or "" for m in cand.members))
            covered |= {t for t in terms if term_matches(t, names)}
            tried.append({"candidate": cand.describe(),
                          "claims": sum(len(o.claims) for o in ops),
                          "not_opened": [{"locator": o.locator, "why": o.why}
                                         for o in ops if not o.opened]})
            if any(o.claims for o in ops) and (
                    len(covered) >= need or near
                    or any(c.semantic for o in ops for c in o.claims)):
                return cand, ops, tried
        return None, [], tried

    def _searched(self, roots: list[Root], index: RecordIndex, scope: set[int],
                  window: tuple[float, float] | None, cue: Cue, out_n: int, hits: list[Hit],
                  tried: list[dict[str, Any]], refreshed: Any, seconds: float,
                  st: RecallState) -> dict[str, Any]:
        per_root = {f"{s}:{r}": n for s, r, n, _ in index.roots_indexed()}
        root_rows = [{"root": str(r), "records": per_root.get(str(r), 0)} for r in roots]
        win = cue.time.to_dict() if (window and cue.time) else None
        text = (f"{len(scope)} records in {len(roots)} roots"
                + (f", within {cue.time.phrase} ({win['from'][:10]} – {win['to'][:10]})"
                   if win and cue.time else "")
                + (f"; {out_n} records outside that time left out" if win else "")
                + f"; terms: {', '.join(cue.terms) or '(none)'}; {len(hits)} records matched"
                + (f"; opened: {', '.join(t['candidate'] for t in tried)}" if tried else ""))
        return {"roots": root_rows, "window": win, "records_in_scope": len(scope),
                "records_outside_window": out_n if win else 0, "terms": cue.terms,
                "matched": len(hits), "opened": tried,
                "admitted": [e["reach"] for e in st.admitted],
                "refresh": {"files_read": refreshed.files_read,
                            "commits_added": refreshed.commits_added,
                            "failed": refreshed.failed[:20]},
                "seconds": round(seconds, 3), "text": text}

    def _expansion(self, st: RecallState, roots: list[Root], index: RecordIndex,
                   scope: set[int], window: tuple[float, float] | None, out_n: int,
                   out_chars: int, cue: Cue, hits: list[Hit]) -> dict[str, Any] | None:
        """The wider search still worth offering, or None: older/other times first, then
        roots the records point at but the boundary does not hold, then deeper reads."""
        kinds = {e["kind"] for e in st.admitted}
        if window is not None and out_n and "time" not in kinds:
            secs = out_chars / _THROUGHPUT + out_n * 0.0005
            assert cue.time is not None
            return {"kind": "time", "reach": f"records outside {cue.time.phrase} "
                    f"({out_n} records in the same roots)",
                    "cost": f"{out_n} records, {_fmt_bytes(out_chars)} of indexed text, "
                    f"about {max(secs, 0.1):.1f} s"}
        if "roots" not in kinds:
            have = {(r.kind, r.path) for r in roots}
            extra: list[str] = []
            n_commits = 0
            # the directories of sessions that matched the cue first, then any others
            cwds = list(dict.fromkeys(
                [h.record.cwd for h in hits if h.record.cwd and h.record.kind == "session"]
                + [r[0] for r in index.q("SELECT DISTINCT cwd FROM rec_records WHERE cwd "
                                         "IS NOT NULL AND kind = 'session' LIMIT 50")]))[:50]
            for cwd in cwds:
                if self.narrow and not within(cwd, self.base_roots):
                    continue  # a client is offered nothing it could not search
                top = gitsrc.toplevel(cwd)
                if top is not None and ("git", str(top)) not in have and \
                        f"git:{top}" not in extra:
                    try:
                        n_commits += int(gitsrc.run(top, "rev-list", "--count", "--branches",
                                                     "HEAD", timeout=20).strip() or 0)
                    except (gitsrc.GitError, ValueError):
                        continue
                    extra.append(f"git:{top}")
            if extra:
                return {"kind": "roots", "roots": extra,
                        "reach": f"the git histories of {len(extra)} repositories your "
                        f"sessions ran in ({', '.join(e[4:] for e in extra[:3])})",
                        "cost": f"{n_commits} commits, about "
                        f"{max(0.2, n_commits * 0.0004):.1f} s"}
        if "deep" not in kinds:
            rows = index.q("SELECT id, omitted FROM rec_records WHERE omitted > 0")
            part = [(i, om) for i, om in rows if i in scope]
            if part:
                total = sum(om for _, om in part)
                return {"kind": "deep", "reach": f"the full text of {len(part)} long records "
                        "the index holds only in part",
                        "cost": f"{len(part)} records, {_fmt_bytes(total)} more text, about "
                        f"{max(0.1, total / _THROUGHPUT):.1f} s"}
        return None


def _model_reading(gw: Gateway, cue: Cue, person: list[str]) -> None:
    """Let the configured model add its reading of the cue: the whole (unless the person
    named one) and search words (kept apart as ``synonym`` axes)."""
    from .cue import Axis, whole_of
    from .phrase import model_cue_terms

    whole, extra = model_cue_terms(gw, person)
    if whole and not any(whole_of(t) for t in person):
        cue.whole = whole  # the person's own words about the whole win
    have = {t.lower() for t in cue.terms}
    cue.axes += [Axis("synonym", t) for t in extra if t not in have and t not in cue.excluded]


def _model_phrasing(gw: Gateway, cue: Cue, opened: list[Opened], story: list[dict[str, Any]],
                    searched: dict[str, Any], memex: Memex | None = None
                    ) -> list[dict[str, Any]]:
    """The story as the model phrases it, each claim verified against its excerpt. Notes
    may be private: with one among the members, only a local model sees the excerpts; a
    private session record or the history of a private memex file marks the prompt private
    (``Message.private``: the gateway sends it to local providers only, unless
    ``remote_ok``), and the gateway's content check withholds private lines besides."""
    from .phrase import phrase_story

    local = all(getattr(p, "local", False) for p in gw.providers)
    if not local and any(o.member is not None and o.member.kind == "note" for o in opened):
        return story
    claims = [c for o in opened for c in o.claims]
    private = not local and memex is not None and _opened_private(opened, memex)
    story, dropped = phrase_story(gw, cue.meant, story, [c.text for c in claims],
                                  [c.origin for c in claims], private=private)
    searched["model_claims_dropped"] = dropped
    return story


def _opened_private(opened: list[Opened], memex: Memex) -> bool:
    """Provenance: whether what a pass opened holds private material (unless the person
    set ``remote_ok``): a session record with a private entry (judged by its own bytes),
    or the span history of a memex file that holds private notes."""
    from ..guard.policy import policy_of
    from ..guard.privacy import is_private
    from .ground import private_history, record_withheld

    policy = policy_of(memex.settings.guard)
    if policy.remote_ok:
        return False

    def test(tags: Iterable[str]) -> bool:
        return is_private(list(tags), policy)

    archive = None
    for o in opened:
        m, rec = o.member, o.record
        if m is None:
            if rec is not None and private_history(rec.root, rec.session_id, memex):
                return True
        elif m.kind not in ("commit", "note"):
            archive = archive if archive is not None else archive_of(memex)
            if record_withheld(m.file, m.source, memex, test, archive):
                return True
    return False


MAX_CUE = 4000
"""Characters in one cue or reply: what a person says of a half-remembered thing; a longer
one would make every pass scan the archive for thousands of terms."""


def _short(text: str) -> None:
    if len(text) > MAX_CUE:
        raise RecallError(f"the cue is {len(text)} characters; say it in at most {MAX_CUE}")


def _hidden_notes(index: RecordIndex, memex: Memex, hide: Callable[[Iterable[str]], bool]) -> set[int]:
    """Record ids of the notes ``hide`` withholds (and of notes no longer indexed)."""
    rows = list(index.q("SELECT id, session_id FROM rec_records WHERE kind = 'note'"))
    out: set[int] = set()
    if rows:
        nodes = memex.store.nodes_by_keys([k for _, k in rows], with_body=False)
        out = {i for i, k in rows if k not in nodes or hide(nodes[k].tags)}
    return out | _hidden_memex_records(index, memex, hide)


def _hidden_memex_records(index: RecordIndex, memex: Memex,
                          hide: Callable[[Iterable[str]], bool]) -> set[int]:
    """Session records that hold an entry ``hide`` withholds: a turn of a conversation
    that could see private notes, or that carried private text, is tagged private, and the
    whole conversation is withheld with it.  A record file inside the memex, indexed and
    no symlink, is judged by the memex index; any other (the agent's records outside the
    memex, a symlink, a deleted original read from the archive) by its own bytes
    (``ground.record_withheld``)."""
    from ..memory.query import Predicate
    from .ground import record_withheld
    from .sources.opencortex_sessions import SOURCE as SESSIONS

    root = Path(memex.root).resolve()
    rows = list(index.q("SELECT id, file, source FROM rec_records WHERE kind <> 'note'"))
    out: set[int] = set()
    verdict: dict[str, bool] = {}
    archive = None
    for rid, file, source in rows:
        rel = memex_relpath(file, root)
        if rel is None and source != SESSIONS:
            continue  # another tool's transcript outside the memex: no Org tags to honour
        if file not in verdict:
            nodes = [] if rel is None or os.path.islink(file) else [
                n for n in memex.store.find([Predicate("file", (rel,))]) if n.file == rel]
            if nodes:
                verdict[file] = any(hide(n.tags) for n in nodes)
            else:
                archive = archive if archive is not None else archive_of(memex)
                verdict[file] = record_withheld(file, source, memex, hide, archive)
        if verdict[file]:
            out.add(rid)
    return out


def embed_pending_records(memex: Memex, limit: int) -> int:
    """Embed up to ``limit`` record gists the record index holds without a vector — what a
    daemon's heartbeat does in the background, so its recalls' passes find most of their
    records embedded already.  0 when no record was ever indexed or no model loads."""
    index = RecordIndex.for_memex(memex)
    if limit <= 0 or not index.has_records():
        return 0
    emb = Recall(memex).embedder
    return index.embed_pending(emb, limit=limit) if emb is not None else 0


@functools.lru_cache(maxsize=4)
def _shared_embedder(spec: str | None) -> Any:
    """One loaded model per spec for the process (a daemon answers many recalls); a load
    that fails raises and is not cached, so it is tried again next time."""
    from ..embed import get_embedder

    emb = get_embedder(spec)
    emb.embed(["warm"])  # fail here, not mid-pass
    return emb


def cue_text(person: list[str]) -> str:
    """What the semantic reading embeds: the person's words, time phrases left out (a
    record does not say "a few weeks ago")."""
    from .cue import without_time_words

    return " ".join(without_time_words(t) for t in person)


def _fuse(hits: list[Hit], dense: list[tuple[int, float]], index: RecordIndex) -> list[Hit]:
    """Keyword and semantic hits in one order by reciprocal rank fusion: a record scores
    ``1/(RRF_K + rank)`` in each list that holds it (the keyword list by its BM25 order, the
    semantic one by its best view's cosine, only above a floor: below it, meaning is
    noise).  Ranks, not raw scores: BM25 and cosine live on different scales, and one
    record far ahead in either list should lead without drowning the other's evidence."""
    by_id = {h.record.id: Hit(h.record, 1.0 / (RRF_K + r), h.matched)
             for r, h in enumerate(hits)}
    missing = [i for i, _ in dense if i not in by_id]
    rows = index.get(missing) if missing else {}
    for r, (i, cos) in enumerate(dense):
        h = by_id.get(i)
        if h is None:
            if i not in rows:
                continue
            h = by_id[i] = Hit(rows[i], 0.0, [])
        h.semantic = cos
        if cos > SEMANTIC_FLOOR:
            h.score += 1.0 / (RRF_K + r)
    return sorted(by_id.values(), key=lambda h: (-h.score, h.record.id))


_REVERTING = re.compile(r"^\W*(?:revert|back(?:ed|s)? out|undo|roll(?:ed|s)? back)\b|"
                        r"\b(?:revert(?:s|ed)?|back(?:ed|s)? out|undo(?:es)?|roll(?:ed|s)? "
                        r"back)\s+(?:the|a|an|my|our|this|that|commit|change|pr|#)", re.I)
"""A commit subject that says it takes a change back: git's 'Revert "…"', a conventional
``revert!(scope): …`` / ``revert: …``, "Back out the …", "Undo …"."""


def _reverts_lead(hits: list[Hit], index: RecordIndex, scope: set[int], top: int = 10
                  ) -> list[Hit]:
    """For a cue about a change taken back: a leading commit whose subject says it takes
    something back ranks first (in its order among such), and the commit that reverts one
    of the leading commits ranks just above it (git's revert names the commit it reverts,
    "This reverts commit <sha>", or its subject, 'Revert "<subject>"')."""
    by_id = {h.record.id: h for h in hits}
    lead = hits[0].score
    for n, h in enumerate(hits[:top]):  # a commit that says it takes something back
        if h.record.kind == "commit" and _REVERTING.search(h.record.title or ""):
            h.score = max(h.score, lead + 1e-3 - n * 1e-6)
    for h in [h for h in hits[:top] if h.record.kind == "commit"]:
        found = index._fts_ids(False, h.record.session_id) & scope
        found |= {i for (i,) in index.q("SELECT id FROM rec_records WHERE kind = 'commit' "
                                        "AND title = ?", (f'Revert "{h.record.title}"',))
                  if i in scope}
        found.discard(h.record.id)
        rows = index.get(sorted(found - set(by_id)))
        for i in sorted(found):
            rev = by_id.get(i)
            if rev is None and i in rows:
                rev = by_id[i] = Hit(rows[i], 0.0, [])
            if rev is not None:
                rev.score = max(rev.score, h.score + 1e-3)
                rev.matched = list(dict.fromkeys(rev.matched + h.matched))
    return sorted(by_id.values(), key=lambda x: (-x.score, x.record.id))


def _root(spec: str) -> Root:
    kind, _, path = spec.partition(":")
    return Root(kind, path)


def _deepen(hits: list[Hit], index: RecordIndex, scope: set[int], cue: Cue,
            archive: Archive | None = None) -> list[Hit]:
    """With a deeper read admitted: records the index holds only in part are opened in full
    and scored by the cue terms their whole text carries."""
    from .find import stems, term_matches
    from .ground import open_session

    have = {h.record.id for h in hits}
    ids = [i for (i,) in index.q("SELECT id FROM rec_records WHERE omitted > 0 "
                                          "AND kind = 'session'") if i in scope]
    rows = index.get(ids)
    extra: list[Hit] = []
    for i, row in rows.items():
        rec = open_session(row, archive)
        if rec is None:
            continue
        words = stems("\n".join(t.text for t in rec.turns
                                 if t.origin in ("person", "assistant", "tool")))
        matched = [t for t in cue.terms if term_matches(t, words)]
        if matched and i not in have:
            extra.append(Hit(row, float(len(matched)), matched))
    return sorted(hits + extra, key=lambda h: -h.score)


def index_failures(index: RecordIndex, scope: set[int], limit: int = 20
                   ) -> list[dict[str, Any]]:
    """Capture evidence for records in scope whose read was not whole: these are causes a
    search may have missed something, never proof of an absence."""
    out: list[dict[str, Any]] = []
    for i, loc, receipt in index.q("SELECT id, locator, receipt FROM rec_records "
                                            "WHERE receipt NOT LIKE '%\"succeeded\"%' OR "
                                            "receipt LIKE '%\"skipped_lines\": _%'"):
        if i not in scope:
            continue
        r = json.loads(receipt)
        bits = []
        if r.get("state") not in ("succeeded", None):
            bits.append(f"read {r['state']}" + (f" ({r['detail']})" if r.get("detail") else ""))
        if r.get("skipped_lines"):
            bits.append(f"{r['skipped_lines']} lines failed to parse")
        if bits:
            out.append({"locator": loc, "finding": "; ".join(bits),
                        "reach": {"extractor": r.get("extractor"), "state": r.get("state"),
                                  "omitted": r.get("omitted_chars")},
                        "scan": {"skipped_lines": r.get("skipped_lines"),
                                 "unverified_person_turns": r.get("unverified_person_turns"),
                                 "omitted_chars": r.get("omitted_chars")}})
            if len(out) >= limit:
                break
    return out


def recalled_text(recalled: dict[str, Any]) -> str:
    """The recalled context as Org text other skills and models can take in."""
    rz = recalled["recognizable"]
    lines = [f"* Recalled {rz['whole']} (identified by the person: "
             f"“{recalled['identified_by']}”)"]
    for m in rz["members"]:
        lines.append(f"- member: {m['locator']} — reopen: {m['handle']}"
                     + ("" if m["opened"] else " (did not open)"))
    if rz.get("joins"):
        lines.append("- joined by: " + "; ".join(rz["joins"]))
    lines.append("** Story (each line quotes an opened record)")
    for c in recalled["story"]:
        lines.append(f"- {c['text']} [{c['cite']['locator']}]")
    for q in recalled["qualifications"]:
        lines.append(f"- qualification: {q['locator']}: {q['finding']}")
    lines.append(f"- searched: {recalled['searched'].get('text', '')}")
    lines.append(f"- {recalled['caveat']}")
    return "\n".join(lines)
