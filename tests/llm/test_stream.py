"""Gateway.stream against a real loopback server speaking Server-Sent Events."""

from __future__ import annotations

import json

import pytest

from opencortex.llm import (
    BadModelOutput,
    Completion,
    Message,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
)

from .conftest import FAST, Reply, Sleeps, chunk, completion, gateway, provider, text_stream

USER = [Message("user", "hello")]
TOOL = ToolSpec("search", "Search the memex.", {
    "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})


def _split(events):
    deltas = [e for e in events if not isinstance(e, Completion)]
    finals = [e for e in events if isinstance(e, Completion)]
    assert len(finals) == 1 and events[-1] is finals[0], "exactly one Completion, last"
    return deltas, finals[0]


def test_text_stream(server):
    server.push(Reply(sse=text_stream("Hel", "lo", " world")))
    deltas, done = _split(list(gateway(provider(server)).stream(USER)))
    assert deltas == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" world")]
    assert done.text == "Hello world" and done.finish_reason == "stop"
    assert done.model == "served-model" and done.provider == "local"
    body = server.last.body
    assert body["stream"] is True and body["model"] == FAST
    assert "stream_options" not in body
    assert server.last.headers["Accept"] == "text/event-stream"


def test_stream_usage_requested_and_read(server):
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    events = text_stream("a", "b")
    events.insert(-1, {"id": "x", "object": "chat.completion.chunk", "created": 1,
                       "model": "served-model", "choices": [], "usage": usage})
    server.push(Reply(sse=events))
    _, done = _split(list(gateway(provider(server, stream_usage=True)).stream(USER)))
    assert server.last.body["stream_options"] == {"include_usage": True}
    assert done.usage == usage and done.text == "ab"


def test_tool_call_deltas_are_assembled_by_index(server):
    server.push(Reply(sse=[
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "search", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                               "function": {"name": "search", "arguments": '{"q"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"org mode"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "emacs"}'}}]}),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n"]))
    deltas, done = _split(list(gateway(provider(server)).stream(USER, tools=[TOOL])))
    assert server.last.body["tools"][0]["function"]["name"] == "search"
    assert deltas[0] == ToolCallDelta(0, "call_1", "search", "")
    assert deltas[1] == ToolCallDelta(0, None, None, '{"q": ')
    assert deltas[2] == ToolCallDelta(1, "call_2", "search", '{"q"')
    assert done.finish_reason == "tool_calls" and done.text == ""
    assert done.tool_calls == (ToolCall("call_1", "search", {"q": "org mode"}),
                               ToolCall("call_2", "search", {"q": "emacs"}))


def test_parallel_calls_reusing_index_zero_with_new_ids(server):
    # Ollama-style: every call at index 0, told apart by id, arguments whole.
    server.push(Reply(sse=[
        chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                               "function": {"name": "search", "arguments": '{"q": "x"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "b", "type": "function",
                               "function": {"name": "search", "arguments": '{"q": "y"}'}}]}),
        chunk({}, "tool_calls"), "data: [DONE]\n\n"]))
    _, done = _split(list(gateway(provider(server)).stream(USER, tools=[TOOL])))
    assert [(c.id, c.arguments) for c in done.tool_calls] == [("a", {"q": "x"}),
                                                              ("b", {"q": "y"})]


def test_malformed_streamed_tool_arguments(server):
    server.push(Reply(sse=[
        chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                               "function": {"name": "search", "arguments": '{"q": '}}]}),
        chunk({}, "tool_calls"), "data: [DONE]\n\n"]))
    with pytest.raises(BadModelOutput, match="search") as ei:
        list(gateway(provider(server)).stream(USER, tools=[TOOL]))
    assert ei.value.raw == '{"q": '


def test_comments_crlf_and_missing_blank_lines_are_tolerated(server):
    one, two = json.dumps(chunk({"content": "A"})), json.dumps(chunk({"content": "B"}))
    server.push(Reply(sse=[": OPENROUTER PROCESSING\r\n\r\n", f"data: {one}\r\n",
                           f"data: {two}\n\n", "event: ping\n\n",
                           f"data: {json.dumps(chunk({}, 'stop'))}\n\ndata: [DONE]\n\n"]))
    _, done = _split(list(gateway(provider(server)).stream(USER)))
    assert done.text == "AB" and done.finish_reason == "stop"


def test_stream_json_schema_valid_and_invalid(server):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.push(Reply(sse=text_stream('{"n"', ": 4}")))
    events = list(gateway(provider(server)).stream(USER, json_schema=schema))
    assert events[-1].data == {"n": 4}
    assert server.last.body["response_format"]["type"] == "json_schema"
    server.push(Reply(sse=text_stream('{"n": "four"}')))
    got: list = []
    with pytest.raises(BadModelOutput, match=r"\$\.n: expected integer"):
        for e in gateway(provider(server)).stream(USER, json_schema=schema):
            got.append(e)
    assert got == [TextDelta('{"n": "four"}')]  # deltas came through before the verdict


def test_stream_retries_before_first_event(server):
    server.push(Reply(500), Reply(429, headers={"Retry-After": "0"}),
                Reply(sse=text_stream("ok")))
    sleeps = Sleeps()
    _, done = _split(list(gateway(provider(server), sleeps=sleeps).stream(USER)))
    assert done.text == "ok" and len(server.seen) == 3 and sleeps[1] == 0.0


def test_stream_timeout_before_first_event_is_retried(server):
    server.push(Reply(sse=[0.6, *text_stream("late")]), Reply(sse=text_stream("on time")))
    _, done = _split(list(gateway(provider(server, timeout=0.2)).stream(USER)))
    assert done.text == "on time"


def test_stream_cascade(make_server):
    bad, good = make_server(), make_server()
    bad.push(*[Reply(502)] * 3)
    good.push(Reply(sse=text_stream("from good")))
    _, done = _split(list(gateway(provider(bad, "bad"), provider(good, "good")).stream(USER)))
    assert done.provider == "good" and done.text == "from good"


def test_stream_broken_after_output_is_provider_error(server):
    server.push(Reply(sse=[chunk({"content": "partial"})], cut=True))
    got: list = []
    with pytest.raises(ProviderError, match="broke off after output began"):
        for e in gateway(provider(server)).stream(USER):
            got.append(e)
    assert got == [TextDelta("partial")]
    assert len(server.seen) == 1  # not replayed


def test_stream_silence_after_output_is_provider_error(server):
    server.push(Reply(sse=[chunk({"content": "partial"}), 1.0, *text_stream("never")]))
    with pytest.raises(ProviderError, match="went silent"):
        list(gateway(provider(server, timeout=0.2)).stream(USER))


def test_stream_error_event(server):
    server.push(Reply(sse=[{"error": {"message": "model overloaded", "code": 503}}]))
    with pytest.raises(ProviderError, match="model overloaded"):
        list(gateway(provider(server)).stream(USER))


def test_server_ignoring_stream_true_is_replayed(server):
    server.push(Reply(body=completion("whole answer")))
    deltas, done = _split(list(gateway(provider(server)).stream(USER)))
    assert deltas == [TextDelta("whole answer")] and done.text == "whole answer"


def test_abandoning_a_stream_closes_cleanly(server):
    server.push(Reply(sse=text_stream("a", "b", "c")))
    it = gateway(provider(server)).stream(USER)
    assert next(it) == TextDelta("a")
    it.close()
