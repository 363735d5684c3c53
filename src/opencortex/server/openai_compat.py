"""OpenAI-compatible chat (``/v1/chat/completions``, ``/v1/models``) so any OpenAI client
(gptel, Open WebUI, the openai package) can talk to OpenCortex: the last user message is
the request, ``user`` (or a hash of the conversation's opening) is the session."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .app import JSON, SSE_HEADERS, read_json, run_chat

__all__ = ["MODEL", "chat_completions", "models"]

MODEL = "opencortex"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return ""


def parse_request(body: Any) -> tuple[str, str, bool, bool]:
    """(request text, session, stream, include_usage); 4xx for anything malformed."""
    if not isinstance(body, dict):
        raise HTTPException(422, "the body must be a JSON object")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in msgs):
        raise HTTPException(422, "messages must be a non-empty list of {role, content}")
    user = [m for m in msgs if m["role"] == "user"]
    text = _text(user[-1].get("content")).strip() if user else ""
    if not text:
        raise HTTPException(422, "no user message with text content")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise HTTPException(422, "stream must be true or false")
    opts = body.get("stream_options")
    usage = isinstance(opts, dict) and opts.get("include_usage") is True
    who = body.get("user")
    if isinstance(who, str) and who.strip():
        session = "openai-" + (_SAFE.sub("-", who.strip())[:57] or "user")  # <= 64 in all
    else:  # the same conversation keeps its session: hash what does not change per turn
        opening = [(m["role"], _text(m.get("content"))) for m in msgs
                   if m["role"] == "system"] + [("user", _text(user[0].get("content")))]
        digest = hashlib.sha256(json.dumps(opening).encode()).hexdigest()[:12]
        session = f"openai-{digest}"
    return text, session, stream, usage


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
    text, session, stream, include_usage = parse_request(await read_json(request))
    kernel = request.app.state.kernel
    if not kernel.accepting:
        raise HTTPException(503, "not accepting requests (shutting down)")
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())
    if not stream:
        replies = [item[0] async for kind, item in run_chat(kernel, text, session, "openai")
                   if kind == "reply"]
        answer = "\n\n".join(replies)
        return JSON({"id": cid, "object": "chat.completion", "created": created,
                     "model": MODEL, "system_fingerprint": None,
                     "choices": [{"index": 0,
                                  "message": {"role": "assistant", "content": answer,
                                              "refusal": None},
                                  "logprobs": None, "finish_reason": "stop"}],
                     "usage": _usage(text, answer)})

    async def gen() -> AsyncIterator[bytes]:
        yield _chunk(cid, created, {"role": "assistant", "content": ""}, None)
        parts: list[str] = []
        streamed = ""  # a model answer's text sent as it came, not yet matched by a reply
        async for kind, item in run_chat(kernel, text, session, "openai", deltas=True):
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
        yield _chunk(cid, created, {}, "stop")
        if include_usage:
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": MODEL, "system_fingerprint": None, "choices": [],
                   "usage": _usage(text, "".join(parts))}
            yield b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    return StreamingResponse(gen(), media_type="text/event-stream", headers=SSE_HEADERS)


async def models(request: Request) -> Response:
    return JSON({"object": "list", "data": [{"id": MODEL, "object": "model",
                                             "created": 0, "owned_by": "opencortex"}]})
