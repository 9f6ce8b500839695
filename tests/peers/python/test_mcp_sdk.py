"""`toolcell serve` as the official MCP Python SDK (`mcp` 2.x) sees it, over stdio and streamable
HTTP, in each of the SDK's three ways to start a connection:

- `legacy`: the `initialize` handshake, offering 2025-11-25 (what every 1.x client does);
- `auto` (the SDK's default): a `server/discover` probe at 2026-07-28, falling back to
  `initialize` only if the server rejects it;
- `2026-07-28`: the modern revision adopted without a probe.
"""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import READ_TIMEOUT_S, TOKEN, bearer_client

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto", "2026-07-28"]
# What each mode negotiates with toolcell.
NEGOTIATED = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}

BUILT_IN_TOOLS = ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]


@pytest.mark.parametrize("mode", MODES)
async def test_each_lifecycle_negotiates_its_revision(connect, mode):
    async with connect(mode) as client:
        assert client.protocol_version == NEGOTIATED[mode]
        if mode != "2026-07-28":
            # A pinned revision skips discovery, so the client knows nothing about the server.
            assert client.server_info.name == "toolcell"
            assert client.server_capabilities.tools is not None


@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_listed_in_order_with_both_schemas(connect, mode):
    async with connect(mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == BUILT_IN_TOOLS
    assert all(tool.description for tool in tools)
    calculator = tools[0]
    assert calculator.input_schema["type"] == "object"
    assert "expression" in calculator.input_schema["properties"]
    assert calculator.input_schema["required"] == ["expression"]
    assert calculator.output_schema is not None
    assert "value" in calculator.output_schema["properties"]


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_marks_deferred_tools_and_what_code_modes_programs_may_call(toolcell, mode):
    server = toolcell.stdio("--code-mode", "also", "--defer-loading", "regex,files")
    async with Client(server, mode=mode, read_timeout_seconds=READ_TIMEOUT_S) as client:
        tools = (await client.list_tools()).tools
    marks = {tool.name: tool.meta for tool in tools}
    callers = ["direct", "programmatic"]
    assert marks["regex"] == {"toolcell/deferLoading": True, "toolcell/allowedCallers": callers}
    # Claude Code defers a server's tools by default: those not deferred say to keep them loaded.
    assert marks["calculator"] == {"toolcell/allowedCallers": callers, "anthropic/alwaysLoad": True}
    assert marks["python"] == {"anthropic/alwaysLoad": True}, "programs do not call the program tool"
    assert marks["search"] == marks["execute"] == {"anthropic/alwaysLoad": True}


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_returns_text_and_structured_content(connect, mode):
    async with connect(mode) as client:
        # The SDK also checks the structured content against the tool's output schema.
        result = await client.call_tool("calculator", {"expression": "2+2"})
    assert not result.is_error
    assert result.structured_content == {"value": 4.0}
    assert [block.type for block in result.content] == ["text"]
    assert result.content[0].text == '{"value":4.0}'


@pytest.mark.parametrize("mode", MODES)
async def test_arguments_that_miss_the_schema_are_a_tool_error_naming_the_parameter(connect, mode):
    async with connect(mode) as client:
        result = await client.call_tool("calculator", {"expr": "2+2"})
    assert result.is_error
    assert result.structured_content is None
    text = result.content[0].text
    assert "do not match" in text
    assert "`expr` is not a parameter; did you mean `expression`?" in text
    assert result.meta["toolcell/error"] == {"kind": "invalid_arguments", "retryable": True}


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_is_invalid_params_with_a_suggestion(connect, mode):
    async with connect(mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("calculater", {"expression": "2+2"})
        # The connection stays usable.
        assert not (await client.call_tool("calculator", {"expression": "1"})).is_error
    assert raised.value.code == -32602
    assert "Did you mean `calculator`?" in raised.value.message
    assert raised.value.data["closest"] == ["calculator"]


async def test_the_calculator_has_a_title_and_annotations(connect):
    async with connect("auto") as client:
        calculator = (await client.list_tools()).tools[0]
    assert calculator.title == "Calculator"
    hints = calculator.annotations
    assert hints is not None
    assert hints.read_only_hint is True
    assert hints.idempotent_hint is True
    assert hints.open_world_hint is False
    assert hints.destructive_hint is None


# HTTP with a bearer token (`TOOLCELL_TOKEN`).


async def test_without_the_token_http_requests_get_401_saying_what_to_send(token_server):
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(
            token_server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream"},
        )
        wrong = await http.post(
            token_server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream", "Authorization": "Bearer not-the-token"},
        )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    # Its body unread, the connection ends: the client sends the next request on a new one.
    assert response.headers["connection"] == "close"
    assert "Authorization: Bearer" in response.json()["error"]
    assert wrong.status_code == 401


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_without_the_token_the_sdk_cannot_connect(token_server, mode):
    with pytest.raises(BaseException) as raised:
        async with Client(token_server.url, mode=mode, read_timeout_seconds=READ_TIMEOUT_S):
            pass
    # The SDK drops the 401 body: it raises MCPError(-32603, "Server returned an error response"),
    # wrapped in task groups.
    assert _leaves(raised.value) and all(isinstance(error, MCPError) for error in _leaves(raised.value))


@pytest.mark.parametrize("mode", MODES)
async def test_with_the_token_the_sdk_lists_and_calls(token_server, mode):
    async with bearer_client(token_server.url, TOKEN, mode) as client:
        assert client.protocol_version == NEGOTIATED[mode]
        assert [tool.name for tool in (await client.list_tools()).tools] == BUILT_IN_TOOLS
        result = await client.call_tool("calculator", {"expression": "2+2"})
    assert result.structured_content == {"value": 4.0}


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]
