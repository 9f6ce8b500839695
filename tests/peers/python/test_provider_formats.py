"""What `toolcell schema --format`, `toolcell list --format` and `toolcell respond` print, checked
with the provider SDKs' own types (`openai`, `anthropic`, `google-genai`, and `mcp` for MCP), not
with our reading of their docs.

The OpenAI and Anthropic request types are TypedDicts: pydantic drops keys they do not know
instead of refusing them, so `exact()` also fails when validation dropped a key. google-genai's
types refuse unknown keys themselves (`$ref`, `additionalProperties`, `const`, ...).

The request-level fields (`defer_loading`, an OpenAI namespace, `allowed_callers`) are checked
the same way, on whole `tools` lists as the SDKs' request methods take them.
"""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any

import anthropic.types as anthropic_types
import mcp.types
import pytest
from google.genai import types as genai
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionMessage, ChatCompletionToolMessageParam, ChatCompletionToolParam
from openai.types.responses import (
    FunctionToolParam,
    NamespaceToolParam,
    ResponseFunctionToolCall,
    ToolParam as ResponsesToolParam,
    ToolSearchToolParam,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput
from pydantic import TypeAdapter

from toolcell_server import toolcell_bin

TOOLS = ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
FORMATS = [
    "openai",
    "openai-strict",
    "openai-responses",
    "openai-responses-strict",
    "anthropic",
    "anthropic-strict",
    "gemini",
    "gemini-json-schema",
    "mcp",
    "mcp-strict",
]

# JSON Schema 2020-12's format vocabulary (toolcell_schema::formats::STANDARD).
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6", "uri",
    "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
}

# Kept alive: pydantic validates `Iterable` fields lazily, through the adapter.
_ADAPTERS: dict[Any, TypeAdapter] = {}


def exact(tp: Any, data: Any) -> Any:
    """Validates `data` as the TypedDict `tp` (strict mode) and fails on any key it dropped."""
    adapter = _ADAPTERS.setdefault(tp, TypeAdapter(tp))
    out = materialize(adapter.validate_python(data, strict=True))
    dropped = dropped_keys(data, out)
    assert not dropped, f"keys {tp.__name__} does not know: {dropped}"
    return out


def materialize(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


def dropped_keys(given: Any, kept: Any, path: str = "$") -> list[str]:
    if isinstance(given, dict) and isinstance(kept, dict):
        found = [f"{path}.{key}" for key in given if key not in kept]
        for key, value in given.items():
            if key in kept:
                found += dropped_keys(value, kept[key], f"{path}.{key}")
        return found
    if isinstance(given, list) and isinstance(kept, list):
        return [item for index, pair in enumerate(zip(given, kept)) for item in dropped_keys(*pair, f"{path}[{index}]")]
    return []


def toolcell(*args: str, stdin: str | None = None) -> Any:
    done = subprocess.run(
        [toolcell_bin(), *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def schemas(schema: Any) -> list[dict[str, Any]]:
    """Every subschema of `schema`, itself included."""
    found = []
    if isinstance(schema, dict):
        found.append(schema)
        for key in ("properties", "$defs"):
            for inner in schema.get(key, {}).values():
                found += schemas(inner)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                found += schemas(schema[key])
        for key in ("anyOf", "oneOf"):
            for inner in schema.get(key, []):
                found += schemas(inner)
    return found


def check_definition(fmt: str, tool: dict[str, Any]) -> None:
    if fmt in ("openai", "openai-strict"):
        assert exact(ChatCompletionToolParam, tool) == tool
        if fmt == "openai-strict":
            assert tool["function"]["strict"] is True
            check_openai_strict(tool["function"]["parameters"])
    elif fmt.startswith("openai-responses"):
        assert exact(FunctionToolParam, tool) == tool
        assert tool["strict"] is (fmt == "openai-responses-strict")
        if tool["strict"]:
            check_openai_strict(tool["parameters"])
    elif fmt.startswith("anthropic"):
        assert exact(anthropic_types.ToolParam, tool) == tool
        if fmt == "anthropic-strict":
            assert tool["strict"] is True
            check_anthropic_strict(tool["input_schema"])
    elif fmt == "gemini":
        declaration = genai.FunctionDeclaration.model_validate(tool)
        known = {item.value for item in genai.Type}
        for schema in schemas(tool["parameters"]):
            assert "type" not in schema or schema["type"] in known, schema
            assert all(isinstance(value, str) for value in schema.get("enum", [])), schema
        assert declaration.parameters is not None and declaration.parameters_json_schema is None
    elif fmt == "gemini-json-schema":
        declaration = genai.FunctionDeclaration.model_validate(tool)
        assert declaration.parameters is None and declaration.parameters_json_schema is not None
    else:
        parsed = mcp.types.Tool.model_validate(tool)
        assert parsed.name == tool["name"] and parsed.annotations is not None
        # Standard formats only, in both schemas: `uint64` and the like make clients warn.
        for schema in [*schemas(tool["inputSchema"]), *schemas(tool.get("outputSchema"))]:
            assert schema.get("format", "date") in STANDARD_FORMATS, schema
        if fmt == "mcp-strict":
            check_openai_strict(tool["inputSchema"])
            assert "$ref" not in json.dumps(tool["inputSchema"]), "every `$ref` is written out"


def check_openai_strict(parameters: dict[str, Any]) -> None:
    # OpenAI's own strict-mode normaliser (the one its SDK applies to pydantic models) finds
    # nothing to change: every object is closed, every property required, no `$ref` has siblings.
    normalised = _ensure_strict_json_schema(copy.deepcopy(parameters), path=(), root=copy.deepcopy(parameters))
    assert normalised == parameters
    formats = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
    for schema in schemas(parameters):
        assert not {"oneOf", "allOf", "not", "default", "minLength", "maxLength", "$schema"} & schema.keys(), schema
        assert schema.get("format", "date") in formats, schema
        if schema.get("type") in ("object", ["object", "null"]):
            assert schema["additionalProperties"] is False, schema


def check_anthropic_strict(parameters: dict[str, Any]) -> None:
    unsupported = {"minimum", "maximum", "multipleOf", "minLength", "maxLength", "maxItems", "oneOf", "exclusiveMinimum"}
    formats = {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
    for schema in schemas(parameters):
        assert not unsupported & schema.keys(), schema
        assert schema.get("minItems", 0) in (0, 1), schema
        assert schema.get("format", "date") in formats, schema
        if "object" in schema.get("type", []):
            assert schema["additionalProperties"] is False, schema


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_standard_tool_exports_as_the_sdk_types_take_it(fmt):
    if fmt == "anthropic-strict":
        # Over Anthropic's per-request limits as a whole list (see below): one tool at a time.
        tools = [toolcell("schema", name, "--format", fmt) for name in TOOLS]
    elif fmt.startswith("gemini"):
        listed = toolcell("list", "--format", fmt)
        assert [declaration.name for declaration in genai.Tool.model_validate(listed[0]).function_declarations] == TOOLS
        tools = listed[0]["functionDeclarations"]
    else:
        tools = toolcell("list", "--format", fmt)
    assert len(tools) == len(TOOLS)
    for tool in tools:
        check_definition(fmt, tool)
    # `schema --format` prints the same definition as the list.
    assert toolcell("schema", "regex", "--format", fmt) == tools[TOOLS.index("regex")]


def test_anthropic_strict_refuses_a_list_over_the_requests_limits():
    done = subprocess.run(
        [toolcell_bin(), "list", "--format", "anthropic-strict"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "at most 24 optional parameters in one request" in done.stderr


# A model's message with two calls: one that works (with a map and an omitted optional in the
# shape strict mode makes the model send them) and one with a misspelt argument.
GOOD = {"expression": "x * 2", "variables": [{"key": "x", "value": 21}]}
GOOD_PLAIN = {"expression": "x * 2", "variables": {"x": 21}}
BAD = {"expresion": "1 + 1"}


def assert_answers(contents: list[str], errors: list[bool]) -> None:
    assert json.loads(contents[0]) == {"value": 42.0}
    assert "did you mean `expression`" in contents[1]
    assert errors == [False, True]


@pytest.mark.parametrize("fmt", ["openai", "openai-strict"])
def test_openai_chat_tool_calls_get_tool_messages(fmt):
    good = GOOD if fmt.endswith("strict") else GOOD_PLAIN
    message = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": json.dumps(good)}},
                {"id": "call_2", "type": "function", "function": {"name": "calculator", "arguments": json.dumps(BAD)}},
            ],
        }
    )
    replies = toolcell("respond", "--format", fmt, stdin=message.model_dump_json(exclude_none=True))
    for reply in replies:
        exact(ChatCompletionToolMessageParam, reply)
    assert [reply["tool_call_id"] for reply in replies] == ["call_1", "call_2"]
    contents = [reply["content"] for reply in replies]
    assert json.loads(contents[0]) == {"value": 42.0}
    assert "did you mean `expression`" in contents[1]


@pytest.mark.parametrize("fmt", ["openai-responses", "openai-responses-strict"])
def test_openai_responses_function_calls_get_function_call_outputs(fmt):
    good = GOOD if fmt.endswith("strict") else GOOD_PLAIN
    items = [
        ResponseFunctionToolCall.model_validate(
            {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "calculator", "arguments": json.dumps(args)}
        ).model_dump(exclude_none=True)
        for n, args in ((1, good), (2, BAD))
    ]
    replies = toolcell("respond", "--format", fmt, stdin=json.dumps({"output": items}))
    for reply in replies:
        exact(FunctionCallOutput, reply)
    assert [reply["call_id"] for reply in replies] == ["call_1", "call_2"]
    assert json.loads(replies[0]["output"]) == {"value": 42.0}
    assert "did you mean `expression`" in replies[1]["output"]


@pytest.mark.parametrize("fmt", ["anthropic", "anthropic-strict"])
def test_anthropic_tool_use_gets_one_user_message_of_tool_results(fmt):
    good = GOOD if fmt.endswith("strict") else GOOD_PLAIN
    message = anthropic_types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "Working it out."},
                {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": good},
                {"type": "tool_use", "id": "toolu_2", "name": "calculator", "input": BAD},
            ],
        }
    )
    (reply,) = toolcell("respond", "--format", fmt, stdin=message.model_dump_json())
    exact(anthropic_types.MessageParam, reply)
    assert reply["role"] == "user"
    for block in reply["content"]:
        exact(anthropic_types.ToolResultBlockParam, block)
    assert [block["tool_use_id"] for block in reply["content"]] == ["toolu_1", "toolu_2"]
    assert_answers([block["content"] for block in reply["content"]], [block["is_error"] for block in reply["content"]])


@pytest.mark.parametrize("fmt", ["gemini", "gemini-json-schema"])
def test_gemini_function_calls_get_function_responses(fmt):
    good = GOOD if fmt == "gemini" else GOOD_PLAIN
    content = genai.Content.model_validate(
        {
            "role": "model",
            "parts": [
                {"function_call": {"id": "fc-1", "name": "calculator", "args": good}},
                {"function_call": {"name": "calculator", "args": BAD}},
            ],
        }
    )
    (reply,) = toolcell("respond", "--format", fmt, stdin=content.model_dump_json(by_alias=True, exclude_none=True))
    parsed = genai.Content.model_validate(reply)
    assert parsed.role == "user"
    first, second = (part.function_response for part in parsed.parts)
    assert (first.id, first.name, first.response) == ("fc-1", "calculator", {"output": {"value": 42.0}})
    assert second.id is None, "a call without an id gets a response without one"
    assert "did you mean `expression`" in second.response["error"]


# What `--defer-loading regex,files --allowed-callers` marks: programs call every tool but `python`.
DEFERRED = ("regex", "files")


def expected_callers(name: str, code_caller: str) -> list[str] | None:
    return None if name == "python" else ["direct", code_caller]


@pytest.mark.parametrize("fmt", ["openai-responses", "openai-responses-strict"])
def test_openai_responses_exports_deferred_namespaced_code_callable_tools(fmt):
    tools = toolcell(
        "list", "--format", fmt, "--defer-loading", ",".join(DEFERRED), "--namespace", "toolcell", "--allowed-callers"
    )
    # The whole list as `client.responses.create(tools=...)` takes it.
    assert exact(list[ResponsesToolParam], tools) == tools
    namespace, search, programmatic = tools
    assert exact(NamespaceToolParam, namespace) == namespace
    assert namespace["name"] == "toolcell" and namespace["description"].startswith("Tools: calculator, datetime")
    assert "defer_loading" not in namespace, "OpenAI defers a namespace's functions, not the namespace"
    assert exact(ToolSearchToolParam, search) == search == {"type": "tool_search"}
    assert programmatic == {"type": "programmatic_tool_calling"}
    functions = namespace["tools"]
    assert [function["name"] for function in functions] == TOOLS
    for function in functions:
        check_definition(fmt, function)
        assert function.get("defer_loading", False) is (function["name"] in DEFERRED)
        assert function.get("allowed_callers") == expected_callers(function["name"], "programmatic")
    # `schema --format` with the per-tool flags prints the same function.
    regex = toolcell("schema", "regex", "--format", fmt, "--defer-loading", "--allowed-callers")
    assert regex == functions[TOOLS.index("regex")]


def marking_flags(name: str) -> list[str]:
    """`schema NAME`'s flags that mark it as the list's flags above do."""
    return ["--defer-loading"] * (name in DEFERRED) + ["--allowed-callers"] * (name != "python")


@pytest.mark.parametrize("fmt", ["anthropic", "anthropic-strict"])
def test_anthropic_exports_deferred_and_code_callable_tools(fmt):
    if fmt == "anthropic-strict":
        # Over Anthropic's per-request limits as a whole list: one tool at a time.
        tools = [toolcell("schema", name, "--format", fmt, *marking_flags(name)) for name in TOOLS]
    else:
        listed = toolcell("list", "--format", fmt, "--defer-loading", ",".join(DEFERRED), "--allowed-callers")
        # The whole list as `client.messages.create(tools=...)` takes it.
        assert exact(list[anthropic_types.ToolUnionParam], listed) == listed
        tools, search, code_execution = listed[:-2], listed[-2], listed[-1]
        assert search == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        assert code_execution == {"type": "code_execution_20250825", "name": "code_execution"}
    assert [tool["name"] for tool in tools] == TOOLS
    for tool in tools:
        check_definition(fmt, tool)
        assert tool.get("defer_loading", False) is (tool["name"] in DEFERRED)
        assert tool.get("allowed_callers") == expected_callers(tool["name"], "code_execution_20250825")


@pytest.mark.parametrize("fmt", ["mcp", "mcp-strict"])
def test_mcp_exports_carry_the_marks_as_meta_the_sdk_keeps(fmt):
    tools = toolcell("list", "--format", fmt, "--defer-loading", ",".join(DEFERRED), "--allowed-callers")
    assert [tool["name"] for tool in tools] == TOOLS
    for tool in tools:
        check_definition(fmt, tool)
        expected = {}
        if tool["name"] in DEFERRED:
            expected["toolcell/deferLoading"] = True
        else:
            # Claude Code defers a server's tools by default; this keeps the others loaded.
            expected["anthropic/alwaysLoad"] = True
        if tool["name"] != "python":
            expected["toolcell/allowedCallers"] = ["direct", "programmatic"]
        parsed = mcp.types.Tool.model_validate(tool)
        assert parsed.meta == expected
        assert parsed.model_dump(by_alias=True, exclude_none=True)["_meta"] == tool["_meta"]
    # Without a mark, no `_meta`.
    for tool in toolcell("list", "--format", fmt, "--allowed-callers"):
        assert mcp.types.Tool.model_validate(tool).meta == (
            None if tool["name"] == "python" else {"toolcell/allowedCallers": ["direct", "programmatic"]}
        )


@pytest.mark.parametrize(
    ("fmt", "flags", "field"),
    [
        ("openai", ["--defer-loading"], "defer_loading"),
        ("openai-strict", ["--allowed-callers"], "allowed_callers"),
        ("openai", ["--namespace", "toolcell"], "namespace"),
        ("gemini", ["--defer-loading", "regex"], "defer_loading"),
        ("gemini-json-schema", ["--allowed-callers"], "allowed_callers"),
        ("anthropic", ["--namespace", "toolcell"], "namespace"),
    ],
)
def test_formats_without_a_field_refuse_it(fmt, flags, field):
    done = subprocess.run(
        [toolcell_bin(), "list", "--format", fmt, *flags], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert f"{fmt} tools have no `{field}`" in done.stderr


def test_chat_completions_types_have_no_such_fields():
    # Why Chat Completions refuses the options: its SDK type would drop the fields unseen.
    tool = toolcell("schema", "regex", "--format", "openai")
    for field, value in (("defer_loading", True), ("allowed_callers", ["direct", "programmatic"])):
        marked = copy.deepcopy(tool)
        marked["function"][field] = value
        with pytest.raises(AssertionError, match=field):
            exact(ChatCompletionToolParam, marked)
        marked = {**tool, field: value}
        with pytest.raises(AssertionError, match=field):
            exact(ChatCompletionToolParam, marked)


def test_a_programs_call_in_a_namespace_is_answered_with_its_caller():
    caller = {"type": "program", "caller_id": "prog_1"}
    calls = [
        ResponseFunctionToolCall.model_validate(item).model_dump(exclude_none=True)
        for item in (
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "calculator", "namespace": "toolcell",
             "arguments": json.dumps(GOOD_PLAIN), "caller": caller},
            # A deferred top-level function may come back in a namespace named like itself.
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "calculator",
             "namespace": "calculator", "arguments": json.dumps(BAD), "caller": {"type": "direct"}},
        )
    ]
    assert calls[0]["namespace"] == "toolcell" and calls[0]["caller"] == caller, "the SDK's own call shape"
    replies = toolcell("respond", "--format", "openai-responses", stdin=json.dumps({"output": calls}))
    for reply in replies:
        assert exact(FunctionCallOutput, reply) == reply
    assert [reply["call_id"] for reply in replies] == ["call_1", "call_2"]
    assert replies[0]["caller"] == caller, "a program's call is answered to the program"
    assert replies[1]["caller"] == {"type": "direct"}
    assert_answers([reply["output"] for reply in replies], [False, True])


def test_anthropic_tool_use_from_code_execution_is_answered_as_any():
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}
    message = anthropic_types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": GOOD_PLAIN, "caller": caller},
                {"type": "tool_use", "id": "toolu_2", "name": "calculator", "input": BAD, "caller": caller},
            ],
        }
    )
    assert message.content[0].caller.type == "code_execution_20250825"
    (reply,) = toolcell("respond", "--format", "anthropic", stdin=message.model_dump_json())
    assert exact(anthropic_types.MessageParam, reply) == reply
    for block in reply["content"]:
        assert exact(anthropic_types.ToolResultBlockParam, block) == block
    assert [block["tool_use_id"] for block in reply["content"]] == ["toolu_1", "toolu_2"]
    assert_answers([block["content"] for block in reply["content"]], [block["is_error"] for block in reply["content"]])
