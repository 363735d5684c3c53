"""The loop: perceive → reason → act, feeding each action's feedback back in.

Async sensors (user input, chat, commands, delegation) run on a bounded worker pool off
the caller's thread; sync sensors (heartbeat, buffer/point updates, interrupt, tool
output, loop errors) run one at a time in arrival order on one thread.  Depth is bounded;
an exception inside a signal is logged, that signal's memex writes are rolled back, and a
loop-error feedback is injected at most twice; nothing one signal does stops the loop.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..access import Access
from ..act.registry import ActEnv
from ..guard import GuardContext
from ..guard.egress import Carried, StreamGate, Taint, check
from ..memex import Memex
from ..org.timestamps import parse_timestamp
from ..sessions.ids import new_session_id, validate_session_id
from ..signal import (
    ASYNC_SENSORS,
    NO_CONVERSATION,
    SYNC_SENSORS,
    Delegation,
    Signal,
    SignalError,
    conversation,
    inject,
)
from ..skills.base import Action, Context
from ..skills.registry import SkillRegistry
from ..skills.save import remember
from .agent_requests import find_requests
from .delegation import run_intents
from .logs import get_logger

if TYPE_CHECKING:
    from ..recall.archive import ArchiveUpkeep

__all__ = ["MAX_DEPTH", "Kernel", "KernelStats"]

MAX_DEPTH = 10
MAX_LOOP_ERRORS = 2
Reply = Callable[[str, Any], None]


@dataclass(slots=True)
class KernelStats:
    received: int = 0
    processed: int = 0
    failed: int = 0
    dropped: int = 0
    replies: int = 0
    latencies: list[tuple[str, float]] = field(default_factory=list)
    """(sensor, seconds from the start of processing to the end of its chain)."""


class Kernel:
    def __init__(self, memex: Memex, registry: SkillRegistry | None = None,
                 reasoner: Any = None, guard: Any = None, recorder: Any = None,
                 workers: int = 4, record_sessions: bool = True) -> None:
        from ..guard import ApprovalQueue, Guard
        from ..guard.policy import policy_of
        from ..reason.reasoner import Reasoner

        self.memex = memex
        self.log, self.ring = get_logger(memex.settings.state_dir)
        if registry is None:  # a Runtime passes its one registry; this is for bare kernels
            from ..skills.default import default_registry

            registry = default_registry(memex.root)
        self.registry = registry
        self.reasoner = reasoner or Reasoner()
        self.approvals = ApprovalQueue()
        self.guard = guard or Guard(policy_of(memex.settings.guard),
                                    memex_root=memex.root, approvals=self.approvals)
        self.heartbeat_embed: int = 64
        """Nodes embedded per heartbeat in the background (0: none)."""
        self._reminded: set[str] = set()
        self._agent_inflight: set[str] = set()
        self.approval_timeout: float = 300.0
        """How long an "ask" action waits for the person (0: do not wait)."""
        if recorder is None and record_sessions:
            from ..sessions.recorder import SessionRecorder

            recorder = SessionRecorder.for_settings(memex.settings)
        self.recorder = recorder
        self.memex_lock = memex.lock
        """One connection to the index: every memex call from a worker holds this (the
        memex's own lock, so every gateway over this memex shares it)."""
        self.focus: str | None = None
        self.stats = KernelStats()
        self._accepting = True
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="oc-async")
        self._sync_q: queue.Queue[tuple[Signal, Future[Signal]] | None] = queue.Queue()
        self._sync_thread = threading.Thread(target=self._sync_loop, name="oc-sync",
                                             daemon=True)
        self._sync_thread.start()
        self._inflight: set[Future[Signal]] = set()
        self._idle: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self.embedding: Future[int] | None = None
        """The heartbeat's background embedding pass, while one runs (its node count)."""
        # through the kernel's attributes at call time (a test or gateway may wrap reply)
        self.act_env = ActEnv(memex, self.memex_lock, self.guard, self.registry,
                              self.registry.actuators, self._reply_late, self._batch_late)
        """What actuators get: the kernel's services, never its loop."""
        self._perceivers: dict[str, Callable[[Signal], None]] = {
            "buffer-update": self._perceive_buffer, "point-update": self._perceive_point,
            "heartbeat": self._heartbeat, "tool-output": self._perceive_tool_output,
            "loop-error": self._perceive_loop_error, "interrupt": self._perceive_interrupt}
        """sensor → what perceiving it does (other sensors: only focus and the record)."""
        self._reflexes: dict[str, Callable[[Signal], Action]] = {
            "tool-output": lambda s: Action("reply", {"text": _tool_reply(s.payload)},
                                            origin="tool-output"),
            "loop-error": lambda s: Action("reply", {"text": f"Sorry — that failed: {s.text}"},
                                           origin="loop-error")}
        """sensor → its action without reasoning (feedback the person is told about)."""

    @functools.cached_property
    def archive_upkeep(self) -> ArchiveUpkeep:
        """The transcript archive's pass, at most every [archive] interval, in the pool
        (built by the first heartbeat: a one-request kernel, as in ``ask``, never imports
        recall)."""
        from ..recall.archive import ArchiveUpkeep

        return ArchiveUpkeep(self.memex)

    def _reply_late(self, sig: Signal, text: str, data: Any = None) -> None:
        self.reply(sig, text, data)

    def _batch_late(self, sig: Signal) -> str:
        return self.batch_of(sig)

    @property
    def accepting(self) -> bool:
        """False once an interrupt or shutdown stopped intake: new stimuli are dropped."""
        return self._accepting

    # -- intake -------------------------------------------------------------------
    def submit(self, raw: dict[str, Any] | Signal) -> Future[Signal] | None:
        """Normalise and queue a stimulus; None when it was dropped (logged)."""
        try:
            sig = inject(raw)
        except SignalError as e:
            self.log.warning("dropped a raw message: %s", e)
            self.stats.dropped += 1
            return None
        self.stats.received += 1
        if not self._accepting:
            self.log.info("not accepting (shutting down): dropped %s", sig.summary())
            self.stats.dropped += 1
            return None
        if sig.sensor == "interrupt":
            self._accepting = False
        if not isinstance(sig.meta.get("taint"), Taint):
            sig.meta["taint"] = Taint()  # this stimulus's provenance (guard.egress)
        self._gate_stream(sig)
        fut: Future[Signal] = Future()
        if sig.sensor in ASYNC_SENSORS:
            fut = self._pool.submit(self.process, sig)
        elif sig.sensor in SYNC_SENSORS:
            self._sync_q.put((sig, fut))
        else:
            self.log.warning("unknown sensor %r: dropped %s", sig.sensor, sig.summary())
            self.stats.dropped += 1
            return None
        with self._lock:
            self._inflight.add(fut)
        fut.add_done_callback(self._done)
        return fut

    def _gate_stream(self, sig: Signal) -> None:
        """A model answer streamed to a sender that may not see private notes (``partial``)
        passes the egress check as a stream (``StreamGate``: whole lines, with the lines
        before them, and the chain's provenance), as its verified reply does whole."""
        send = sig.meta.get("partial")
        if not callable(send) or isinstance(getattr(send, "__self__", None), StreamGate):
            return
        acc = Access.for_signal(self.memex, sig.meta)
        if acc.sees_private:
            return
        sig.meta["partial"] = StreamGate(send, lambda: self.memex.private_prints().prints,
                                         sig.meta["taint"]).feed

    def _done(self, fut: Future[Signal]) -> None:
        with self._lock:
            self._inflight.discard(fut)
            due = self._idle if not self._inflight else []
            if due:
                self._idle = []
        for fn in due:
            self._run_idle(fn)

    def when_idle(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once no signal is in flight (now, if none is): what closes the memex
        under a request still running after a shutdown timed out (a slow model's late
        answer would otherwise touch a closed store)."""
        with self._lock:
            if self._inflight:
                self._idle.append(fn)
                return
        self._run_idle(fn)

    def _run_idle(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as e:  # a failing clean-up is logged, never a request's error
            self.log.error("idle callback failed: %s", e)

    def _sync_loop(self) -> None:
        while True:
            item = self._sync_q.get()
            if item is None:
                return
            sig, fut = item
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(self.process(sig))
                except BaseException as e:  # process() never raises; belt and braces
                    fut.set_exception(e)

    def ask(self, text: str, session: str | None = None, timeout: float = 120.0,
            source: str = "cli") -> list[str]:
        """Run one request through the whole pipeline; the replies it produced."""
        return [t for t, _ in self.ask_full(text, session, timeout, source)]

    def ask_full(self, text: str, session: str | None = None, timeout: float = 120.0,
                 source: str = "cli", partial: Callable[[str], None] | None = None
                 ) -> list[tuple[str, Any]]:
        """Like ``ask``, with each reply's structured data (intents, results, citations).
        ``partial`` gets a model answer's text as it streams (provisional; the replies
        returned are the answer)."""
        replies: list[tuple[str, Any]] = []

        def channel(t: str, data: Any = None) -> None:
            replies.append((t, data))

        session = validate_session_id(session) if session is not None else \
            new_session_id(source)
        meta: dict[str, Any] = {"source": source, "session": session, "reply": channel}
        if partial is not None:
            meta["partial"] = partial
        fut = self.submit({"payload": {"sensor": "user-input", "text": text}, "meta": meta})
        if fut is not None:
            try:
                fut.result(timeout=timeout)
            except TimeoutError:
                replies.append((f"(no answer within {timeout:g} s; the request was left "
                                "running)", None))
        return replies

    # -- the loop -------------------------------------------------------------------
    def process(self, signal: Signal) -> Signal:
        """Run a signal and its feedback chain to the end; never raises."""
        t0 = time.perf_counter()
        cur: Signal | None = signal
        root = signal
        while cur is not None:
            if cur.depth > MAX_DEPTH:
                self.log.warning("depth limit %d reached: dropped %s", MAX_DEPTH, cur.summary())
                cur.status = "dropped"
                self.stats.dropped += 1
                break
            try:
                self.perceive(cur)
                action = self.reason(cur)
                nxt = self.act(cur, action) if action is not None else None
                cur.status = "acted"
            except Exception as e:
                nxt = self._failed(cur, root, e)
            cur = nxt
        self.stats.processed += 1
        self.stats.latencies.append((signal.sensor, time.perf_counter() - t0))
        return signal

    def _failed(self, sig: Signal, root: Signal, e: Exception) -> Signal | None:
        self.stats.failed += 1
        sig.status = "failed"
        self.log.error("signal %s failed: %s: %s", sig.summary(), type(e).__name__, e)
        try:
            with self.memex_lock:
                undone = self.memex.undo_batch(self.batch_of(root))
            if undone:
                self.log.info("rolled back %d write(s) of %s", len(undone), root.summary())
        except Exception as e2:
            self.log.error("rollback of %s failed: %s", root.summary(), e2)
        if sig.errors >= MAX_LOOP_ERRORS or sig.sensor == "loop-error":
            return None
        fb = sig.feedback("loop-error", text=f"{type(e).__name__}: {e}", failed=sig.summary())
        fb.errors = sig.errors + 1
        return fb

    def batch_of(self, signal: Signal) -> str:
        return signal.meta.get("batch") or signal.meta.setdefault("batch", signal.id)

    # -- perceive -------------------------------------------------------------------
    def perceive(self, sig: Signal) -> None:
        handler = self._perceivers.get(sig.sensor)
        if handler is not None:
            handler(sig)
        if sig.foveal_focus is None:
            sig.foveal_focus = self.focus
        if sig.type == "request" and sig.depth == 0 and sig.sensor != "delegation":
            self._record(sig, "person", sig.text)
        sig.status = "perceived"

    def _perceive_buffer(self, sig: Signal) -> None:
        p = sig.payload
        with self.memex_lock:
            n = self.memex.index_text(p["file"], str(p.get("text", "")))
        self.log.info("re-indexed %s from its buffer (%d nodes)", p["file"], n)
        self._agent_headlines(sig)

    def _perceive_point(self, sig: Signal) -> None:
        p = sig.payload
        with self.memex_lock:
            node = (self.memex.resolve(p["id"]) if p.get("id") else
                    self.memex.node_at(p["file"], int(p.get("line", 1))))
        self.focus = node.key if node else None

    def _perceive_tool_output(self, sig: Signal) -> None:
        p = sig.payload
        self.log.info("tool %s exited %s", p.get("tool"), p.get("returncode"))
        self._record(sig, "tool", _tool_reply(p))

    def _perceive_loop_error(self, sig: Signal) -> None:
        p = sig.payload
        self.log.warning("loop error after %s: %s", p.get("failed"), p.get("text"))

    def _perceive_interrupt(self, sig: Signal) -> None:
        self.log.info("interrupt: no new signals accepted")

    def _agent_headlines(self, sig: Signal) -> None:
        """Headlines addressed to the agent (``@agent …`` or ``@<name> …``) anywhere in the
        buffer: each unhandled one becomes a request; the answer is written under it."""
        text = str(sig.payload.get("text", ""))
        name = self.memex.settings.identity.name
        for req in find_requests(text, str(sig.payload["file"]), name, self.memex.root):
            if req.key in self._agent_inflight:
                continue
            disk = self.memex.root / req.file
            try:
                saved = disk.read_bytes().decode("utf-8", "surrogateescape") == text
            except OSError:
                saved = False
            if not saved:
                self.log.info("@agent request in %s waits until the file is saved", req.file)
                continue
            self._agent_inflight.add(req.key)
            got: list[str] = []
            meta: dict[str, Any] = {"source": "org", "session": NO_CONVERSATION,
                                    "reply": lambda t, d=None, got=got: got.append(t)}
            if not self._private_entry(req.key):
                meta["gateway"] = "org"  # the answer is written where others may read it
            fut = self.submit({"payload": {"sensor": "user-command", "text": req.instruction},
                               "meta": meta})
            if fut is None:
                self._agent_inflight.discard(req.key)
                continue
            def answer(_f: Future[Any], req: Any = req, got: list[str] = got) -> None:
                self._answer_under(req, got)

            fut.add_done_callback(answer)

    def _private_entry(self, key: str) -> bool:
        """Whether the entry ``key`` is private (its own, inherited or file tags)."""
        with self.memex_lock:
            node = self.memex.store.nodes_by_keys([key], with_body=False).get(key)
        return node is not None and Access(self.memex, "org").hidden(node.tags)

    def _answer_under(self, req: Any, replies: list[str]) -> None:
        try:
            with self.memex_lock:
                answer = "\n\n".join(replies) or "(no answer)"
                if not self._private_entry(req.key):  # an exit: others read this entry
                    answer = Access(self.memex, "org").egress(answer)
                self.memex.answer_under(req.key, req.instruction, answer)
            self.log.info("answered @agent request %r in %s", req.instruction, req.file)
        except Exception as e:
            self.log.error("could not write the answer to %r in %s: %s", req.instruction,
                           req.file, e)
        finally:
            self._agent_inflight.discard(req.key)

    def _heartbeat(self, sig: Signal) -> None:
        """Periodic upkeep: incremental re-index, a little background embedding, literate
        skills reloaded when their files changed, reminders for what is due soon."""
        with self.memex_lock:
            summary = self.memex.sync()
            if summary.added or summary.changed or summary.removed:
                self.log.info("heartbeat: %d added, %d changed, %d removed", summary.added,
                              summary.changed, summary.removed)
            self.registry.load_literate(self.memex.root / "skills")
            budget = int(sig.payload.get("embed", self.heartbeat_embed))
            if budget > 0:
                self._embed_in_background(budget)
            self.archive_upkeep.maybe_run(self._pool.submit, self.log)
            for n in self._due_soon():
                if n.key not in self._reminded:
                    self._reminded.add(n.key)
                    self.log.info("reminder: %s %s at %s (%s:%d)", n.todo or "", n.title,
                                  n.scheduled or n.deadline, n.file, n.line)

    def _embed_in_background(self, budget: int) -> None:
        """Queue up to ``budget`` node embeddings in the pool (one pass at a time): the
        model runs for seconds, so neither the sync thread nor the memex lock waits on it."""
        with self._lock:
            if self.embedding is not None and not self.embedding.done():
                return
            try:
                self.embedding = self._pool.submit(self._embed_pending, budget)
            except RuntimeError:  # the pool is shut down: nothing to do any more
                self.embedding = None

    def _embed_pending(self, budget: int) -> int:
        """Embed pending nodes, then pending recall records (so a recall's pass finds its
        records embedded): the store is read and written under the memex lock, the model
        runs with the lock released (the embedders' ``slow_work``; vectors are keyed by
        text hash, so one computed while a file changed is still right for that text)."""
        from ..recall.engine import embed_pending_records
        from ..retrieval.hybrid import retriever_for

        def embed(texts: list[str]) -> Any:
            if not self._accepting:  # shutting down: keep the batches done, stop here
                raise RuntimeError("the kernel is shutting down")
            return embedder.embed(texts)

        try:
            with self.memex_lock:
                r = retriever_for(self.memex)
                embedder = r.embedder
                n = r.vectors.embed_pending(embed, batch=16, limit=budget)
        except Exception as e:  # no model here: sparse search still works
            self.log.warning("heartbeat: embedding skipped: %s", e)
            return 0
        if n:
            self.log.info("heartbeat: embedded %d node(s)", n)
        if n < budget and self._accepting:
            try:
                with self.memex_lock:
                    done = embed_pending_records(self.memex, budget - n)
            except Exception as e:  # recall then embeds what a pass weighs itself
                self.log.warning("heartbeat: recall's embedding skipped: %s", e)
            else:
                if done:
                    self.log.info("heartbeat: embedded %d recall record(s)", done)
        return n

    def _due_soon(self, minutes: int = 15) -> list[Any]:
        """Open items whose timed SCHEDULED/DEADLINE falls in the next ``minutes``."""
        import datetime as dt

        now = dt.datetime.now()
        out = []
        # today and tomorrow: at 23:55 an item at 00:05 is due within the window
        for n in self.memex.query("todo scheduled:+1") + self.memex.query(
                "todo deadline:+1"):
            for raw in (n.scheduled, n.deadline):
                if not raw:
                    continue
                ts = parse_timestamp(raw)
                if ts and ts.has_time and now <= ts.start <= now + dt.timedelta(
                        minutes=minutes):
                    out.append(n)
        return out

    # -- reason ----------------------------------------------------------------------
    def reason(self, sig: Signal) -> Action | None:
        reflex = self._reflexes.get(sig.sensor)
        if reflex is not None:
            return reflex(sig)
        if sig.type != "request":
            sig.status = "reasoned"
            return None
        ctx = Context(sig, self.memex, logs=self.ring.tail(20), focus=sig.foveal_focus)
        with self.memex_lock:
            d = self.reasoner.decide(ctx, self.registry.skills())
        sig.status = "reasoned"
        if d.action is None:
            return Action("reply", {"text": f"I could not do that: {d.rejection}"},
                          origin=d.skill or "reasoner")
        return d.action

    # -- act ------------------------------------------------------------------------
    def act(self, sig: Signal, action: Action) -> Signal | None:
        """The guard decides before any actuator runs, and again at the last mile.  A
        question to the notes is answered, never acted on: its plan may hold a reply only
        (no command, write, web request or approval), whatever proposed it."""
        if sig.payload.get("target") == "notes" and action.tool != "reply":
            self.log.warning("refused %s from %s: a notes question only replies",
                             action.tool, action.origin)
            self.reply(sig, "Not done: a question about your notes is answered from them, "
                       f"never with {action.tool!r}; ask for it as an instruction.")
            return None
        ctx = replace(GuardContext.of(self.memex.root), private_text=self._private_text(sig))
        d = self.guard.check(action, ctx)
        approved: Any = d
        if d.denied:
            self.log.warning("guard denied %s from %s: %s", action.tool, action.origin, d.reason)
            self.reply(sig, f"Blocked: {d.reason}")
            return None
        if d.needs_approval:
            pending = self.approvals.request(d.action, d.reason,
                                             str(sig.meta.get("gateway") or
                                                 sig.meta.get("source") or ""))
            self.log.info("approval %s requested for %s: %s", pending.id, action.tool, d.reason)
            notify = sig.meta.get("on_approval")  # a gateway that streams (SSE, TUI)
            if callable(notify):
                try:
                    notify(pending)
                except Exception as e:  # a client that went away must not break the loop
                    self.log.warning("approval notice failed: %s", e)
            self.reply(sig, f"Needs your approval ({d.reason}): /approve {pending.id} or "
                       f"/deny {pending.id}", {"approval": pending.id})
            ok = self.approvals.wait(pending.id, timeout=self.approval_timeout) \
                if self.approval_timeout > 0 else None
            if ok is None:
                self.approvals.cancel(pending.id, by="timeout")
            if not ok:
                self.reply(sig, "Not done: " + ("denied." if ok is False else
                                                "no approval came in time."))
                return None
            approved = pending
        final = self.guard.last_mile(d.action, approved=approved, context=ctx)
        if final.denied:
            self.reply(sig, f"Blocked at the last check: {final.reason}")
            return None
        sig.approved_action = final.action
        sig.meta["approval"] = approved
        return self.run_action(final.action, sig)

    def _private_text(self, sig: Signal) -> Callable[[str], str | None]:
        """The guard's judge of an action's text that would leave this machine (a web
        search query, a URL): private when the chain read private material (its taint),
        or when the text matches a private note's prints -- the same egress check a reply
        to a client passes."""
        def judge(text: str) -> str | None:
            taint = sig.meta.get("taint")
            if isinstance(taint, Taint) and taint.private:
                return "; ".join(taint.why)
            v = check(text, self.memex.private_prints().prints)
            return v.why if v.withheld else None
        return judge

    def run_action(self, action: Action, sig: Signal) -> Signal | None:
        """Run an approved action's actuator (from the table) and take back what it hands
        the loop: a feedback signal goes on in this chain; a Delegation is expanded here —
        its intents run in order on this thread and are composed into one reply, or its
        payload is queued as a delegation signal."""
        out = self.registry.actuators.run(action, sig, self.act_env)
        if not isinstance(out, Delegation):
            return out
        if out.intents is None:
            self.submit(out.signal.feedback("delegation", **out.payload))
            return None
        text, data = run_intents(self.process, out)
        self.reply(out.signal, text, data)
        return None

    def reply(self, sig: Signal, text: str, data: Any = None) -> None:
        """Answer ``sig``'s sender: every reply channel (HTTP and its SSE, Telegram, an
        ``@agent`` answer) is fed from here, through the egress check for a sender that may
        not see private notes (``Access.egress``: provenance, then content)."""
        carried = _carried(sig, text)
        acc = Access.for_signal(self.memex, sig.meta)
        if not acc.sees_private:
            text = acc.egress(carried)
            data = acc.egress(data, private=carried.private, why=carried.why)
        ch = sig.meta.get("reply")
        self.stats.replies += 1
        if callable(ch):
            try:
                ch(text, data)
            except Exception as e:
                self.log.error("reply channel of %s failed: %s", sig.summary(), e)
        else:
            self.log.info("reply to %s: %s", sig.summary(), text[:200])
        remember(self.memex.root, sig.meta.get("session"), sig.text, text, data)
        self._record(sig, "assistant", text, carried.private)

    def _record(self, sig: Signal, origin: str, text: str, private: bool = False) -> None:
        if self.recorder is None or conversation(sig.meta) is None or \
                sig.meta.get("record") is False:
            return
        try:
            # a turn of a client that sees private notes may quote one, and so does a turn
            # that carried private text (by provenance, or matching the private-text
            # prints): the record is withheld from every client that does not see private
            # notes (search, reads, recall)
            acc = Access.for_signal(self.memex, sig.meta)
            tags = acc.policy.privacy_tags
            private = private or acc.sees_private or _carried(sig, text).private or \
                check(text, self.memex.private_prints().prints).withheld
            tag = ("private" if "private" in tags else min(tags)) if private and tags \
                else None
            self.recorder.record(str(sig.meta["session"]), origin, text, tag=tag,
                                 properties={"SIGNAL": sig.id,
                                             "SOURCE": str(sig.meta.get("source"))})
        except Exception as e:  # a record we could not write is logged, never fatal
            self.log.error("could not record turn of %s: %s", sig.summary(), e)

    # -- shutdown ----------------------------------------------------------------
    def shutdown(self, timeout: float = 30.0) -> bool:
        """Stop intake, let in-flight signals finish (or time out); True if all did."""
        self._accepting = False
        deadline = time.monotonic() + timeout
        with self._lock:
            pending = list(self._inflight)
        for f in pending:
            try:
                f.result(timeout=max(0.0, deadline - time.monotonic()))
            except Exception:
                pass
        self._sync_q.put(None)
        self._sync_thread.join(timeout=max(0.1, deadline - time.monotonic()))
        if self.embedding is not None:  # stops after its current batch
            try:
                self.embedding.result(timeout=max(0.1, deadline - time.monotonic()))
            except Exception:
                pass
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            return not self._inflight


def _carried(sig: Signal, text: str) -> Carried:
    """``text`` with its chain's provenance (``meta["taint"]``, set by the actuators)."""
    taint = sig.meta.get("taint")
    return taint.carry(text) if isinstance(taint, Taint) else Carried(text)


def _tool_reply(p: dict[str, Any]) -> str:
    head = f"`{p.get('command') or p.get('url') or p.get('tool')}`"
    out = str(p.get("text") or "").rstrip()
    err = str(p.get("stderr") or "").rstrip()
    lines = [f"{head} exited {p.get('returncode')}" + (" (timed out)" if p.get("timed_out")
                                                       else "")]
    if out:
        lines.append(out[:4000] + ("\n… (output truncated)" if p.get("truncated") or
                                   len(out) > 4000 else ""))
    if err:
        lines.append("stderr: " + err[:1000])
    return "\n".join(lines)


logging.getLogger("opencortex")
