"""The JSON-Schema subset validator, JSON extraction and tool-argument parsing."""

from __future__ import annotations

import pytest

from opencortex.llm import BadModelOutput, Message, ToolCall
from opencortex.llm.schema import extract_json, parse_json_answer, schema_errors
from opencortex.llm.types import parse_arguments

S = {"type": "object", "required": ["a", "items"], "additionalProperties": False,
     "properties": {"a": {"type": "integer"},
                    "kind": {"enum": ["x", "y"]},
                    "opt": {"type": ["string", "null"]},
                    "items": {"type": "array", "minItems": 1,
                              "items": {"type": "object", "required": ["n"],
                                        "properties": {"n": {"type": "number"}}}}}}


def test_valid():
    assert schema_errors({"a": 1, "items": [{"n": 1.5}], "opt": None, "kind": "x"}, S) == []


@pytest.mark.parametrize(("value", "expect"), [
    ({"a": 1}, "$: missing required property 'items'"),
    ({"a": "1", "items": [{"n": 1}]}, "$.a: expected integer, got string"),
    ({"a": True, "items": [{"n": 1}]}, "$.a: expected integer, got boolean"),
    ({"a": 1, "items": []}, "$.items: needs at least 1 items"),
    ({"a": 1, "items": [{"n": "2"}]}, "$.items[0].n: expected number, got string"),
    ({"a": 1, "items": [{}]}, "$.items[0]: missing required property 'n'"),
    ({"a": 1, "items": [{"n": 1}], "kind": "z"}, '$.kind: "z" is not one of "x", "y"'),
    ({"a": 1, "items": [{"n": 1}], "b": 2}, "$: unexpected property 'b'"),
    ({"a": 1, "items": [{"n": 1}], "opt": 3}, "$.opt: expected string or null, got integer"),
    ([1], "$: expected object, got array"),
])
def test_errors_have_paths(value, expect):
    errs = schema_errors(value, S)
    assert any(e.startswith(expect) for e in errs), errs


def test_integer_valued_float_is_an_integer():
    assert schema_errors(3.0, {"type": "integer"}) == []
    assert schema_errors(3.5, {"type": "integer"}) != []


def test_any_of():
    s = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert schema_errors("x", s) == [] and schema_errors(2, s) == []
    assert schema_errors([], s) != []


@pytest.mark.parametrize(("text", "body"), [
    ('{"a": 1}', '{"a": 1}'),
    ('```json\n{"a": 1}\n```', '{"a": 1}'),
    ("```\n[1]\n```", "[1]"),
    ('<think>\nlet me see {"no": 1}\n</think>\n{"a": 1}', '{"a": 1}'),
])
def test_extract_json(text, body):
    assert extract_json(text) == body


@pytest.mark.parametrize("text", ["", "Sure! Here it is.", '{"a": 1', "{'a': 1}"])
def test_parse_json_answer_rejects(text):
    with pytest.raises(BadModelOutput) as ei:
        parse_json_answer(text, None)
    assert ei.value.raw == text


def test_parse_json_answer_without_schema_accepts_any_json():
    assert parse_json_answer("[1, 2]", None) == [1, 2]


@pytest.mark.parametrize(("raw", "value"), [
    ('{"q": "x"}', {"q": "x"}), ("", {}), (None, {}), ({"q": 1}, {"q": 1}),
])
def test_parse_arguments(raw, value):
    assert parse_arguments(raw, "f") == value


@pytest.mark.parametrize("raw", ['["x"]', "{q: 1}", "__import__('os')", "42", 42])
def test_parse_arguments_rejects(raw):
    with pytest.raises(BadModelOutput, match="'f'"):
        parse_arguments(raw, "f")


def test_tool_call_wire_round_trip():
    wire = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"x": [1]}'}}
    call = ToolCall.from_wire(wire)
    assert call == ToolCall("c", "f", {"x": [1]})
    assert ToolCall.from_wire(call.to_wire()) == call


def test_message_from_dict_and_role_check():
    m = Message.coerce({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    assert m.tool_calls == [ToolCall("c", "f", {})]
    with pytest.raises(ValueError, match="role"):
        Message("robot", "hi")
