"""The OpenAI Agents SDK's `MCPServerStdio` against `toolcell serve`, with the agent's
`convert_schemas_to_strict=True`: the SDK runs each listed `inputSchema` through its own
`ensure_strict_json_schema` and, where that raises, quietly serves the tool non-strict (it logs
at info level only). Checked here through the SDK's own code: which tools stay strict, that its
converter finds nothing left to change under `--schemas strict`, and that a scripted model's
strict-shaped calls (a map as entries, any JSON as text) reach the tools and succeed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, ModelResponse, RunConfig, RunContextWrapper, Runner, Usage, set_tracing_disabled
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from agents.strict_schema import ensure_strict_json_schema
from agents.tool import FunctionTool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

pytestmark = pytest.mark.anyio

# Nothing here talks to OpenAI: no traces are exported either.
set_tracing_disabled(True)

TOOLS = ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]

# What the SDK makes strict from the default (standard) schemas. The others fall back to
# non-strict: `calculator.variables` and `http_fetch.headers` are maps (open objects), and
# `regex.flags` is a bare `$ref` to an object definition, which the SDK does not write out.
STRICT_BY_DEFAULT = {"datetime", "files", "json_query", "python", "unit_convert"}
# Of those, the ones OpenAI's strict mode takes: `json_query.document` and `python.inputs`
# take any JSON value and have no type, which the SDK lets through and OpenAI refuses.
OPENAI_STRICT_BY_DEFAULT = {"datetime", "files", "unit_convert"}

# The cold compile is done by the session fixture; a warm server answers in milliseconds.
TIMEOUT_S = 30


@pytest.fixture
async def agent_tools(toolcell) -> AsyncIterator[Any]:
    """`tools(*serve_args)`: the agent's function tools from a server started with those
    arguments, and the server (kept open until the test ends)."""
    servers: list[MCPServerStdio] = []

    async def tools(*args: str) -> tuple[list[FunctionTool], MCPServerStdio]:
        server = MCPServerStdio(
            {"command": toolcell.binary, "args": ["serve", *args], "env": toolcell.env},
            client_session_timeout_seconds=TIMEOUT_S,
        )
        await server.connect()
        servers.append(server)
        agent = Agent(name="probe", mcp_servers=[server], mcp_config={"convert_schemas_to_strict": True})
        listed = await agent.get_all_tools(RunContextWrapper(context=None))
        assert all(isinstance(tool, FunctionTool) for tool in listed)
        return [tool for tool in listed if isinstance(tool, FunctionTool)], server

    yield tools
    for server in reversed(servers):
        await server.cleanup()


async def test_under_schemas_strict_every_standard_tool_converts_to_strict(agent_tools):
    tools, _ = await agent_tools("--schemas", "strict")
    assert [tool.name for tool in tools] == TOOLS
    for tool in tools:
        assert tool.strict_json_schema, f"{tool.name} fell back to non-strict"
        schema = tool.params_json_schema
        # The SDK's converter has nothing left to change: the schema is strict as listed.
        assert ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True) == schema, tool.name
        check_openai_strict(tool.name, schema)


async def test_by_default_the_tools_without_maps_or_bare_references_convert(agent_tools):
    tools, _ = await agent_tools()
    assert [tool.name for tool in tools] == TOOLS
    strict = [tool for tool in tools if tool.strict_json_schema]
    assert {tool.name for tool in strict} == STRICT_BY_DEFAULT
    assert {tool.name for tool in strict if is_openai_strict(tool.params_json_schema)} == OPENAI_STRICT_BY_DEFAULT


async def test_a_strict_models_calls_reach_the_tools_in_their_own_shape(agent_tools):
    """A run with a scripted model: it calls `calculator` with `variables` as the strict list of
    entries and `python` with `inputs` as JSON text, then answers with what came back."""
    _, server = await agent_tools("--schemas", "strict")
    model = ScriptedModel(
        [
            call(
                "calculator",
                {"expression": "x * rate", "variables": [{"key": "x", "value": 200}, {"key": "rate", "value": 0.5}]},
            ),
            call("python", {"code": "sum(inputs['a'])", "inputs": '{"a": [1, 2, 3]}'}),
        ]
    )
    agent = Agent(name="probe", model=model, mcp_servers=[server], mcp_config={"convert_schemas_to_strict": True})
    question = "What is 200 * 0.5, and the sum of [1, 2, 3]?"
    result = await Runner.run(agent, question, run_config=RunConfig(tracing_disabled=True))

    offered = {tool.name: tool for tool in model.offered}
    assert offered["calculator"].strict_json_schema and offered["python"].strict_json_schema
    calculator, python = model.outputs
    assert json.loads(calculator) == {"value": 100.0}, calculator
    assert json.loads(python)["value"] == 6, python
    assert result.final_output == "done"


def check_openai_strict(name: str, schema: dict[str, Any]) -> None:
    """What OpenAI's strict mode needs beyond the SDK's converter: a type for every value (no
    untyped `inputs`) and no `$ref` left for it to resolve."""
    assert "$ref" not in json.dumps(schema), name
    for node in schemas(schema):
        assert typed(node), f"{name}: a value without a type: {node}"


def is_openai_strict(schema: dict[str, Any]) -> bool:
    return "$ref" not in json.dumps(schema) and all(typed(node) for node in schemas(schema))


def typed(schema: dict[str, Any]) -> bool:
    return bool({"type", "anyOf", "enum", "const"} & schema.keys())


def schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += schemas(schema[key])
    for key in ("properties", "$defs"):
        for inner in (schema.get(key) or {}).values():
            found += schemas(inner)
    for inner in schema.get("anyOf", []):
        found += schemas(inner)
    return found


def call(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments)


class ScriptedModel(Model):
    """Turn 1: the scripted calls, all at once. Turn 2: reads their outputs and says "done"."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls
        self.turns = 0
        self.offered: list[Any] = []
        self.outputs: list[str] = []

    async def get_response(self, system_instructions, input, model_settings, tools, *args, **kwargs) -> ModelResponse:
        self.turns += 1
        if self.turns == 1:
            self.offered = list(tools)
            output: list[Any] = [
                ResponseFunctionToolCall(
                    id=f"fc_{index}", call_id=f"call_{index}", name=name, arguments=arguments,
                    type="function_call", status="completed",
                )
                for index, (name, arguments) in enumerate(self.calls)
            ]
        else:
            items = [item for item in input if isinstance(item, dict) and item.get("type") == "function_call_output"]
            self.outputs = [tool_text(item["output"]) for item in sorted(items, key=lambda item: item["call_id"])]
            output = [
                ResponseOutputMessage(
                    id="msg_1", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the test runs without streaming")


def tool_text(output: Any) -> str:
    """A function call's output as the SDK gives it back to the model: text, or a list of
    content items of which the first is the text."""
    if isinstance(output, str):
        return output
    (first, *_) = output
    return first["text"]


async def test_a_cold_server_answers_within_the_sdks_default_timeout(toolcell, tmp_path):
    """`MCPServerStdio` with every default (a 5 s timeout on each request) against a server whose
    compile cache is empty: compiling the eight tools takes tens of seconds here (python alone
    about 17 s), yet the handshake and the list answer at once (each component announces its
    tool), and a call waits only for its own tool, compiled next."""
    env = {**toolcell.env, "TOOLCELL_CACHE_DIR": str(tmp_path / "empty-cache")}
    server = MCPServerStdio({"command": toolcell.binary, "args": ["serve"], "env": env})
    assert server.client_session_timeout_seconds == 5, "the SDK's default is what this test is about"
    await server.connect()
    try:
        listed = await server.list_tools()
        assert sorted(tool.name for tool in listed) == TOOLS
        result = await server.call_tool("calculator", {"expression": "2 * (3 + 4)"})
        assert not result.is_error, result
        assert result.structured_content == {"value": 14.0}
    finally:
        await server.cleanup()
