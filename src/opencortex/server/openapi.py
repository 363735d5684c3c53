"""The OpenAPI 3.1 description of the daemon, written by hand (small, and it documents
exactly what the handlers accept)."""

from __future__ import annotations

from typing import Any

from .. import __version__

__all__ = ["spec"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERR = _json(_ref("Error"), "Error")
_ERRORS = {"400": _ERR, "401": _ERR, "413": _ERR, "421": _ERR, "422": _ERR, "429": _ERR,
           "504": _ERR}
"""400: not JSON, nested deeper than 64 levels, a NUL byte, a number out of range;
421: a Host header that is not this loopback daemon; 504: no answer within the timeout."""
_SSE = {"description": "Server-Sent Events",
        "content": {"text/event-stream": {"schema": {"type": "string"}}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def spec(server: str = "http://127.0.0.1:8765") -> dict[str, Any]:
    """The document; ``server``: the address the daemon answers on (the route passes the
    socket the request came in on, so a daemon on another port names its own)."""
    obj = {"type": "object"}
    schemas: dict[str, Any] = {
        "Error": {"type": "object", "required": ["ok", "error", "type", "status"],
                  "properties": {"ok": {"type": "boolean", "const": False},
                                 "error": {"type": "string"},
                                 "type": {"type": "string", "description": "the error's "
                                          "class, e.g. NodeNotFoundError, Unauthorized"},
                                 "status": {"type": "integer"}}},
        "Signal": {"type": "object", "description": "A raw signal: the short form "
                   "{sensor, ...payload} or {payload: {sensor, ...}, meta: {...}}",
                   "properties": {"sensor": {"type": "string"}, "file": {"type": "string"},
                                  "text": {"type": "string"},
                                  "id": {"type": "string", "description": "point-update: an "
                                         "indexed node (else 422)"},
                                  "line": {"type": "integer", "minimum": 1, "description":
                                           "point-update: a line the file has (else 422)"},
                                  "payload": obj, "meta": obj}},
        "ChatRequest": {"type": "object", "required": ["message"],
                        "properties": {"message": {"type": "string"},
                                       "session": {"type": "string",
                                                   "pattern": "^[A-Za-z0-9._-]{1,64}$",
                                                   "description": "omit for a new session"},
                                       "stream": {"type": "boolean", "default": False}}},
        "ChatReply": {"type": "object",
                      "properties": {"reply": {"type": "string"},
                                     "replies": {"type": "array", "items": {"type": "string"}},
                                     "data": {"type": ["object", "null"]},
                                     "session": {"type": "string"}}},
        "Pending": {"type": "object",
                    "properties": {"id": {"type": "string"}, "tool": {"type": "string"},
                                   "args": obj, "reason": {"type": "string"},
                                   "created": {"type": "string", "format": "date-time"}}},
        "OpenAIError": {"type": "object", "required": ["error"], "properties": {
            "error": {"type": "object", "properties": {
                "message": {"type": "string"}, "type": {"type": "string"},
                "param": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]}}},
            "ok": {"type": "boolean", "const": False}, "status": {"type": "integer"}}},
        "ChatCompletionRequest": {
            "type": "object", "required": ["messages"],
            "properties": {"model": {"type": "string", "enum": ["opencortex"]},
                           "messages": {"type": "array", "items": {
                               "type": "object", "required": ["role"],
                               "properties": {"role": {"type": "string"},
                                              "content": {}}}},
                           "stream": {"type": "boolean"}, "user": {"type": "string"},
                           "stream_options": obj}},
        "ChatCompletion": {"type": "object",
                           "properties": {"id": {"type": "string"},
                                          "object": {"type": "string",
                                                     "const": "chat.completion"},
                                          "created": {"type": "integer"},
                                          "model": {"type": "string"},
                                          "choices": {"type": "array", "items": obj},
                                          "usage": obj}},
    }
    paths: dict[str, Any] = {
        "/healthz": {"get": {"summary": "Liveness (no token needed)", "security": [],
                             "operationId": "healthz",
                             "responses": {"200": _json(obj, "Alive, with the version")}}},
        "/openapi.json": {"get": {"summary": "This document", "operationId": "openapi",
                                  "responses": {"200": _json(obj, "OpenAPI document")}}},
        "/v1/events": {"post": {
            "summary": "Inject a raw signal (buffer-update, heartbeat, user-input, ...)",
            "operationId": "postEvent", "requestBody": _body(_ref("Signal")),
            "responses": {"202": _json(obj, "Accepted"), "503": _ERR, **_ERRORS}}},
        "/v1/chat": {"post": {
            "summary": "One request through the pipeline; SSE (reply/approval/done) "
                       "when stream is true",
            "operationId": "chat", "requestBody": _body(_ref("ChatRequest")),
            "responses": {"200": {"description": "The replies (JSON) or an event stream",
                                  "content": {"application/json": {
                                      "schema": _ref("ChatReply")},
                                      "text/event-stream": {"schema": {"type": "string"}}}},
                          **_ERRORS}}},
        "/v1/chat/completions": {"post": {
            "summary": "OpenAI-compatible chat completions (model 'opencortex')",
            "description": "The last user message is the request; the messages before "
                           "it are the conversation the request is read in (a follow-up "
                           "such as 'which of those ...' narrows the earlier answer). The "
                           "session follows the messages; `user` names it instead. An "
                           "unknown model is a 404 in OpenAI's error shape.",
            "operationId": "chatCompletions",
            "requestBody": _body(_ref("ChatCompletionRequest")),
            "responses": {"200": {"description": "chat.completion, or chat.completion.chunk "
                                                 "events ending in [DONE]",
                                  "content": {"application/json": {
                                      "schema": _ref("ChatCompletion")},
                                      "text/event-stream": {"schema": {"type": "string"}}}},
                          **_ERRORS,
                          "404": _json(_ref("OpenAIError"), "Unknown model "
                                       "(code model_not_found)")}}},
        "/v1/models": {"get": {"summary": "OpenAI-compatible model list",
                               "operationId": "models",
                               "responses": {"200": _json(obj, "The one model")}}},
        "/v1/approvals": {"get": {
            "summary": "Actions waiting for the person", "operationId": "listApprovals",
            "responses": {"200": _json({"type": "object", "properties": {
                "pending": {"type": "array", "items": _ref("Pending")}}}, "Pending")}}},
        "/v1/approvals/{id}": {"post": {
            "summary": "Approve or deny a pending action", "operationId": "resolveApproval",
            "parameters": [{"name": "id", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "requestBody": _body({"type": "object", "required": ["approve"],
                                  "properties": {"approve": {"type": "boolean"}}}),
            "responses": {"200": _json(obj, "Resolved"), "404": _ERR, "409": _ERR,
                          **_ERRORS}}},
        "/v1/skills": {"get": {
            "summary": "Skills and their code trust (untrusted ones carry the command)",
            "operationId": "listSkills", "responses": {"200": _json(obj, "Skills")}}},
        "/v1/skills/trust": {"post": {
            "summary": "Ask to trust a literate skill's exact code: a pending approval of "
                       "kind \"trust skill\" showing it", "operationId": "trustSkill",
            "requestBody": _body({"type": "object", "required": ["name"],
                                  "properties": {"name": {"type": "string"}}}),
            "responses": {"202": _json(obj, "The approval to resolve"),
                          "200": _json(obj, "Nothing to approve (already trusted, unknown)"),
                          **_ERRORS}}},
        "/v1/search": {"get": {
            "summary": "Search the memex", "operationId": "search",
            "parameters": [
                {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                {"name": "k", "in": "query", "schema": {"type": "integer", "default": 10,
                                                        "minimum": 1, "maximum": 200}},
                {"name": "mode", "in": "query", "schema": {
                    "type": "string", "enum": ["hybrid", "sparse", "dense"],
                    "default": "hybrid"}}],
            "responses": {"200": _json(obj, "query, mode, hits, notes"), **_ERRORS}}},
        "/v1/nodes/{ref}": {"get": {
            "summary": "One node in full (ID, FILE::Outline, FILE:LINE or exact title)",
            "operationId": "getNode",
            "parameters": [{"name": "ref", "in": "path", "required": True,
                            "schema": {"type": "string"}, "description": "FILE:LINE "
                            "takes a line from 1 to 2147483647 (else 400)"},
                           {"name": "budget", "in": "query",
                            "schema": {"type": "integer", "default": 16000}}],
            "responses": {"200": _json(obj, "The node"), "404": _ERR, **_ERRORS}}},
        "/v1/recall": {"post": {
            "summary": "One round of a recall dialogue (start with cue, continue with "
                       "session + reply)",
            "operationId": "recall",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": {
                    "cue": {"type": "string", "description": "What the person remembers"},
                    "sources": {"type": "array", "items": {"type": "string"},
                                "description": "Extra roots, KIND:PATH"},
                    "invoked": {"type": "boolean", "default": True},
                    "session": {"type": "string"},
                    "reply": {"type": "string", "description": "The person's next utterance"},
                }}}}},
            "responses": {"200": _json(obj, "session, state, cue, recognizable, story, "
                                            "adjacent, qualifications, searched, question, "
                                            "expansion, recalled, text"),
                          "404": _ERR, **_ERRORS}}},
    }
    return {"openapi": "3.1.0",
            "info": {"title": "OpenCortex", "version": __version__,
                     "description": "The OpenCortex daemon: events, chat, approvals, search."},
            "servers": [{"url": server}],
            "security": [{"bearer": []}],
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"}}}}
