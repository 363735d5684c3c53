"""One function per tool; each returns a feedback Signal (e.g. tool-output) or None."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

from ..skills.base import Action

if TYPE_CHECKING:
    from ..pipeline.kernel import Kernel
    from ..pipeline.signal import Signal

__all__ = ["Actuators", "fetch_text"]

log = logging.getLogger("opencortex")
WEB_MAX_BYTES = 2_000_000


def fetch_text(url: str, timeout: float = 15.0) -> tuple[int, str]:
    """GET a URL (http/https only), at most WEB_MAX_BYTES, as text with tags stripped."""
    import html
    import re

    if not re.match(r"^https?://", url, re.I):
        raise ValueError("only http(s) URLs can be fetched")
    req = urllib.request.Request(url, headers={"User-Agent": "OpenCortex/0.1"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read(WEB_MAX_BYTES + 1)[:WEB_MAX_BYTES]
        charset = r.headers.get_content_charset() or "utf-8"
        status = r.status
    text = body.decode(charset, "replace")
    text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", text)
    text = html.unescape(re.sub(r"(?s)<[^>]+>", " ", text))
    return status, " ".join(text.split())


class Actuators:
    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel

    def run(self, action: Action, signal: Signal) -> Signal | None:
        fn = getattr(self, "_" + action.tool.replace(".", "_"), None)
        if fn is None:
            raise ValueError(f"no actuator for tool {action.tool!r}")
        return fn(action, signal)

    def _reply(self, action: Action, signal: Signal) -> None:
        self.k.reply(signal, str(action.args.get("text", "")), action.args.get("data"))

    def _memex_write(self, action: Action, signal: Signal) -> Signal | None:
        op = action.args.get("op")
        m = self.k.memex
        with self.k.memex_lock:
            m.writer.batch = self.k.batch_of(signal)
            try:
                if op == "capture":
                    to = action.args.get("to") or action.args["path"]
                    r = m.capture(str(action.args["text"]), to=to,
                                  todo=action.args.get("todo"))
                else:
                    raise ValueError(f"unknown memex write {op!r}")
            finally:
                m.writer.batch = None
        self.k.reply(signal, f"Captured into {r.file} ({r.node}).", r.to_dict())
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
        url = str(action.args.get("url", ""))
        try:
            status, text = fetch_text(url)
        except (OSError, ValueError, urllib.error.URLError) as e:
            status, text = 0, f"fetch failed: {e}"
        return signal.feedback("tool-output", tool="web", url=url, returncode=status,
                               text=text[:20_000], truncated=len(text) > 20_000)

    def _delegate(self, action: Action, signal: Signal) -> None:
        sub = signal.feedback("delegation", **action.args)
        self.k.submit(sub)
        return None
