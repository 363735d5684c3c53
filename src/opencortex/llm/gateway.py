"""The gateway: one call site for every OpenAI-compatible chat-completions server.

``Gateway.complete`` / ``Gateway.stream`` try each provider of the cascade in order.  Within a
provider, 429 (honouring ``Retry-After``), 408/5xx, timeouts and dropped connections are
retried with exponential backoff and jitter up to ``max_retries``; any other failure moves on
to the next provider at once.  When all fail, one ``GatewayError`` lists each provider's reason.
A model that answers badly (invalid JSON, schema mismatch, malformed tool arguments) is not a
provider failure: ``BadModelOutput`` goes straight to the caller, which retries with the error
fed back.

Privacy: content sent to a non-loopback provider passes through ``redact`` first (the guard
module supplies it).  API keys are read at request time and never logged, stored or shown.
"""

from __future__ import annotations

import dataclasses
import functools
import http.client
import json
import logging
import random
import re
import socket
import ssl
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, cast

from ..locking import slow_work
from . import _http
from .errors import (
    BadModelOutput,
    GatewayError,
    NeedsKeyError,
    ProviderError,
    RateLimitedError,
)
from .profiles import Profile
from .providers import Provider, require_key
from .schema import parse_json_answer
from .types import (
    Completion,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    parse_arguments,
)

__all__ = ["Gateway"]

log = logging.getLogger("opencortex.llm")

_FORMS = ("json_schema", "json_object_schema", "json_object", "plain")
"""Structured-output forms, strongest first: OpenAI's ``json_schema`` (llama-server, Ollama,
vLLM), ``json_object`` with a ``schema`` (llama-cpp-python), bare ``json_object`` plus the
schema in the prompt, and the prompt alone (a server without ``response_format``)."""
_FORM_REJECTED = frozenset({400, 404, 415, 422, 500, 501})
"""Statuses with which servers refuse a ``response_format`` they do not know."""
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")

MessageLike = Message | Mapping[str, Any]


class _Transient(Exception):
    """A failure worth retrying on the same provider (internal; never escapes the gateway)."""

    def __init__(self, message: str, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.retry_after = status, retry_after

    def final(self, provider: Provider, tries: int) -> GatewayError:
        msg = f"{self} (gave up after {tries} tries)"
        if self.status == 429:
            return RateLimitedError(provider.name, msg + "; wait, or add another provider to "
                                    "llm.cascade", self.retry_after)
        return ProviderError(provider.name, msg, self.status, retryable=True)


class Gateway:
    """Chat completions over a cascade of providers (see the module docstring)."""

    def __init__(self, providers: Sequence[Provider] = (), *,
                 redact: Callable[[str], str] | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 rng: Callable[[], float] = random.random,
                 profile: str | None = None, budget: float | None = None) -> None:
        self._providers = tuple(providers)
        self.redact = redact
        self._sleep, self._rng = sleep, rng
        self._profile, self._budget = profile, budget
        self._accepted: dict[str, str] = {}
        """Provider name → the structured-output form it accepted (probed once)."""

    @classmethod
    def from_config(cls, data: Mapping[str, Any] | None = None, *,
                    env: Mapping[str, str] | None = None,
                    redact: Callable[[str], str] | None = None) -> Gateway:
        """Build from the parsed config TOML (``{"llm": {...}}``) and ``OPENCORTEX_LLM_*``."""
        from .config import options_from_config, providers_from_config

        name, budget = options_from_config(data, env=env)
        return cls(providers_from_config(data, env=env), redact=redact, profile=name,
                   budget=budget)

    @property
    def profile(self) -> Profile:
        """Prompt and time budgets: ``[llm] profile``, else the first provider's (a local
        llama.cpp or Ollama server: ``small``)."""
        from .profiles import profile

        first = self._providers[0].profile if self._providers else None
        return profile(self._profile or first)

    @property
    def budget(self) -> float:
        """Seconds one request waits for the model before answering offline."""
        return self._budget if self._budget is not None else self.profile.budget

    def output_form(self, provider: str) -> str | None:
        """The structured-output form ``provider`` accepted (None: not probed yet)."""
        return self._accepted.get(provider)

    @property
    def providers(self) -> tuple[Provider, ...]:
        return self._providers

    @property
    def configured(self) -> bool:
        """False when no provider is configured: the caller uses its offline reasoner."""
        return bool(self._providers)

    def status(self) -> list[dict[str, Any]]:
        """One row per provider for ``doctor``: name, URL, local, models, key set/missing/none."""
        return [{"name": p.name, "base_url": p.base_url, "local": p.local,
                 "models": dict(p.models), "api_key_env": p.api_key_env,
                 "key": p.key_status()} for p in self._providers]

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self._providers) or "none"
        return f"Gateway(cascade=[{names}], redact={'on' if self.redact else 'off'})"

    # -- public calls --------------------------------------------------------------------------
    def complete(self, messages: Sequence[MessageLike], tier: str = "fast",
                 json_schema: Mapping[str, Any] | None = None,
                 tools: Sequence[ToolSpec] | None = None, temperature: float | None = 0,
                 max_tokens: int | None = None) -> Completion:
        """One answer.  With ``json_schema`` the answer is parsed and validated into ``.data``
        (unless the model called a tool instead).  ``temperature=None`` sends none."""
        msgs = [Message.coerce(m) for m in messages]
        schema = _schema_parts(json_schema)
        failures: list[tuple[str, GatewayError]] = []
        for p in self._providers:
            try:
                with slow_work():  # waiting for a model touches no memex: release its lock
                    done = self._on_provider(p, msgs, tier, schema, tools, temperature,
                                             max_tokens)
            except GatewayError as e:
                self._note_failure(p, e, failures)
                continue
            return self._finish(p, done, schema)
        raise self._all_failed(failures)

    def stream(self, messages: Sequence[MessageLike], tier: str = "fast",
               json_schema: Mapping[str, Any] | None = None,
               tools: Sequence[ToolSpec] | None = None, temperature: float | None = 0,
               max_tokens: int | None = None) -> Iterator[StreamEvent]:
        """Yield ``TextDelta`` / ``ToolCallDelta`` as they arrive, then the final ``Completion``.

        Retries and the cascade apply until the first event; once output has been yielded a
        broken stream raises ``ProviderError`` (it cannot be replayed transparently).
        """
        msgs = [Message.coerce(m) for m in messages]
        schema = _schema_parts(json_schema)
        failures: list[tuple[str, GatewayError]] = []
        for p in self._providers:
            try:
                with slow_work():  # until the first event (later ones come as they are read)
                    first, rest = self._on_provider(p, msgs, tier, schema, tools, temperature,
                                                    max_tokens, stream=True)
            except GatewayError as e:
                self._note_failure(p, e, failures)
                continue
            try:
                event = first
                while True:
                    if isinstance(event, Completion):
                        yield self._finish(p, event, schema)
                        return
                    yield event
                    event = next(rest)
            except _Transient as t:
                raise ProviderError(p.name, f"the stream broke off after output began: {t}",
                                    t.status) from None
            except StopIteration:
                raise ProviderError(p.name, "the stream ended without a final answer") from None
            finally:
                rest.close()
        raise self._all_failed(failures)

    # -- one provider --------------------------------------------------------------------------
    def _on_provider(self, p: Provider, msgs: list[Message], tier: str,
                     schema: tuple[str, dict[str, Any]] | None,
                     tools: Sequence[ToolSpec] | None, temperature: float | None,
                     max_tokens: int | None, stream: bool = False) -> Any:
        if not p.local and any(m.private for m in msgs):
            raise ProviderError(p.name, "the prompt carries private notes and this provider "
                                "is not local: not sent (add a local provider to llm.cascade, "
                                "or set guard.remote_ok = true to allow it)", retryable=False)
        key = require_key(p)
        model = p.model_for(tier)
        if not model:
            raise ProviderError(p.name, f"no model configured for tier {tier!r}: set "
                                f"llm.providers.{p.name}.models.{tier} in the config")
        modes: list[str | None] = [None]
        if schema is not None:
            remembered = self._accepted.get(p.name)
            modes = list(_FORMS if p.supports_json_schema else _FORMS[2:])
            if remembered in modes:
                modes = [remembered]
        headers = {"Content-Type": "application/json", "User-Agent": "opencortex",
                   "Accept": "text/event-stream" if stream else "application/json", **p.headers}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for i, mode in enumerate(modes):
            body = self._body(p, model, msgs, mode, schema, tools, temperature, max_tokens, stream)
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            probing = len(modes) > 1 and i + 1 < len(modes)
            # a probe is tried once: llama-cpp-python answers the form it rejects with a 500,
            # which would otherwise be retried as a server hiccup
            on = dataclasses.replace(p, max_retries=0) if probing else p
            try:
                if stream:
                    out = self._with_retries(on, functools.partial(self._stream_once, p, data,
                                                                   headers, key))
                else:
                    out = self._with_retries(on, functools.partial(self._complete_once, p, data,
                                                                   headers, key))
            except ProviderError as e:
                if probing and e.upstream_status in _FORM_REJECTED:
                    log.info("%s rejected response_format %s (%s); trying %s", p.name, mode, e,
                             modes[i + 1])
                    continue
                raise
            if mode is not None:
                self._accepted[p.name] = mode
            return out
        raise AssertionError("unreachable")

    def _body(self, p: Provider, model: str, msgs: list[Message], mode: str | None,
              schema: tuple[str, dict[str, Any]] | None, tools: Sequence[ToolSpec] | None,
              temperature: float | None, max_tokens: int | None,
              stream: bool) -> dict[str, Any]:
        redact = None if p.local else self._remote_redact()
        wire = [m.to_wire(redact) for m in msgs]
        body: dict[str, Any] = {"model": model, "messages": wire, "stream": stream}
        if temperature is not None:  # None: the server's default (some reasoning models want it)
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if tools:
            body["tools"] = [t.to_wire() for t in tools]
        if schema is not None and mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema[0], "schema": schema[1], "strict": True}}
        elif schema is not None and mode == "json_object_schema":
            # llama-cpp-python's and llama-server's form: a grammar built from the schema
            body["response_format"] = {"type": "json_object", "schema": schema[1]}
        elif schema is not None:
            if mode == "json_object":
                body["response_format"] = {"type": "json_object"}
            _add_json_instruction(wire, schema[1])  # plain: the prompt is all there is
        if stream and p.stream_usage:
            body["stream_options"] = {"include_usage": True}
        return body

    def _remote_redact(self) -> Callable[[str], str] | None:
        """What a prompt to a non-local provider passes: the secret redactor, then the
        egress check's content half (``guard.egress``: lines matching the private-text
        prints of every open memex whose ``[guard] remote_ok`` is false are withheld)."""
        from ..guard.egress import check, remote_prints

        prints = remote_prints()
        secrets = self.redact
        if prints is None:
            return secrets

        def redact(text: str) -> str:
            return check(secrets(text) if secrets else text, prints).text

        return redact

    def _with_retries(self, p: Provider, once: Callable[[], Any]) -> Any:
        attempt = 0
        while True:
            try:
                return once()
            except _Transient as t:
                if attempt >= p.max_retries:
                    raise t.final(p, attempt + 1) from None
                if t.retry_after is not None and t.retry_after > p.max_backoff:
                    raise RateLimitedError(
                        p.name, f"{t}; asked to wait {t.retry_after:.0f}s, more than "
                        f"max_backoff={p.max_backoff:g}s", t.retry_after) from None
                delay = t.retry_after
                if delay is None:
                    delay = min(p.max_backoff, p.backoff * 2 ** attempt) * (0.5 + self._rng())
                log.warning("%s: %s; retry %d/%d in %.2fs", p.name, t, attempt + 1,
                            p.max_retries, delay)
                self._sleep(delay)
                attempt += 1

    def _post(self, p: Provider, data: bytes, headers: dict[str, str],
              key: str | None) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request; a non-2xx answer becomes ``_Transient`` or ``ProviderError``."""
        url = f"{p.base_url}/chat/completions"
        log.debug("%s: POST %s", p.name, url)
        try:
            conn, resp = _http.open_post(url, data, headers, connect_timeout=p.connect_timeout,
                                         read_timeout=p.timeout)
        except ConnectionRefusedError:
            msg = f"connection refused at {p.base_url}: is the server running?"
            if p.local:  # nothing listens there: retrying will not help, fail over now
                raise ProviderError(p.name, msg) from None
            raise _Transient(msg) from None
        except socket.gaierror as e:
            raise ProviderError(p.name, f"cannot resolve the host of {p.base_url} ({e}): "
                                "check base_url and the network") from None
        except ssl.SSLError as e:
            raise ProviderError(p.name, f"TLS failed with {p.base_url} ({e})") from None
        except ValueError as e:
            raise ProviderError(p.name, f"bad base_url: {e}") from None
        except TimeoutError:
            raise _Transient(f"timed out talking to {p.base_url} (connect_timeout="
                             f"{p.connect_timeout:g}s, timeout={p.timeout:g}s)") from None
        except (OSError, http.client.HTTPException) as e:
            raise _Transient(f"connection to {p.base_url} failed: "
                             f"{_scrub(str(e) or type(e).__name__, key)}") from None
        if 200 <= resp.status < 300:
            return conn, resp
        try:
            detail = _scrub(_http.error_detail(resp), key)
        finally:
            conn.close()
        status = resp.status
        where = f"HTTP {status} from {p.base_url}" + (f": {detail}" if detail else "")
        if status in _RETRY_STATUS:
            raise _Transient(where, status, _http.retry_after_seconds(
                resp.getheader("Retry-After")))
        if status in (401, 403):
            if p.api_key_env:
                raise NeedsKeyError(p.name, p.api_key_env, f"{p.name}: {where}: check the API "
                                    f"key in {p.api_key_env} (it was refused)")
            raise ProviderError(p.name, f"{where}: this server wants an API key: set "
                                f"llm.providers.{p.name}.api_key_env to the variable holding it",
                                status)
        if status == 404:
            raise ProviderError(p.name, f"{where}: check base_url (usually ends in /v1) and the "
                                "model name", status)
        raise ProviderError(p.name, where, status)

    def _complete_once(self, p: Provider, data: bytes, headers: dict[str, str],
                       key: str | None) -> Completion:
        conn, resp = self._post(p, data, headers, key)
        try:
            raw = _http.read_answer(resp, _http.answer_deadline(p.timeout))
        except _http.AnswerLimit as e:
            raise ProviderError(p.name, f"{p.base_url}: {e}") from None
        except TimeoutError:
            raise _Transient(f"timed out reading the answer from {p.base_url} "
                             f"(timeout={p.timeout:g}s)") from None
        except (OSError, http.client.HTTPException) as e:
            raise _Transient(f"the answer from {p.base_url} broke off: "
                             f"{e or type(e).__name__}") from None
        finally:
            conn.close()
        return _parse_completion(p, raw, key)

    def _stream_once(self, p: Provider, data: bytes, headers: dict[str, str],
                     key: str | None) -> tuple[StreamEvent, Iterator[StreamEvent]]:
        conn, resp = self._post(p, data, headers, key)
        ctype = (resp.getheader("Content-Type") or "").lower()
        events = (_json_as_stream(p, conn, resp, key) if "application/json" in ctype
                  else _sse_events(p, conn, resp, key))
        try:
            first = next(events)
        except StopIteration:
            raise ProviderError(p.name, "the stream ended without any data") from None
        except BaseException:
            events.close()
            raise
        return first, events

    # -- results and failures ------------------------------------------------------------------
    def _finish(self, p: Provider, done: Completion,
                schema: tuple[str, dict[str, Any]] | None) -> Completion:
        if schema is None or (done.tool_calls and not done.text.strip()):
            return done  # no JSON asked for, or the model chose to call a tool instead
        try:
            value = parse_json_answer(done.text, schema[1], p.name)
        except BadModelOutput as e:
            if done.finish_reason == "length":
                raise BadModelOutput(f"{e.reason}; the answer was cut off (finish_reason="
                                     "length): raise max_tokens", e.raw, p.name) from None
            raise
        return Completion(done.text, done.tool_calls, done.finish_reason, done.model,
                          done.usage, done.provider, value)

    @staticmethod
    def _note_failure(p: Provider, e: GatewayError,
                      failures: list[tuple[str, GatewayError]]) -> None:
        log.warning("llm provider %s failed: %s", p.name, e)
        failures.append((p.name, e))

    def _all_failed(self, failures: list[tuple[str, GatewayError]]) -> GatewayError:
        if not failures:
            return GatewayError("no LLM provider is configured: add [llm.providers.NAME] to the "
                                "config, or set OPENCORTEX_LLM_BASE_URL and OPENCORTEX_LLM_MODEL")
        if len(failures) == 1:
            err = failures[0][1]
            err.failures = list(failures)
            return err
        lines = "; ".join(str(e) for _, e in failures)
        msg = f"all {len(failures)} LLM providers failed: {lines}"
        kinds = {type(e) for _, e in failures}
        if kinds == {NeedsKeyError}:
            first = cast(NeedsKeyError, failures[0][1])  # kinds == {NeedsKeyError}
            err = NeedsKeyError(failures[0][0], first.env_var, msg)
        elif kinds == {RateLimitedError}:
            hints = [e.retry_after for _, e in failures
                     if isinstance(e, RateLimitedError) and e.retry_after is not None]
            err = RateLimitedError(failures[0][0], msg, min(hints) if hints else None,
                                   prefixed=False)
        else:
            err = GatewayError(msg)
        err.failures = list(failures)
        return err


# -- helpers -------------------------------------------------------------------------------------
def _scrub(text: str, key: str | None) -> str:
    """Never let a key echoed by a server reach a message."""
    return text.replace(key, "***") if key else text


def _schema_parts(json_schema: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """``(name, schema)`` from a bare JSON Schema or an OpenAI-style ``{"name", "schema"}``."""
    if json_schema is None:
        return None
    js = dict(json_schema)
    if "schema" in js and set(js) <= {"name", "schema", "strict", "description"}:
        name, schema = str(js.get("name") or "answer"), dict(js["schema"])
    else:
        name, schema = str(js.get("title") or "answer"), js
    return _SCHEMA_NAME.sub("_", name)[:64] or "answer", schema


def _add_json_instruction(wire: list[dict[str, Any]], schema: dict[str, Any]) -> None:
    """For ``json_object`` mode: tell the model the schema (the mode itself only forces JSON)."""
    text = ("Answer with one JSON object only — no prose, no code fences — that conforms to "
            f"this JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}")
    if wire and wire[0]["role"] == "system":
        wire[0]["content"] = f"{wire[0]['content'] or ''}\n\n{text}".lstrip()
    else:
        wire.insert(0, {"role": "system", "content": text})


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _parse_completion(p: Provider, raw: bytes | dict[str, Any], key: str | None) -> Completion:
    try:
        payload = raw if isinstance(raw, dict) else json.loads(raw)
        choices = payload.get("choices")
        if not choices:
            if payload.get("error"):
                raise ProviderError(p.name, "the server answered with an error: "
                                    + _scrub(_http.detail_from_body(payload), key))
            raise KeyError("choices")
        choice = choices[0]
        msg = choice.get("message") or {}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        snippet = _scrub(raw[:200].decode("utf-8", "replace") if isinstance(raw, bytes)
                         else json.dumps(raw)[:200], key)
        raise ProviderError(p.name, f"the answer is not an OpenAI chat completion ({e!r} in "
                            f"{snippet!r}): check base_url points at an OpenAI-compatible API "
                            "(usually ending in /v1)") from None
    calls = tuple(ToolCall(id=c.id or f"call_{i}", name=c.name, arguments=c.arguments)
                  for i, c in enumerate(ToolCall.from_wire(c, p.name)
                                        for c in msg.get("tool_calls") or []))
    return Completion(text=_content_text(msg.get("content")), tool_calls=calls,
                      finish_reason=choice.get("finish_reason"),
                      model=str(payload.get("model") or ""), usage=dict(payload.get("usage") or {}),
                      provider=p.name)


def _json_as_stream(p: Provider, conn: http.client.HTTPConnection,
                    resp: http.client.HTTPResponse, key: str | None
                    ) -> Generator[StreamEvent, None, None]:
    """A server that ignored ``stream: true`` and sent one JSON answer: replay it as a stream."""
    try:
        try:
            raw = _http.read_answer(resp, _http.answer_deadline(p.timeout))
        except _http.AnswerLimit as e:
            raise ProviderError(p.name, f"{p.base_url}: {e}") from None
        except TimeoutError:
            raise _Transient(f"timed out reading the answer from {p.base_url}") from None
        except (OSError, http.client.HTTPException) as e:
            raise _Transient(f"the answer from {p.base_url} broke off: {e}") from None
        done = _parse_completion(p, raw, key)
    finally:
        conn.close()
    if done.text:
        yield TextDelta(done.text)
    for i, c in enumerate(done.tool_calls):
        yield ToolCallDelta(i, c.id, c.name, json.dumps(c.arguments))
    yield done


class _ToolSlots:
    """Assemble streamed tool-call fragments by index (a new id at a used index — as Ollama
    sends parallel calls — opens a new call)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self._slot_of: dict[Any, int] = {}

    def add(self, tc: Mapping[str, Any]) -> ToolCallDelta:
        raw_index, cid = tc.get("index"), tc.get("id") or None
        fn = tc.get("function") or {}
        slot = self._slot_of.get(raw_index)
        if raw_index is None and cid is None and self.calls:
            slot = len(self.calls) - 1
        if slot is None or (cid and self.calls[slot]["id"] and cid != self.calls[slot]["id"]):
            slot = len(self.calls)
            self.calls.append({"id": None, "name": None, "args": []})
            self._slot_of[raw_index] = slot
        call = self.calls[slot]
        if cid and not call["id"]:
            call["id"] = cid
        name = fn.get("name") or None
        if name and not call["name"]:
            call["name"] = name
        args = fn.get("arguments")
        if isinstance(args, dict):
            args = json.dumps(args)
        if args:
            call["args"].append(args)
        return ToolCallDelta(slot, cid, name, args or "")

    def result(self, provider: str) -> tuple[ToolCall, ...]:
        out = []
        for i, c in enumerate(self.calls):
            raw = "".join(c["args"])
            if not c["name"]:
                raise BadModelOutput(f"streamed tool call {i} has no function name", raw, provider)
            out.append(ToolCall(c["id"] or f"call_{i}", c["name"],
                                parse_arguments(raw, c["name"], provider)))
        return tuple(out)


def _sse_events(p: Provider, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse,
                key: str | None) -> Generator[StreamEvent, None, None]:
    """Turn ``data: {chunk}`` events into deltas, then one ``Completion``."""
    text: list[str] = []
    slots = _ToolSlots()
    finish: str | None = None
    model, usage = "", {}
    ended = False
    try:
        for data in _chunks(p, resp):
            if data.strip() == "[DONE]":
                ended = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise ProviderError(p.name, f"the stream sent a malformed chunk "
                                    f"{_scrub(data[:200], key)!r}") from None
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise ProviderError(p.name, "the stream reported an error: "
                                    + _scrub(_http.detail_from_body(chunk), key))
            model = chunk.get("model") or model
            if chunk.get("usage"):
                usage = dict(chunk["usage"])
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or choice.get("message") or {}
                piece = _content_text(delta.get("content"))
                if piece:
                    text.append(piece)
                    yield TextDelta(piece)
                for tc in delta.get("tool_calls") or []:
                    yield slots.add(tc)
                finish = choice.get("finish_reason") or finish
        if not ended and finish is None:  # cut off: neither [DONE] nor a finish_reason came
            raise _Transient(f"the stream from {p.base_url} ended before the answer was "
                             "complete")
    finally:
        conn.close()
    yield Completion(text="".join(text), tool_calls=slots.result(p.name), finish_reason=finish,
                     model=str(model), usage=usage, provider=p.name)


def _chunks(p: Provider, resp: http.client.HTTPResponse) -> Iterator[str]:
    """SSE data payloads; an event whose lines are separate JSON chunks (a server that left out
    the blank separator lines) is split back up.  Read failures become ``_Transient``."""
    events = _http.sse_data(resp, _http.answer_deadline(p.timeout))
    while True:
        try:
            data = next(events)
        except StopIteration:
            return
        except _http.AnswerLimit as e:
            raise ProviderError(p.name, f"{p.base_url}: {e}") from None
        except TimeoutError:
            raise _Transient(f"the stream from {p.base_url} went silent for more than "
                             f"timeout={p.timeout:g}s") from None
        except (OSError, http.client.HTTPException) as e:
            raise _Transient(f"the stream from {p.base_url} broke off: "
                             f"{e or type(e).__name__}") from None
        if "\n" in data:
            try:
                json.loads(data)
            except ValueError:
                yield from (line for line in data.split("\n") if line.strip())
                continue
        yield data
