"""Gateway.complete against a real loopback server: request shape, answers, JSON mode,
retries, timeouts, the cascade, keys and redaction."""

from __future__ import annotations

import json
import socket

import pytest

from opencortex.errors import OpenCortexError
from opencortex.llm import (
    BadModelOutput,
    Gateway,
    GatewayError,
    Message,
    NeedsKeyError,
    ProviderError,
    RateLimitedError,
    ToolCall,
    ToolSpec,
)

from .conftest import FAST, SMART, Reply, Sleeps, completion, gateway, provider, tool_call

USER = [Message("user", "hello")]
SCHEMA = {"type": "object", "properties": {
    "title": {"type": "string"},
    "priority": {"type": "string", "enum": ["A", "B", "C"]},
    "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["title", "priority"], "additionalProperties": False}
WEATHER = ToolSpec("get_weather", "Current weather for a city.", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def test_plain_completion_and_request_shape(server):
    server.push(Reply(body=completion("Hi there", model="qwen2.5:3b")))
    out = gateway(provider(server)).complete(
        [Message("system", "Be brief."), Message("user", "hello")])
    assert out.text == "Hi there"
    assert out.finish_reason == "stop"
    assert out.model == "qwen2.5:3b"
    assert out.usage == {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    assert out.provider == "local" and out.tool_calls == () and out.data is None
    seen = server.last
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {"model": FAST, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}],
        "temperature": 0, "stream": False}
    assert "Authorization" not in seen.headers
    assert seen.headers["Content-Type"] == "application/json"


def test_smart_tier_max_tokens_temperature_and_dict_messages(server):
    gateway(provider(server)).complete([{"role": "user", "content": "hi"}], tier="smart",
                                       temperature=0.7, max_tokens=50)
    body = server.last.body
    assert body["model"] == SMART and body["max_tokens"] == 50 and body["temperature"] == 0.7


def test_unknown_tier_falls_back_to_a_configured_model(server):
    gateway(provider(server, models={"fast": "only"})).complete(USER, tier="smart")
    assert server.last.body["model"] == "only"


def test_authorization_sent_only_when_a_key_is_configured(server, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-secret-123")
    p = provider(server, api_key_env="TEST_LLM_KEY", headers={"X-Title": "OpenCortex"})
    gw = gateway(p)
    gw.complete(USER)
    assert server.last.headers["Authorization"] == "Bearer sk-test-secret-123"
    assert server.last.headers["X-Title"] == "OpenCortex"
    for text in (repr(p), repr(gw), str(gw.status())):
        assert "sk-test-secret-123" not in text
    assert gw.status()[0]["key"] == "set"


def test_missing_key_raises_needs_key_naming_the_env_var(server, monkeypatch):
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    with pytest.raises(NeedsKeyError, match="TEST_LLM_KEY") as ei:
        gateway(provider(server, api_key_env="TEST_LLM_KEY")).complete(USER)
    assert ei.value.env_var == "TEST_LLM_KEY"
    assert isinstance(ei.value, GatewayError) and isinstance(ei.value, OpenCortexError)
    assert server.seen == []  # nothing was sent


def test_optional_key_missing_sends_no_header(server):
    gateway(provider(server, api_key_env="TEST_LLM_KEY", key_required=False)).complete(USER)
    assert "Authorization" not in server.last.headers


def test_refused_key_is_needs_key_and_never_echoed(server, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-leaky-456")
    server.push(Reply(401, {"error": {"message": "Incorrect API key provided: sk-leaky-456",
                                      "type": "invalid_request_error"}}))
    with pytest.raises(NeedsKeyError) as ei:
        gateway(provider(server, api_key_env="TEST_LLM_KEY")).complete(USER)
    assert "sk-leaky-456" not in str(ei.value) and "TEST_LLM_KEY" in str(ei.value)
    assert "***" in str(ei.value)
    assert len(server.seen) == 1  # a refused key is not retried


def test_tools_are_sent_and_tool_calls_parsed(server):
    server.push(Reply(body=completion(None, finish="tool_calls", tool_calls=[
        tool_call("get_weather", '{"city": "Paris"}', "call_1"),
        tool_call("get_weather", '{"city": "Oslo"}', "call_2")])))
    out = gateway(provider(server)).complete(USER, tools=[WEATHER])
    assert server.last.body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": WEATHER.parameters}}]
    assert out.text == "" and out.finish_reason == "tool_calls"
    assert out.tool_calls == (ToolCall("call_1", "get_weather", {"city": "Paris"}),
                              ToolCall("call_2", "get_weather", {"city": "Oslo"}))


def test_tool_round_trip_messages_are_serialised(server):
    history = [Message("user", "weather?"),
               Message("assistant", None, tool_calls=[ToolCall("call_1", "get_weather",
                                                               {"city": "Paris"})]),
               Message("tool", '{"temp": 21}', tool_call_id="call_1")]
    gateway(provider(server)).complete(history, tools=[WEATHER])
    msgs = server.last.body["messages"]
    assert msgs[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    assert msgs[2] == {"role": "tool", "content": '{"temp": 21}', "tool_call_id": "call_1"}


def test_malformed_tool_arguments_are_bad_model_output(server):
    server.push(Reply(body=completion(None, finish="tool_calls", tool_calls=[
        tool_call("get_weather", '{"city": "Par')])))
    with pytest.raises(BadModelOutput, match="not valid JSON") as ei:
        gateway(provider(server)).complete(USER, tools=[WEATHER])
    assert ei.value.raw == '{"city": "Par'
    assert len(server.seen) == 1


def test_tool_arguments_are_never_evaluated(server):
    server.push(Reply(body=completion(None, finish="tool_calls", tool_calls=[
        tool_call("f", "__import__('os').system('echo pwned')")])))
    with pytest.raises(BadModelOutput):
        gateway(provider(server)).complete(USER, tools=[WEATHER])


def test_json_schema_request_and_parsed_data(server):
    answer = {"title": "Buy milk", "priority": "A", "tags": ["home"]}
    server.push(Reply(body=completion(json.dumps(answer))))
    out = gateway(provider(server)).complete(USER, json_schema=SCHEMA)
    assert out.data == answer
    assert server.last.body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "answer", "schema": SCHEMA, "strict": True}}
    assert server.last.body["messages"] == [{"role": "user", "content": "hello"}]


def test_json_schema_named_form(server):
    server.push(Reply(body=completion('{"title": "x", "priority": "B"}')))
    gateway(provider(server)).complete(USER, json_schema={"name": "todo item", "schema": SCHEMA})
    assert server.last.body["response_format"]["json_schema"]["name"] == "todo_item"


def test_malformed_json_answer_is_bad_model_output_with_raw_text(server):
    server.push(Reply(body=completion('{"title": "Buy milk", priority: A')))
    with pytest.raises(BadModelOutput, match="not valid JSON") as ei:
        gateway(provider(server)).complete(USER, json_schema=SCHEMA)
    assert ei.value.raw == '{"title": "Buy milk", priority: A'
    assert ei.value.provider == "local"
    assert "rejected" in ei.value.feedback
    assert len(server.seen) == 1  # not retried, not cascaded: the caller retries with feedback


def test_schema_mismatch_is_bad_model_output_with_path(server):
    server.push(Reply(body=completion('{"title": "x", "priority": "Z", "extra": 1}')))
    with pytest.raises(BadModelOutput) as ei:
        gateway(provider(server)).complete(USER, json_schema=SCHEMA)
    assert "$.priority" in ei.value.reason and "'extra'" in ei.value.reason


def test_truncated_json_says_raise_max_tokens(server):
    server.push(Reply(body=completion('{"title": "x", "pri', finish="length")))
    with pytest.raises(BadModelOutput, match="max_tokens"):
        gateway(provider(server)).complete(USER, json_schema=SCHEMA, max_tokens=5)


def test_fenced_json_from_a_local_model_is_accepted(server):
    server.push(Reply(body=completion('<think>hmm</think>\n```json\n{"title": "x", '
                                      '"priority": "C"}\n```')))
    assert gateway(provider(server)).complete(USER, json_schema=SCHEMA).data["priority"] == "C"


def test_json_object_mode_when_schema_unsupported(server):
    server.push(Reply(body=completion('{"title": "x", "priority": "A"}')))
    out = gateway(provider(server, supports_json_schema=False)).complete(
        [Message("system", "You file tasks."), Message("user", "hello")], json_schema=SCHEMA)
    body = server.last.body
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You file tasks.")
    assert "JSON" in system["content"] and json.dumps(SCHEMA) in system["content"]
    assert out.data == {"title": "x", "priority": "A"}


def test_json_object_mode_adds_a_system_message_if_none(server):
    server.push(Reply(body=completion('{"title": "x", "priority": "A"}')))
    gateway(provider(server, supports_json_schema=False)).complete(USER, json_schema=SCHEMA)
    msgs = server.last.body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"]


def test_json_schema_rejected_with_400_downgrades_to_json_object(server):
    server.push(Reply(400, {"error": {"message": "response_format json_schema not supported"}}),
                Reply(body=completion('{"title": "x", "priority": "A"}')))
    out = gateway(provider(server)).complete(USER, json_schema=SCHEMA)
    assert [s.body["response_format"]["type"] for s in server.seen] == ["json_schema",
                                                                        "json_object"]
    assert out.data["title"] == "x"


def test_429_honours_retry_after_then_succeeds(server):
    server.push(Reply(429, {"error": {"message": "Rate limit reached"}},
                      headers={"Retry-After": "1"}),
                Reply(body=completion("after wait")))
    sleeps = Sleeps()
    out = gateway(provider(server), sleeps=sleeps).complete(USER)
    assert out.text == "after wait"
    assert sleeps == [1.0]
    assert len(server.seen) == 2


def test_429_without_retry_after_uses_jittered_backoff(server):
    server.push(Reply(429), Reply(429), Reply())
    sleeps = Sleeps()
    gateway(provider(server, backoff=0.1), sleeps=sleeps).complete(USER)
    assert len(sleeps) == 2
    assert 0.05 <= sleeps[0] <= 0.15 and 0.1 <= sleeps[1] <= 0.3


def test_429_exhausted_is_rate_limited(server):
    server.push(*[Reply(429, {"error": {"message": "slow down"}},
                        headers={"Retry-After": "2"})] * 3)
    with pytest.raises(RateLimitedError, match="slow down") as ei:
        gateway(provider(server)).complete(USER)
    assert ei.value.retry_after == 2.0
    assert len(server.seen) == 3  # 1 + max_retries


def test_retry_after_longer_than_max_backoff_fails_over_at_once(make_server):
    a, b = make_server(), make_server()
    a.push(Reply(429, headers={"Retry-After": "3600"}))
    sleeps = Sleeps()
    out = gateway(provider(a, "a"), provider(b, "b"), sleeps=sleeps).complete(USER)
    assert out.provider == "b" and sleeps == [] and len(a.seen) == 1


def test_500_then_success(server):
    server.push(Reply(500, {"error": {"message": "boom"}}), Reply(body=completion("fine")))
    sleeps = Sleeps()
    assert gateway(provider(server), sleeps=sleeps).complete(USER).text == "fine"
    assert len(sleeps) == 1 and len(server.seen) == 2


def test_real_backoff_sleep_is_short_in_tests(server):
    server.push(Reply(503), Reply(502))
    out = Gateway([provider(server)]).complete(USER)  # real time.sleep, tiny backoff
    assert out.text == "ok" and len(server.seen) == 3


def test_timeout_is_retried(server):
    server.push(Reply(delay=1.0), Reply(body=completion("quick now")))
    out = gateway(provider(server, timeout=0.2)).complete(USER)
    assert out.text == "quick now" and len(server.seen) == 2


def test_timeout_exhausted_cascades_to_next_provider(make_server):
    slow, good = make_server(), make_server()
    slow.push(Reply(delay=1.0), Reply(delay=1.0))
    good.push(Reply(body=completion("from good")))
    out = gateway(provider(slow, "slow", timeout=0.2, max_retries=1),
                  provider(good, "good")).complete(USER)
    assert out.text == "from good" and out.provider == "good"
    assert len(slow.seen) == 2


def test_cascade_from_failing_provider_to_working_one(make_server):
    bad, good = make_server(), make_server()
    bad.push(*[Reply(500)] * 3)
    out = gateway(provider(bad, "bad"), provider(good, "good", models={"fast": "g"})).complete(
        USER)
    assert out.provider == "good" and good.last.body["model"] == "g"
    assert len(bad.seen) == 3


def test_cascade_skips_a_provider_without_key(make_server, monkeypatch):
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    keyed, good = make_server(), make_server()
    out = gateway(provider(keyed, "keyed", api_key_env="TEST_LLM_KEY"),
                  provider(good, "good")).complete(USER)
    assert out.provider == "good" and keyed.seen == []


def test_client_error_is_not_retried_but_falls_through(make_server):
    a, b = make_server(), make_server()
    a.push(Reply(400, {"error": {"message": "model 'x' not found"}}))
    sleeps = Sleeps()
    assert gateway(provider(a, "a"), provider(b, "b"), sleeps=sleeps).complete(USER).provider \
        == "b"
    assert len(a.seen) == 1 and sleeps == []


def test_all_failing_lists_every_provider(make_server, monkeypatch):
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    a, b = make_server(), make_server()
    a.push(*[Reply(503, {"error": {"message": "overloaded"}})] * 3)
    b.push(Reply(404, {"error": {"message": "no such model"}}))
    with pytest.raises(GatewayError) as ei:
        gateway(provider(a, "alpha"), provider(b, "beta"),
                provider(b, "gamma", api_key_env="TEST_LLM_KEY")).complete(USER)
    msg = str(ei.value)
    assert "alpha: HTTP 503" in msg and "overloaded" in msg
    assert "beta: HTTP 404" in msg and "no such model" in msg
    assert "gamma" in msg and "TEST_LLM_KEY" in msg
    assert [n for n, _ in ei.value.failures] == ["alpha", "beta", "gamma"]
    assert isinstance(ei.value.failures[0][1], ProviderError)
    assert isinstance(ei.value.failures[2][1], NeedsKeyError)


def test_all_missing_keys_is_needs_key(make_server, monkeypatch):
    monkeypatch.delenv("KEY_A", raising=False)
    monkeypatch.delenv("KEY_B", raising=False)
    a = make_server()
    with pytest.raises(NeedsKeyError, match=r"KEY_A.*KEY_B"):
        gateway(provider(a, "a", api_key_env="KEY_A"),
                provider(a, "b", api_key_env="KEY_B")).complete(USER)


def test_connection_refused_on_loopback_fails_over_without_retry(server):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    from opencortex.llm import Provider

    dead = Provider("dead", f"http://127.0.0.1:{port}/v1", models={"fast": "m"}, backoff=0.001)
    sleeps = Sleeps()
    out = gateway(dead, provider(server), sleeps=sleeps).complete(USER)
    assert out.provider == "local" and sleeps == []


def test_non_openai_answer_is_a_provider_failure(make_server):
    a, b = make_server(), make_server()
    a.push(Reply(body="<html>welcome to nginx</html>"))
    out = gateway(provider(a, "a"), provider(b, "b")).complete(USER)
    assert out.provider == "b"
    with pytest.raises(ProviderError, match="not an OpenAI chat completion"):
        a.push(Reply(body={"hello": "world"}))
        gateway(provider(a, "a")).complete(USER)


def test_error_object_in_a_200_answer(server):
    server.push(Reply(body={"error": {"message": "upstream provider down", "code": 502}}))
    with pytest.raises(ProviderError, match="upstream provider down"):
        gateway(provider(server)).complete(USER)


def test_redact_applied_for_non_local_provider(server):
    def redact(text: str) -> str:
        return text.replace("hunter2", "[REDACTED]")

    history = [Message("system", "password is hunter2"), Message("user", "say hunter2"),
               Message("assistant", None, tool_calls=[ToolCall("c1", "note", {
                   "text": "pw hunter2", "nested": ["hunter2", 3]})]),
               Message("tool", "saved hunter2", tool_call_id="c1")]
    remote = provider(server, "remote", local=False)
    gateway(remote, redact=redact).complete(history)
    sent = json.dumps(server.last.body)
    assert "hunter2" not in sent and sent.count("[REDACTED]") == 5
    args = json.loads(server.last.body["messages"][2]["tool_calls"][0]["function"]["arguments"])
    assert args == {"text": "pw [REDACTED]", "nested": ["[REDACTED]", 3]}


def test_redact_not_applied_for_loopback_provider(server):
    p = provider(server)
    assert p.local is True
    gateway(p, redact=lambda t: "XXX").complete([Message("user", "hunter2")])
    assert server.last.body["messages"][0]["content"] == "hunter2"


def test_redact_failure_sends_nothing(server):
    def broken(text: str) -> str:
        raise RuntimeError("guard failed")

    with pytest.raises(RuntimeError):
        gateway(provider(server, local=False), redact=broken).complete(USER)
    assert server.seen == []


def test_unconfigured_gateway():
    gw = Gateway()
    assert gw.configured is False
    with pytest.raises(GatewayError, match="no LLM provider is configured"):
        gw.complete(USER)
    with pytest.raises(GatewayError):
        list(gw.stream(USER))


def test_missing_model_for_tier_is_a_provider_failure(server):
    with pytest.raises(ProviderError, match="no model configured"):
        gateway(provider(server, models={})).complete(USER)


def test_temperature_none_is_not_sent(server):
    gateway(provider(server)).complete(USER, temperature=None)
    assert "temperature" not in server.last.body


def test_tool_call_instead_of_json_is_not_bad_output(server):
    server.push(Reply(body=completion(None, finish="tool_calls", tool_calls=[
        tool_call("get_weather", '{"city": "Rome"}')])))
    out = gateway(provider(server)).complete(USER, json_schema=SCHEMA, tools=[WEATHER])
    assert out.data is None and out.tool_calls[0].arguments == {"city": "Rome"}


def test_all_rate_limited_is_rate_limited(make_server):
    a, b = make_server(), make_server()
    a.push(Reply(429, headers={"Retry-After": "600"}))
    b.push(Reply(429, headers={"Retry-After": "900"}))
    with pytest.raises(RateLimitedError, match="all 2 LLM providers failed") as ei:
        gateway(provider(a, "a"), provider(b, "b")).complete(USER)
    assert ei.value.retry_after == 600.0 and len(ei.value.failures) == 2
