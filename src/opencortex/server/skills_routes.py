"""Skill trust over HTTP (the Emacs package's ``opencortex-trust-skill``): list the skills
with their trust state, and ask for an approval of kind "trust skill".

``POST /v1/skills/trust {"name": NAME}`` submits ``/trust NAME`` through the pipeline as
the person's own request, so it is the same path as ``/trust`` in chat: the guard always
asks, and the answer is the pending approval (its ``args`` carry the code, the sha256 and
the last trusted text) — resolve it with ``POST /v1/approvals/{id}``."""

from __future__ import annotations

import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["routes"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")


async def skills_list(request: Request) -> Response:
    from starlette.concurrency import run_in_threadpool

    kernel = request.app.state.kernel

    def rows() -> list[dict[str, Any]]:
        from ..guard.trust import trust_command

        with kernel.memex_lock:
            kernel.registry.load_literate(kernel.memex.root / "skills")
        out = []
        for s in kernel.registry.statuses():
            row: dict[str, Any] = {"name": s.name, "source": s.source,
                                   "priority": s.priority, "status": s.status}
            if s.trust:
                row["trust"] = s.trust
            if s.trust in ("untrusted", "changed"):
                row["command"] = trust_command(s.name)
            out.append(row)
        return out

    return JSONResponse({"skills": await run_in_threadpool(rows)})


async def skills_trust(request: Request) -> Response:
    from ..guard.trust import approval_kind
    from .app import _object, read_json, run_chat

    body = _object(await read_json(request))
    name = body.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name.removeprefix("skills/")
                                                        .removesuffix(".org")):
        raise HTTPException(422, "name must be a literate skill's name (skills/NAME.org)")
    kernel = request.app.state.kernel
    if not kernel.accepting:
        raise HTTPException(503, "not accepting requests (shutting down)")
    replies: list[str] = []
    async for kind, item in run_chat(kernel, f"/trust {name}", "internal", "http"):
        if kind == "approval":  # answer now; the pipeline waits for /v1/approvals/{id}
            return JSONResponse({"approval": {
                "id": item.id, "kind": approval_kind(item.action), "reason": item.reason,
                "tool": item.action.tool, "args": item.action.args}}, 202)
        replies.append(item[0])
    return JSONResponse({"approval": None, "reply": "\n".join(replies)})


def routes() -> list[Route]:
    return [Route("/v1/skills", skills_list, methods=["GET"]),
            Route("/v1/skills/trust", skills_trust, methods=["POST"])]
