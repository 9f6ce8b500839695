"""toolcell's tools as LangChain tools (`langchain-mcp-adapters`, on the 1.x MCP SDK, which only
knows the `initialize` handshake), over stdio. Runs in its own venv: the adapters need `mcp<2`."""

from __future__ import annotations

import os

import pytest
from langchain_core.messages import ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

from toolcell_server import toolcell_bin, warm_cache

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def client(tmp_path_factory: pytest.TempPathFactory) -> MultiServerMCPClient:
    env = {key: value for key, value in os.environ.items() if key != "TOOLCELL_TOKEN"}
    env.setdefault("TOOLCELL_CACHE_DIR", str(tmp_path_factory.mktemp("toolcell-cache")))
    binary = toolcell_bin()
    warm_cache(binary, env)
    return MultiServerMCPClient(
        {"toolcell": {"transport": "stdio", "command": binary, "args": ["serve"], "env": env}}
    )


async def test_tools_load_and_calls_return_results_or_errors_for_the_model(client):
    # One session for the whole test (the client's own `get_tools()` starts a server per call).
    async with client.session("toolcell") as session:
        tools = {tool.name: tool for tool in await load_mcp_tools(session)}
        calculator = tools["calculator"]
        ok = await calculator.ainvoke(_tool_call("1", {"expression": "2+2"}))
        failed = await calculator.ainvoke(_tool_call("2", {"expr": "2+2"}))

    assert sorted(tools) == ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
    assert "expression" in calculator.args

    assert isinstance(ok, ToolMessage) and ok.status == "success"
    assert ok.content[0]["text"] == '{"value":4.0}'
    assert ok.artifact["structured_content"] == {"value": 4.0}

    # An `isError` result reaches the model as an error message it can act on.
    assert isinstance(failed, ToolMessage) and failed.status == "error"
    assert "`expr` is not a parameter; did you mean `expression`?" in str(failed.content)


def _tool_call(call_id: str, args: dict) -> dict:
    return {"type": "tool_call", "id": call_id, "name": "calculator", "args": args}
