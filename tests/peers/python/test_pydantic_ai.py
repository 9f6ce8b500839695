"""A pydantic-ai agent using toolcell's tools through `MCPToolset` over stdio, driven by a scripted
`FunctionModel` instead of an LLM: the model calls the calculator with a wrong parameter name, reads
toolcell's message in the retry, calls again correctly, and answers with the value."""

from __future__ import annotations

import pytest
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


async def test_the_model_reads_the_error_fixes_its_call_and_answers(toolcell):
    received: list[list[ModelMessage]] = []
    offered: list[AgentInfo] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(messages))
        offered.append(info)
        match len(received):
            case 1:
                return ModelResponse(parts=[ToolCallPart("calculator", {"expr": "2+2"}, tool_call_id="first")])
            case 2:
                return ModelResponse(parts=[ToolCallPart("calculator", {"expression": "2+2"}, tool_call_id="second")])
            case _:
                (returned,) = _tool_returns(messages[-1])
                return ModelResponse(parts=[TextPart(f"2 + 2 = {returned.content['value']:g}")])

    toolset = MCPToolset(StdioTransport(command=toolcell.binary, args=["serve"], env=toolcell.env))
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    async with agent:
        result = await agent.run("What is 2 + 2?")

    assert result.output == "2 + 2 = 4"
    assert len(received) == 3

    # The model was offered toolcell's tools with toolcell's own parameter schemas.
    calculator = next(tool for tool in offered[0].function_tools if tool.name == "calculator")
    assert "expression" in calculator.parameters_json_schema["properties"]

    # Turn 2: the failed call came back as a retry carrying the runtime's message.
    (retry,) = _tool_returns(received[1][-1])
    assert retry.tool_call_id == "first"
    assert retry.outcome == "retried"
    assert "`expr` is not a parameter; did you mean `expression`?" in retry.model_response_str()

    # Turn 3: the corrected call returned the structured result.
    (answer,) = _tool_returns(received[2][-1])
    assert answer.tool_call_id == "second"
    assert answer.outcome == "success"
    assert answer.content == {"value": 4.0}


def _tool_returns(message: ModelMessage) -> list[ToolReturnPart]:
    assert isinstance(message, ModelRequest)
    return [part for part in message.parts if isinstance(part, ToolReturnPart)]
