"""A Telegram bot as a gateway: long-polls the Bot API and feeds messages to the kernel.

Only chats on the allowlist are served (others are logged, never answered); each chat is
its own session.  The bot token is a secret: it is only ever put in request URLs and is
redacted from everything logged or raised.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..pipeline.kernel import Kernel

from ..errors import TelegramError

__all__ = ["DEFAULT_API_BASE", "MAX_MESSAGE", "TelegramError", "TelegramGateway",
           "split_message"]

DEFAULT_API_BASE = "https://api.telegram.org"
MAX_MESSAGE = 4096
"""Telegram's limit on a message's text, in UTF-16 code units."""

log = logging.getLogger("opencortex.telegram")


def _units(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def split_message(text: str, limit: int = MAX_MESSAGE) -> list[str]:
    """Pieces of at most ``limit`` UTF-16 units, cut at line breaks where possible."""
    if _units(text) <= limit:
        return [text] if text else []
    out: list[str] = []
    cur = ""
    for line in text.split("\n"):
        cand = f"{cur}\n{line}" if cur else line
        if _units(cand) <= limit:
            cur = cand
            continue
        if cur:
            out.append(cur)
            cur = ""
        while _units(line) > limit:  # one line too long: cut it hard
            n = min(len(line), limit)
            while _units(line[:n]) > limit:
                n -= 1
            out.append(line[:n])
            line = line[n:]
        cur = line
    if cur:
        out.append(cur)
    return out


class TelegramGateway:
    """Long-polling Bot API client bound to one kernel.

    ``poll_once()`` fetches and handles one batch of updates (for tests); ``run(stop)``
    loops until ``stop`` is set, backing off on errors.
    """

    def __init__(self, kernel: Kernel, token: str, allow: Iterable[int | str],
                 api_base: str = DEFAULT_API_BASE, poll_timeout: int = 30, *,
                 retries: int = 5, backoff: float = 1.0, max_backoff: float = 60.0) -> None:
        if not token:
            raise ValueError("a Telegram bot token is required")
        self.kernel = kernel
        self._token = token
        self.allow = {int(c) for c in allow}
        self.api_base = api_base.rstrip("/")
        self.poll_timeout = int(poll_timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.offset: int | None = None
        self.sleep: Callable[[float], Any] = time.sleep
        """How to wait between retries (``run`` makes it wake on stop)."""
        self._approval_chat: dict[str, int] = {}
        from ..access import Access

        self._egress = Access(kernel.memex, "telegram").egress
        """The egress check every message to a chat passes (``guard.egress``)."""

    # -- secrets -------------------------------------------------------------------
    def redact(self, text: object) -> str:
        """``text`` with the bot token replaced, for logs and errors."""
        return str(text).replace(self._token, "<token>")

    # -- the Bot API -----------------------------------------------------------------
    def call(self, method: str, params: dict[str, Any] | None = None,
             timeout: float | None = None) -> Any:
        """POST ``params`` as JSON to ``method``; its ``result``.  429 waits the asked
        ``retry_after``; 5xx and network errors back off exponentially; other 4xx fail."""
        url = f"{self.api_base}/bot{self._token}/{method}"
        body = json.dumps(params or {}).encode()
        wait = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            req = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=timeout or 30) as resp:
                    data = json.loads(resp.read() or b"{}")
                if not data.get("ok"):
                    raise TelegramError(f"{method}: {self.redact(data.get('description'))}")
                return data.get("result")
            except urllib.error.HTTPError as e:
                info = _error_body(e)
                desc = self.redact(info.get("description") or e.reason)
                if e.code == 429:
                    retry = (info.get("parameters") or {}).get("retry_after")
                    delay = float(retry) if isinstance(retry, int | float) else wait
                elif e.code >= 500:
                    delay = wait
                else:
                    raise TelegramError(f"{method}: HTTP {e.code}: {desc}", e.code) from None
                if last:
                    raise TelegramError(f"{method}: HTTP {e.code}: {desc} (gave up after "
                                        f"{attempt + 1} tries)", e.code) from None
                log.warning("telegram %s: HTTP %s (%s); retrying in %.1fs", method, e.code,
                            desc, delay)
            except (urllib.error.URLError, OSError, ValueError) as e:
                reason = self.redact(getattr(e, "reason", None) or e)
                if last:
                    raise TelegramError(f"{method}: {type(e).__name__}: {reason} (gave up "
                                        f"after {attempt + 1} tries)") from None
                delay = wait
                log.warning("telegram %s failed (%s: %s); retrying in %.1fs", method,
                            type(e).__name__, reason, delay)
            self.sleep(delay)
            wait = min(wait * 2, self.max_backoff)
        raise AssertionError("unreachable")

    def send(self, chat_id: int, text: str) -> None:
        """Send ``text`` to the chat, split into Telegram-sized messages; failures are
        logged (a reply that cannot be delivered must not break the loop).  The one exit
        to Telegram: the text passes the egress check first (private text withheld unless
        ``telegram`` is in ``[guard] trusted_clients``)."""
        text = str(self._egress(text))
        for piece in split_message(text.strip() or "(empty reply)"):
            try:
                self.call("sendMessage", {"chat_id": chat_id, "text": piece})
            except TelegramError as e:
                log.error("telegram: could not send to chat %s: %s", chat_id, e)
                return

    # -- updates -----------------------------------------------------------------------
    def poll_once(self) -> int:
        """Fetch one batch (long-polling up to ``poll_timeout`` s) and handle it; the
        offset moves past each update before it is handled, so none is handled twice."""
        params: dict[str, Any] = {"timeout": self.poll_timeout,
                                  "allowed_updates": ["message"]}
        if self.offset is not None:
            params["offset"] = self.offset
        updates = self.call("getUpdates", params, timeout=self.poll_timeout + 15) or []
        n = 0
        for upd in updates:
            uid = upd.get("update_id")
            if isinstance(uid, int):
                if self.offset is not None and uid < self.offset:
                    continue  # already seen (a server that ignored the offset)
                self.offset = uid + 1
            try:
                if self.handle(upd):
                    n += 1
            except Exception as e:  # one bad update must not stop the bot
                log.error("telegram: update %s failed: %s: %s", uid, type(e).__name__,
                          self.redact(e))
        return n

    def handle(self, update: dict[str, Any]) -> bool:
        """Act on one update; True if it was a message from an allowed chat."""
        msg = update.get("message")
        if not isinstance(msg, dict):
            return False
        chat = msg.get("chat") or {}
        chat_id = chat.get("id")
        sender = (msg.get("from") or {}).get("username") or (msg.get("from") or {}).get("id")
        if not isinstance(chat_id, int) or chat_id not in self.allow:
            log.warning("telegram: ignored a message from chat %s (user %s): not in the "
                        "allowlist", chat_id, sender)
            return False
        text = msg.get("text")
        if not isinstance(text, str) or not text.strip():
            self.send(chat_id, "I can only read text messages.")
            return True
        cmd, _, arg = text.strip().partition(" ")
        cmd = cmd.split("@", 1)[0]  # /approve@MyBot in groups
        if cmd in ("/approve", "/deny"):
            self._resolve(chat_id, arg.strip(), cmd == "/approve")
        elif cmd in ("/start", "/help"):
            self.send(chat_id, "Send me a message and I answer from your memex. "
                               "/approve ID or /deny ID answers an approval request.")
        else:
            self._submit(chat_id, text)
        return True

    def _submit(self, chat_id: int, text: str) -> None:
        def on_approval(p: Any) -> None:
            self._approval_chat[p.id] = chat_id
            self.send(chat_id, f"Needs your approval ({p.reason}): /approve {p.id} or "
                               f"/deny {p.id}")

        shown: set[str] = set()

        def reply(t: str, data: Any = None) -> None:
            lines = [ln for ln in t.split("\n")
                     if not any(f"/approve {i} or /deny {i}" in ln for i in shown)]
            if "\n".join(lines).strip():
                self.send(chat_id, "\n".join(lines))

        def note(p: Any) -> None:
            shown.add(p.id)
            on_approval(p)

        fut = self.kernel.submit({"payload": {"sensor": "chat-message", "text": text},
                                  "meta": {"source": "telegram", "gateway": "telegram",
                                           "session": f"telegram-{chat_id}",
                                           "reply": reply, "on_approval": note}})
        if fut is None:
            self.send(chat_id, "Not accepting messages right now (shutting down).")

    def _resolve(self, chat_id: int, ident: str, approved: bool) -> None:
        from ..guard.errors import ApprovalError

        if not ident:
            self.send(chat_id, f"usage: /{'approve' if approved else 'deny'} ID")
            return
        owner = self._approval_chat.get(ident)
        if owner is not None and owner != chat_id:
            self.send(chat_id, f"{ident} was asked in another chat.")
            return
        try:
            self.kernel.approvals.resolve(ident, approved, by=f"telegram-{chat_id}")
        except ApprovalError as e:
            self.send(chat_id, str(e))
            return
        self._approval_chat.pop(ident, None)
        self.send(chat_id, f"{'Approved' if approved else 'Denied'} {ident}.")

    # -- the loop ------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set; errors are logged and backed off, never fatal."""
        self.sleep = stop.wait
        wait = self.backoff
        log.info("telegram: polling %s for %d allowed chat(s)", self.api_base,
                 len(self.allow))
        while not stop.is_set():
            try:
                self.poll_once()
                wait = self.backoff
            except TelegramError as e:
                log.error("telegram: %s; next try in %.0fs", e, wait)
                stop.wait(wait)
                wait = min(wait * 2, self.max_backoff)
            except Exception as e:
                log.error("telegram: %s: %s; next try in %.0fs", type(e).__name__,
                          self.redact(e), wait)
                stop.wait(wait)
                wait = min(wait * 2, self.max_backoff)


def _error_body(e: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        data = json.loads(e.read() or b"{}")
        return data if isinstance(data, dict) else {}
    except (ValueError, OSError):
        return {}
