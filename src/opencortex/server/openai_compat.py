"""OpenAI-compatible chat (``/v1/chat/completions``, ``/v1/models``) so any OpenAI client
(gptel, Open WebUI, the openai package) can talk to OpenCortex.

The last user message is the request; the messages before it are the conversation, handed
to the kernel as its history (``meta["history"]``: a follow-up such as "which of those is
from Sam?" is read against the earlier answer).  The session follows the messages: each
reply is remembered under a hash of the whole conversation so far, and the next request
whose earlier messages hash the same continues that session (an edited or forked history
starts a new one).  ``user``, when given, names the session instead.  An unknown model is
a 404 in OpenAI's error shape (other errors: the project's one error body);
``/v1/models`` lists the one model there is."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .app import JSON, SSE_HEADERS, read_json, run_chat

__all__ = ["MODEL", "MODELS", "Conversations", "chat_completions", "models", "openai_error"]

MODEL = "opencortex"
MODELS = (MODEL,)
"""The model names the endpoint answers to (what ``/v1/models`` lists)."""
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PLAIN_USER = re.compile(r"[A-Za-z0-9_.-]{1,55}")
Turn = tuple[str, str]


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return ""


def openai_error(status: int, message: str, param: str | None = None,
                 code: str | None = None) -> JSON:
    """An error as OpenAI's API answers it (``{"error": {message, type, param, code}}``),
    so OpenAI clients show the message; ``ok``/``status`` as in the project's error body."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSON({"error": {"message": message, "type": kind, "param": param, "code": code},
                 "ok": False, "status": status}, status)


@dataclass(slots=True)
class ChatRequest:
    text: str
    """The last user message: the request."""
    turns: list[Turn]
    """Every message before it (system, user, assistant), as the client sent them."""
    stream: bool
    include_usage: bool
    user: str | None


def parse_request(body: Any) -> ChatRequest:
    """The request, its conversation and options; 4xx for anything malformed."""
    if not isinstance(body, dict):
        raise HTTPException(422, "the body must be a JSON object")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in msgs):
        raise HTTPException(422, "messages must be a non-empty list of {role, content}")
    last = max((i for i, m in enumerate(msgs) if m["role"] == "user"), default=None)
    text = _text(msgs[last].get("content")).strip() if last is not None else ""
    if not text:
        raise HTTPException(422, "no user message with text content")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise HTTPException(422, "stream must be true or false")
    opts = body.get("stream_options")
    usage = isinstance(opts, dict) and opts.get("include_usage") is True
    who = body.get("user")
    turns = [(m["role"], _text(m.get("content"))) for m in msgs[:last]]
    return ChatRequest(text, turns, stream, usage,
                       who.strip() if isinstance(who, str) and who.strip() else None)


def _key(turns: list[Turn]) -> str:
    """A conversation's fingerprint: its messages, whitespace-normalised (clients re-send
    an answer with its spacing changed)."""
    norm = [(r, " ".join(t.split())) for r, t in turns]
    return hashlib.sha256(json.dumps(norm, ensure_ascii=False).encode()).hexdigest()


class Conversations:
    """Which session each conversation seen so far belongs to, keyed by the fingerprint of
    its messages up to and including the last answer (the newest ``limit`` kept)."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._map: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def session(self, req: ChatRequest) -> str:
        if req.user:
            return user_session(req.user)
        key = _key(req.turns)
        with self._lock:
            known = self._map.get(key)
        if known is not None:
            return known
        roles = [r for r, _ in req.turns]
        if "user" not in roles or "assistant" not in roles[roles.index("user"):]:
            # a new conversation: no exchange yet (a client's canned greeting is none)
            return f"openai-{uuid.uuid4().hex[:12]}"
        return f"openai-{key[:12]}"  # one this daemon has not seen (restarted): stable

    def answered(self, req: ChatRequest, session: str, answer: str) -> None:
        key = _key([*req.turns, ("user", req.text), ("assistant", answer)])
        with self._lock:
            self._map[key] = session
            self._map.move_to_end(key)
            while len(self._map) > self.limit:
                self._map.popitem(last=False)


def user_session(user: str) -> str:
    """The session ``user`` names, one per distinct ``user``: ``openai-u-USER`` when it is
    already a short session id without ``..``, else its readable part, ``..`` and a hash
    of the whole (spelling it in session-id characters alone made every non-ASCII name one
    session, and names differing in punctuation or past 55 characters another).  The
    ``u-`` keeps them apart from the conversation sessions (``openai-`` and hex)."""
    if _PLAIN_USER.fullmatch(user) and ".." not in user:
        return f"openai-u-{user}"
    digest = hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"openai-u-{_SAFE.sub('-', user)[:24]}..{digest}"  # <= 64 in all


def _history(req: ChatRequest) -> list[dict[str, str]]:
    return [{"role": r, "text": t} for r, t in req.turns if r in ("user", "assistant")]


def _usage(prompt: str, answer: str) -> dict[str, int]:
    p, c = (len(prompt) + 3) // 4, (len(answer) + 3) // 4  # estimated (~4 chars a token)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None) -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL,
           "system_fingerprint": None,
           "choices": [{"index": 0, "delta": delta, "logprobs": None,
                        "finish_reason": finish}]}
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


async def chat_completions(request: Request) -> Response:
    body = await read_json(request)  # malformed: the project's error body, as everywhere
    model = body.get("model") if isinstance(body, dict) else None
    if model is not None and model not in MODELS:  # as OpenAI answers it
        return openai_error(404, f"The model `{str(model)[:100]}` does not exist; use "
                                 f"{', '.join(MODELS)} (GET /v1/models lists them)",
                            "model", "model_not_found")
    req = parse_request(body)
    kernel = request.app.state.kernel
    if not kernel.accepting:
        raise HTTPException(503, "not accepting requests (shutting down)")
    convs: Conversations = request.app.state.conversations
    session = convs.session(req)
    history = _history(req)
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())
    if not req.stream:
        replies = [item[0] async for kind, item in
                   run_chat(kernel, req.text, session, "openai", history) if kind == "reply"]
        answer = "\n\n".join(replies)
        convs.answered(req, session, answer)
        return JSON({"id": cid, "object": "chat.completion", "created": created,
                     "model": MODEL, "system_fingerprint": None,
                     "choices": [{"index": 0,
                                  "message": {"role": "assistant", "content": answer,
                                              "refusal": None},
                                  "logprobs": None, "finish_reason": "stop"}],
                     "usage": _usage(req.text, answer)})

    async def gen() -> AsyncIterator[bytes]:
        yield _chunk(cid, created, {"role": "assistant", "content": ""}, None)
        parts: list[str] = []
        streamed = ""  # a model answer's text sent as it came, not yet matched by a reply
        async for kind, item in run_chat(kernel, req.text, session, "openai", history, deltas=True):
            if kind == "delta":
                piece = ("\n\n" if parts and not streamed else "") + item
                streamed += item
                parts.append(piece)
                yield _chunk(cid, created, {"content": piece}, None)
                continue
            if kind == "approval":  # say so now: the composed reply comes only at the end
                said = (f"Needs your approval ({item.reason}): approve with POST "
                        f"/v1/approvals/{item.id}")
            else:
                said = item[0]
            if streamed and said.startswith(streamed):
                piece = said[len(streamed):]  # the verified answer is what was streamed
            else:
                piece = ("\n\n" if parts else "") + said
            streamed = ""
            if not piece:
                continue
            parts.append(piece)
            yield _chunk(cid, created, {"content": piece}, None)
        convs.answered(req, session, "".join(parts))
        yield _chunk(cid, created, {}, "stop")
        if req.include_usage:
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": MODEL, "system_fingerprint": None, "choices": [],
                   "usage": _usage(req.text, "".join(parts))}
            yield b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    return StreamingResponse(gen(), media_type="text/event-stream", headers=SSE_HEADERS)


async def models(request: Request) -> Response:
    return JSON({"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                             "owned_by": "opencortex"} for m in MODELS]})
