"""One function per tool; each returns a feedback Signal (e.g. tool-output) or None."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from ..skills.base import Action

if TYPE_CHECKING:
    from ..pipeline.kernel import Kernel
    from ..pipeline.signal import Signal

__all__ = ["Actuators"]

log = logging.getLogger("opencortex")
WEB_MAX_BYTES = 2_000_000


class Actuators:
    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel

    def run(self, action: Action, signal: Signal) -> Signal | None:
        fn = getattr(self, "_" + action.tool.replace(".", "_"), None)
        if fn is None:
            raise ValueError(f"no actuator for tool {action.tool!r}")
        return fn(action, signal)

    def _reply(self, action: Action, signal: Signal) -> None:
        data = action.args.get("data")
        if action.args.get("citations") is not None:
            data = {**(data or {}), "citations": list(action.args["citations"])}
        self.k.reply(signal, str(action.args.get("text", "")), data)

    def _memex_write(self, action: Action, signal: Signal) -> Signal | None:
        op = action.args.get("op")
        m = self.k.memex
        with self.k.memex_lock:
            m.writer.batch = self.k.batch_of(signal)
            try:
                if op == "capture":
                    to = action.args.get("to") or action.args["path"]
                    r = m.capture(str(action.args["text"]), to=to,
                                  todo=action.args.get("todo"), model=True)
                    text, data = f"Captured into {r.file} ({r.node}).", r.to_dict()
                elif op in ("todo", "schedule", "deadline", "gtd"):
                    from ..skills import gtd

                    text, data = gtd.apply_memex_op(m, action.args)
                elif op == "project":
                    from ..skills import foundry

                    text, data = foundry.apply_memex_op(m, action.args)
                elif op in ("save", "unsave"):
                    from ..skills import save

                    text, data = save.apply_memex_op(m, action.args)
                    if op == "save":
                        save.note_saved(m.root, signal.meta.get("session"), m.writer.batch,
                                        str(action.args["path"]))
                elif op == "link":
                    from ..skills import links

                    text, data = links.apply_memex_op(m, action.args)
                elif op == "skill":
                    from ..guard import Pending
                    from ..skills import skill_creator

                    ok = signal.meta.get("approval")  # the guard always asks for skill code
                    text, data = skill_creator.apply_memex_op(
                        m, action.args, registry=self.k.registry,
                        trust=self.k.registry.trust if isinstance(ok, Pending) else None,
                        by=f"approval {ok.id}" if isinstance(ok, Pending) else "")
                else:
                    raise ValueError(f"unknown memex write {op!r}")
            finally:
                m.writer.batch = None
        self.k.reply(signal, text, data)
        return None

    def _skill_trust(self, action: Action, signal: Signal) -> None:
        """Record the approved bytes as trusted (only after the person approved them)."""
        from ..guard import Pending
        from ..guard.trust import sha256

        ok = signal.meta.get("approval")
        a = action.args
        if not isinstance(ok, Pending):
            self.k.reply(signal, "Not trusted: trusting code needs your approval.")
            return None
        root = self.k.memex.root
        try:
            now = (root / a["path"]).read_bytes()
        except OSError as e:
            self.k.reply(signal, f"Not trusted: cannot read {a['path']}: {e.strerror}")
            return None
        if sha256(now) != a["sha256"]:
            self.k.reply(signal, f"Not trusted: {a['path']} changed after you approved it; "
                         "ask again to see its current code.")
            return None
        name = str(a.get("name") or a["path"].rsplit("/", 1)[-1].removesuffix(".org"))
        self.k.registry.trust.trust(root, a["path"], name, now, by=f"approval {ok.id}")
        with self.k.memex_lock:
            self.k.registry.load_literate(root / a["path"].split("/", 1)[0])
        st = next((s for s in self.k.registry.statuses()
                   if s.source == f"literate:{root / a['path']}"), None)
        self.k.reply(signal, f"Trusted {a['path']} (sha256 {a['sha256'][:16]}…): "
                     + ("it loaded." if st is not None and st.status == "ok" else
                        f"but it did not load: {st.status if st else 'not found'}."),
                     {"trusted": a["path"], "sha256": a["sha256"],
                      "status": st.status if st else "not found"})
        return None

    def _shell(self, action: Action, signal: Signal) -> Signal:
        from ..guard import GuardContext

        res = self.k.guard.run_shell(action, approved=signal.meta.get("approval"),
                                     context=GuardContext.of(self.k.memex.root))
        import shlex

        return signal.feedback("tool-output", tool="shell",
                               command=shlex.join(action.args.get("argv") or []),
                               returncode=res.returncode, text=res.stdout,
                               stderr=res.stderr, truncated=res.truncated,
                               timed_out=res.timed_out)

    def _web(self, action: Action, signal: Signal) -> Signal:
        """Readable text of a page (size/time limits; every resolved address re-checked
        against private ranges at connect time, so DNS rebinding cannot reach the LAN)."""
        from ..skills.websearch import WebError, fetch_readable

        url = str(action.args.get("url", ""))
        try:
            title, text = fetch_readable(url, max_bytes=WEB_MAX_BYTES,
                                         allow_private=self.k.guard.policy.web.allow_private_hosts)
            status, text = 200, (f"{title}\n\n{text}" if title else text)
        except (WebError, OSError, ValueError, urllib.error.URLError) as e:
            status, text = 0, f"fetch failed: {e}"
        return signal.feedback("tool-output", tool="web", url=url, returncode=status,
                               text=text[:20_000], truncated=len(text) > 20_000)

    def _websearch(self, action: Action, signal: Signal) -> None:
        from ..skills.websearch import WebError, format_results, search, search_endpoint

        endpoint = search_endpoint(self.k.memex.settings)
        if not endpoint:
            self.k.reply(signal, "No web search endpoint is configured: set [web] "
                         "search_endpoint = \"http://…\" (a SearXNG instance) in config.toml "
                         "or OPENCORTEX_SEARCH_ENDPOINT.")
            return None
        try:
            results = search(str(action.args["query"]), endpoint, allow_private=True)
            self.k.reply(signal, format_results(results), {"results": results})
        except (WebError, OSError, ValueError) as e:
            self.k.reply(signal, f"Web search failed: {e}")
        return None

    def _delegate(self, action: Action, signal: Signal) -> None:
        """Re-inject work as delegation signals.  With ``intents`` (the router): each one in
        order, through the same pipeline in this thread, results composed into one reply."""
        intents = action.args.get("intents")
        if not isinstance(intents, list):
            self.k.submit(signal.feedback("delegation", **action.args))
            return None
        results = []
        citations: list[str] = []
        for it in intents:
            got: list[tuple[str, Any]] = []
            args = {k: v for k, v in it.items() if k != "text"}
            sub = signal.feedback("delegation", text=str(it.get("text") or it.get("query")
                                                         or ""), **args)
            sub.meta = {**sub.meta, "reply": lambda t, d=None, got=got: got.append((t, d)),
                        "record": False}
            self.k.process(sub)
            if not got and it.get("target") == "review":
                # no review skill answered (none installed): the lists' own skill does
                args = {**args, "target": "gtd"}
                sub = signal.feedback("delegation", text=str(it.get("text") or ""), **args)
                sub.meta = {**sub.meta, "reply": lambda t, d=None, got=got: got.append((t, d)),
                            "record": False}
                self.k.process(sub)
            text = "\n".join(t for t, _ in got) or "(no result)"
            data: dict[str, Any] = {}
            for _, d in got:
                if isinstance(d, dict):
                    citations += [c for c in d.get("citations", []) if c not in citations]
                    data.update({k: v for k, v in d.items() if k != "citations"})
            results.append({"target": it.get("target"), "args": args, "text": text,
                            **({"data": data} if data else {})})
        if len(results) == 1:
            answer = results[0]["text"]
        else:
            answer = "\n\n".join(f"{i}. [{r['target']}] {r['text']}"
                                  for i, r in enumerate(results, 1))
        self.k.reply(signal, answer, {"intents": intents, "results": results,
                                      "answer": answer, "citations": citations})
        return None
