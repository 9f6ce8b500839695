"""Code mode over MCP (`toolcell serve --code-mode`) with a pydantic-ai agent: a scripted
`FunctionModel` solves a five-step task through `search` + `execute`, and, against a server of the
folder's tools, through direct calls made as early as their inputs allow (independent calls in one
turn). The program is the book's (bench/python/code_mode.py); both give the same answer, and code
mode takes fewer model turns. The turn counts and what the model was sent are printed (`pytest -s`)
for the closing note's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from toolcell_server import HttpServer

pytestmark = pytest.mark.anyio

PROGRAM = (Path(__file__).parents[3] / "bench" / "python" / "code_mode.py").read_text()
INPUTS = {
    "shipments": [
        {"id": "A1", "weight_lb": 12.5, "shipped": "2026-11-02", "status": "open"},
        {"id": "B7", "weight_lb": 30, "shipped": "2026-10-28", "status": "open"},
        {"id": "C3", "weight_lb": 8, "shipped": "2026-11-10", "status": "closed"},
    ],
    "note": "Questions: ops@example.com, or +1 555 0100.",
}
QUESTION = "How many shipments are open, what do they weigh in kg, how long has the oldest waited, and whom to ask?"
ANSWER = {"open": 2, "kg": 19.3, "waiting": "27 days", "contact": "ops@example.com"}


async def test_code_mode_solves_the_task_in_fewer_turns_than_direct_calls(toolcell):
    direct = await _run(toolcell, [], _direct_model)
    code_mode = await _run(toolcell, ["--code-mode"], _code_mode_model)

    assert direct.answer == code_mode.answer == ANSWER
    # Direct: json_query + regex, then calculator + datetime, then unit_convert, then the answer.
    assert direct.turns == 4
    # Code mode: search, then execute, then the answer.
    assert code_mode.turns == 3
    assert [tool.name for tool in code_mode.offered] == ["execute", "search"]
    assert len(direct.offered) == 8
    print(
        f"\ncode mode: {code_mode.turns} model turns, {code_mode.sent} characters of tool definitions and messages "
        f"sent; direct calls: {direct.turns} turns, {direct.sent} characters"
    )


async def test_search_gives_the_signatures_the_program_calls(toolcell):
    seen: dict[str, str] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("search", {"query": "convert pounds to kilograms", "limit": 1})])
        (found,) = _returns(messages[-1])
        seen.update(found.content["tools"][0])
        return ModelResponse(parts=[TextPart("done")])

    await _run(toolcell, ["--code-mode", "only"], model)
    assert seen["name"] == "unit_convert"
    assert seen["signature"].startswith("tools.unit_convert(value: float, ")
    assert "Raises ToolCallError" in seen["doc"]


class Run:
    def __init__(self) -> None:
        self.turns = 0
        self.sent = 0
        self.offered: list = []
        self.answer: dict | None = None


async def _run(toolcell, args: list[str], script) -> Run:
    run = Run()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        run.turns += 1
        run.offered = sorted(info.function_tools, key=lambda tool: tool.name)
        # What a hosted model would be sent this turn: the tool definitions and the conversation.
        definitions = [[tool.name, tool.description, tool.parameters_json_schema] for tool in info.function_tools]
        run.sent += len(json.dumps(definitions)) + sum(len(repr(message)) for message in messages)
        return script(messages, info)

    toolset = MCPToolset(StdioTransport(command=toolcell.binary, args=["serve", *args], env=toolcell.env))
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    async with agent:
        result = await agent.run(QUESTION)
    run.answer = json.loads(result.output) if result.output.startswith("{") else None
    return run


def _code_mode_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    match _turn(messages):
        case 1:
            return ModelResponse(parts=[ToolCallPart("search", {"query": "", "limit": 10}, tool_call_id="s")])
        case 2:
            (found,) = _returns(messages[-1])
            signatures = [tool["signature"] for tool in found.content["tools"]]
            assert any(signature.startswith("tools.json_query(document: Any, query: str") for signature in signatures)
            return ModelResponse(parts=[ToolCallPart("execute", {"code": PROGRAM, "inputs": INPUTS}, tool_call_id="e")])
        case _:
            (ran,) = _returns(messages[-1])
            assert ran.content["ok"], ran.content
            return ModelResponse(parts=[TextPart(json.dumps(ran.content["value"]))])


def _direct_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = {part.tool_call_id: part.content for part in _returns(messages[-1])} if len(messages) > 1 else {}
    match _turn(messages):
        case 1:
            query = {"document": INPUTS, "query": "$.shipments[?@.status == 'open']"}
            find = {"operation": "find", "pattern": r"[\w.]+@[\w.]+\w", "text": INPUTS["note"]}
            return ModelResponse(
                parts=[ToolCallPart("json_query", query, tool_call_id="q"), ToolCallPart("regex", find, tool_call_id="r")]
            )
        case 2:
            _direct_model.open = [match["value"] for match in returns["q"]["matches"]]
            _direct_model.contact = returns["r"]["matches"][0]["text"]
            total = " + ".join(str(shipment["weight_lb"]) for shipment in _direct_model.open)
            oldest = min(shipment["shipped"] for shipment in _direct_model.open)
            waited = {"operation": "difference", "instant": oldest, "end": "2026-11-24", "time_zone": "UTC"}
            return ModelResponse(
                parts=[
                    ToolCallPart("calculator", {"expression": total}, tool_call_id="c"),
                    ToolCallPart("datetime", waited, tool_call_id="d"),
                ]
            )
        case 3:
            _direct_model.waiting = returns["d"]["friendly"]
            pounds = {"value": returns["c"]["value"], "from": "pound", "to": "kilogram"}
            return ModelResponse(parts=[ToolCallPart("unit_convert", pounds, tool_call_id="u")])
        case _:
            answer = {
                "open": len(_direct_model.open),
                "kg": round(returns["u"]["value"], 1),
                "waiting": _direct_model.waiting,
                "contact": _direct_model.contact,
            }
            return ModelResponse(parts=[TextPart(json.dumps(answer))])


def _turn(messages: list[ModelMessage]) -> int:
    return sum(1 for message in messages if isinstance(message, ModelRequest))


def _returns(message: ModelMessage) -> list[ToolReturnPart]:
    assert isinstance(message, ModelRequest)
    return [part for part in message.parts if isinstance(part, ToolReturnPart)]


# Approvals over MCP (2026-07-28): a program pausing at a call that waits for the user comes back
# as `input_required` with an elicitation; the SDK asks its callback and retries with the token.

PAUSING = (
    "first = tools.json_query(document={'a': 1}, query='$.a')['matches'][0]['value']\n"
    "try:\n    second = tools.calculator(expression=f'{first} + 1')['value']\n"
    "except ToolCallError as err:\n    second = err.kind\n"
    "[first, second]"
)


@pytest.fixture
def approving(toolcell, tmp_path):
    """The environment of a server whose programs wait for approval before calling `calculator`."""
    policy = tmp_path / "policy.toml"
    policy.write_text("[tools.calculator]\napprove = true\n")
    return {**toolcell.env, "TOOLCELL_POLICY": str(policy)}


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
@pytest.mark.parametrize("answer", ["approve", "refuse", "decline"])
async def test_a_program_pauses_for_the_users_approval_and_resumes(toolcell, approving, answer, mode):
    """2026-07-28: an `input_required` result the SDK answers and retries; legacy (2025-11-25):
    the server's own `elicitation/create` during the call."""
    from mcp import Client
    from mcp_types import ElicitResult

    asked: list[str] = []

    async def elicit(context, params):
        asked.append(params.message)
        if answer == "decline":
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"approve": answer == "approve"})

    with HttpServer(toolcell.binary, "--code-mode", env=approving) as server:
        async with Client(server.url, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("execute", {"code": PAUSING})
    assert asked == ['A program wants to call `calculator` with {"expression": "1 + 1"}. Allow this call?']
    assert result.structured_content["value"] == ([1, 2.0] if answer == "approve" else [1, "denied"])


async def test_another_stateless_replica_resumes_the_paused_program(toolcell, approving):
    from mcp import Client

    async def never(context, params):
        raise AssertionError("this client answers the input requests itself")

    with HttpServer(toolcell.binary, "--code-mode", "--stateless", env=approving) as first:
        # A client that can be asked (it declares elicitation) and answers by hand.
        async with Client(first.url, mode="2026-07-28", elicitation_callback=never) as client:
            paused = await client.session.call_tool("execute", {"code": PAUSING}, allow_input_required=True)
    assert paused.result_type == "input_required" and paused.request_state
    approval = {"approval": {"action": "accept", "content": {"approve": True}}}
    # A second process (the same compile cache, so the same resume key) resumes it.
    with HttpServer(toolcell.binary, "--code-mode", "--stateless", env=approving) as second:
        async with Client(second.url, mode="2026-07-28") as client:
            result = await client.call_tool(
                "execute", {"code": PAUSING}, input_responses=approval, request_state=paused.request_state
            )
            assert result.structured_content["value"] == [1, 2.0]
            # The same token again: refused, the approved call ran once.
            with pytest.raises(Exception, match="used already"):
                await client.call_tool(
                    "execute", {"code": PAUSING}, input_responses=approval, request_state=paused.request_state
                )
            tampered = paused.request_state[:40] + ("A" if paused.request_state[40] != "A" else "B") + paused.request_state[41:]
            with pytest.raises(Exception, match="not authentic"):
                await client.call_tool("execute", {"code": PAUSING}, input_responses=approval, request_state=tampered)
