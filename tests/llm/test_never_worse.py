"""Never worse than offline: every model failure on a real loopback server — invalid JSON,
schema-violating output, a proposal the verifier rejects, a refusal, no answer within the
request's budget — is retried at most once with the reason, then the offline reasoner
answers and the reply says the model's answer was not used.  Also: the prompt's stable
prefix, the structured-output probe, the small profile."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from opencortex.llm import Gateway, Message
from opencortex.memex import Memex
from opencortex.pipeline.kernel import Kernel
from opencortex.reason.reasoner import Decision, Reasoner, is_refusal

from ..retrieval.conftest import HashingEmbedder
from .conftest import FakeLLM, Reply, completion, gateway, provider

NOT_USED = "model's answer was not used"


@pytest.fixture
def mx(memex: Path, tmp_path: Path):
    from opencortex.retrieval.hybrid import Retriever

    m = Memex(memex, index=tmp_path / "i.sqlite3")
    m.sync()
    m.derived("retriever", lambda: Retriever(m, embedder=HashingEmbedder()))
    yield m
    m.close()


def _kernel(mx: Memex, srv: FakeLLM, *, profile: str = "small", budget: float = 20,
            seen: list[Decision] | None = None, **kw: Any) -> Kernel:
    gw = gateway(provider(srv, max_retries=0, **kw), profile=profile, budget=budget)
    return Kernel(mx, reasoner=Reasoner(gw, observer=seen.append if seen is not None else None),
                  record_sessions=False)


def _reply(obj: Any) -> Reply:
    return Reply(body=completion(obj if isinstance(obj, str) else json.dumps(obj)))


def test_small_talk_goes_to_the_model_on_the_small_profile(mx: Memex, server: FakeLLM) -> None:
    server.push(_reply({"action": "reply", "text": "I'm OpenCortex, your notes assistant."}))
    k = _kernel(mx, server)
    try:
        assert k.ask("hi! who are you?") == ["I'm OpenCortex, your notes assistant."]
    finally:
        k.shutdown()
    assert len(server.seen) == 1  # small profile: the router asked no model
    body = server.last.body
    assert body["max_tokens"] == 160
    system, user = body["messages"]
    assert system["role"] == "system" and "Reply to the person" in system["content"]
    assert user["content"].startswith("Now: ") and user["content"].endswith(
        "Person: hi! who are you?")


@pytest.mark.parametrize("bad", [
    "this is not JSON at all",                                   # invalid JSON
    {"action": "dance", "text": "la la"},                        # schema: action not in enum
    {"action": "reply", "text": "   "},                          # the verifier rejects it
    {"action": "reply", "text": "I'm sorry, but I can't assist with that."},  # a refusal
], ids=["invalid-json", "schema", "rejected", "refusal"])
def test_each_failure_is_retried_once_then_answered_offline(mx: Memex, server: FakeLLM,
                                                            bad: Any) -> None:
    server.push(_reply(bad), _reply(bad), _reply({"action": "reply", "text": "never asked"}))
    seen: list[Decision] = []
    k = _kernel(mx, server, seen=seen)
    try:
        out = k.ask("hi! who are you?")
    finally:
        k.shutdown()
    assert len(server.seen) == 2  # one try and one retry, never a third
    retry = server.seen[1].body["messages"]
    assert retry[-1]["role"] == "user" and "rejected" in retry[-1]["content"]
    assert retry[:2] == server.seen[0].body["messages"][:2]  # same prompt, reason appended
    assert len(out) == 1 and NOT_USED in out[0] and "never asked" not in out[0]
    chat = next(d for d in seen if d.skill == "chat")
    assert chat.via == "offline" and chat.fallback and len(chat.calls) == 2


def test_a_rejected_route_falls_back_to_the_offline_router(mx: Memex, server: FakeLLM) -> None:
    """Large profile: the router asks the model; two unusable routes → the deterministic
    decomposition runs (the agenda), as offline would."""
    server.push(_reply({"action": "route", "intents": []}),
                _reply({"action": "route", "intents": []}))
    k = _kernel(mx, server, profile="large")
    try:
        out = k.ask("show my agenda")
        offline = Kernel(mx, record_sessions=False)
        try:
            assert out == offline.ask("show my agenda")
        finally:
            offline.shutdown()
    finally:
        k.shutdown()
    assert len(server.seen) == 2


def test_no_answer_within_the_budget_gives_the_offline_answer_at_once(
        mx: Memex, server: FakeLLM) -> None:
    server.push(Reply(delay=3.0, body=completion(json.dumps(
        {"action": "reply", "text": "late words"}))))
    seen: list[Decision] = []
    k = _kernel(mx, server, budget=0.5, timeout=10.0, seen=seen)
    try:
        t0 = time.monotonic()
        out = k.ask("hi! who are you?")
        took = time.monotonic() - t0
    finally:
        k.shutdown()
    assert took < 2.5, took
    assert len(out) == 1 and NOT_USED in out[0] and "0.5s budget" in out[0]
    assert len(server.seen) == 1  # no retry after the budget is spent
    time.sleep(3)  # the late answer arrives after the memex is gone: dropped, no crash
    assert "late words" not in out[0]


def test_a_model_server_that_is_down_answers_offline(mx: Memex, server: FakeLLM) -> None:
    server.push(*[Reply(500, {"error": {"message": "loading model"}})] * 4)  # each form
    k = _kernel(mx, server)
    try:
        out = k.ask("hi there")
    finally:
        k.shutdown()
    assert len(out) == 1 and NOT_USED in out[0] and "loading model" in out[0]


def test_the_prompt_prefix_is_byte_identical_across_calls(mx: Memex, server: FakeLLM) -> None:
    server.push(_reply({"action": "reply", "text": "one"}),
                _reply({"action": "reply", "text": "two"}))
    k = _kernel(mx, server)
    try:
        k.ask("hello, how are you today?")
        k.ask("what's a good name for a cat?")
    finally:
        k.shutdown()
    a, b = (json.dumps(s.body, ensure_ascii=False) for s in server.seen)
    assert a != b
    volatile = '{"role": "user", "content": "Now: '  # time, then the request
    assert a.index(volatile) == b.index(volatile)
    assert a[:a.index(volatile)] == b[:b.index(volatile)]
    first, second = server.seen[0].body, server.seen[1].body
    assert first["messages"][0] == second["messages"][0]
    assert first["response_format"] == second["response_format"]


def test_structured_output_is_probed_once_and_remembered(server: FakeLLM) -> None:
    """llama-cpp-python answers OpenAI's json_schema form with HTTP 500: the probe moves
    on at once (no retries of a "server error") to json_object + schema, and later calls
    send that form directly."""
    schema = {"type": "object", "properties": {"action": {"type": "string"}},
              "required": ["action"]}
    server.push(Reply(500, {"error": {"message": "Internal Server Error"}}),
                _reply({"action": "reply"}), _reply({"action": "reply"}))
    gw = gateway(provider(server, max_retries=2))
    assert gw.complete([Message("user", "x")], json_schema=schema).data == {"action": "reply"}
    assert gw.output_form("local") == "json_object_schema"
    gw.complete([Message("user", "y")], json_schema=schema)
    forms = [s.body["response_format"] for s in server.seen]
    assert forms[0]["type"] == "json_schema"
    assert forms[1] == forms[2] == {"type": "json_object", "schema": schema}


def test_structured_output_falls_back_to_the_prompt_alone(server: FakeLLM) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    server.push(*[Reply(400, {"error": {"message": "unknown field response_format"}})] * 3,
                _reply({"a": 1}))
    gw = gateway(provider(server))
    assert gw.complete([Message("user", "x")], json_schema=schema).data == {"a": 1}
    last = server.last.body
    assert "response_format" not in last and json.dumps(schema) in last["messages"][0]["content"]
    assert gw.output_form("local") == "plain"


def test_gtd_op_near_misses_are_mapped_not_rejected(mx: Memex, server: FakeLLM) -> None:
    from opencortex.skills.router import _normal_op

    assert _normal_op({"target": "gtd", "op": "mark", "task": "dentist"}) == {
        "target": "gtd", "op": "todo", "task": "dentist", "state": "DONE"}
    assert _normal_op({"target": "gtd", "op": "Reschedule"})["op"] == "schedule"
    assert "op" not in _normal_op({"target": "gtd", "op": "frobnicate"})
    assert _normal_op({"target": "notes", "op": "mark"}) == {"target": "notes", "op": "mark"}


def test_profile_and_budget_from_config_and_presets() -> None:
    gw = Gateway.from_config({"llm": {"providers": {"local": {
        "preset": "llamacpp", "base_url": "http://127.0.0.1:8090/v1",
        "models": {"fast": "qwen"}}}}}, env={})
    assert gw.profile.name == "small" and gw.budget == gw.profile.budget
    gw = Gateway.from_config({"llm": {"profile": "large", "budget": 12, "providers": {
        "local": {"preset": "ollama", "models": {"fast": "q"}}}}}, env={})
    assert gw.profile.name == "large" and gw.budget == 12.0
    gw = Gateway.from_config({}, env={"OPENCORTEX_LLM_BASE_URL": "llamacpp",
                                      "OPENCORTEX_LLM_MODEL": "q",
                                      "OPENCORTEX_LLM_BUDGET": "7"})
    assert gw.profile.name == "small" and gw.budget == 7.0
    from opencortex.errors import ConfigError

    with pytest.raises(ConfigError, match=r"llm\.profile must be one of large, small"):
        Gateway.from_config({"llm": {"profile": "tiny", "providers": {
            "l": {"preset": "ollama", "models": {"fast": "q"}}}}}, env={})


def test_refusal_detection() -> None:
    assert is_refusal("I'm sorry, but I can't assist with that.")
    assert is_refusal("Sorry, I cannot help with that request.")
    assert is_refusal("As an AI, I don't have personal notes.")
    assert not is_refusal("Sorry to hear that! Your dentist task is due Friday.")
    assert not is_refusal("I can't find a note about that; try another word.")


def test_a_model_route_keeps_the_slot_grammars_gtd_reading(mx: Memex, server: FakeLLM) -> None:
    """Large profile: the model routes "remind me to call Sam friday at 3pm" to gtd but
    drops the time; the GTD clause the slot grammar read goes on with its date."""
    from opencortex.skills.router import supported

    text = "remind me to call Sam friday at 3pm"
    out = supported([{"target": "gtd", "op": "capture", "task": "call Sam"}], text)
    assert [i["target"] for i in out] == ["gtd"]
    assert "friday at 3pm" in out[0].get("text", "")
