"""Each framework adapter in that framework's own agent loop, driven by the framework's own test
model: the model calls `calculator` with a wrong argument name, reads toolcell's error as that
framework feeds errors back, corrects the call, and answers with the result. The model sees
toolcell's schema and description unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolcell

BAD = {"expr": "6 * 7"}
GOOD = {"expression": "6 * 7"}
HINT = "did you mean `expression`?"


@pytest.fixture(scope="module")
def calculator(runtime: toolcell.Runtime) -> toolcell.ToolSet:
    return runtime.tool_set(allow=["calculator"])


def own_schema(tools: toolcell.Tools) -> dict[str, Any]:
    definition = tools.definition("calculator")
    assert definition is not None
    return definition["parameters"]  # type: ignore[no-any-return]


# --- pydantic-ai: FunctionModel --------------------------------------------------------------


async def test_pydantic_ai_retries_with_toolcells_message(calculator: toolcell.ToolSet) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = info.function_tools
        assert (tool.name, tool.parameters_json_schema) == ("calculator", own_schema(calculator))
        assert tool.description == calculator.definition("calculator")["description"]  # type: ignore[index]
        last = messages[-1].parts[-1]
        # pydantic-ai hands a ModelRetry back as the call's return, its outcome `retried`.
        if isinstance(last, ToolReturnPart) and last.outcome == "retried":
            seen.append(last.model_response_str())
            return ModelResponse(parts=[ToolCallPart("calculator", GOOD, tool_call_id="c2")])
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"The answer is {json.loads(last.content)['value']}")])
        return ModelResponse(parts=[ToolCallPart("calculator", BAD, tool_call_id="c1")])

    agent = Agent(FunctionModel(model), toolsets=[toolcell.pydantic_ai.toolset(calculator)])
    # (Not run_sync: it leaves an event loop open, which this suite counts as a failure.)
    result = await agent.run("What is 6 * 7?")
    assert result.output == "The answer is 42.0"
    assert len(seen) == 1 and HINT in seen[0]


async def test_pydantic_ai_returns_a_tool_failure_as_the_result(runtime: toolcell.Runtime) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(last.content)])
        return ModelResponse(parts=[ToolCallPart("http_fetch", {"url": "https://example.com/"})])

    tools = runtime.tool_set(allow=["http_fetch"])
    result = await Agent(FunctionModel(model), toolsets=[toolcell.pydantic_ai.toolset(tools)]).run("fetch")
    assert "no HTTP access here" in result.output


# --- LangChain / LangGraph: a fake chat model with tool calling --------------------------------


def fake_tool_model(*replies: Any) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class FakeToolModel(GenericFakeChatModel):
        """LangChain's fake chat model, which can be given tools (it answers from its script)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return FakeToolModel(messages=iter(replies))


async def test_langchain_agent_reads_the_error_and_corrects(calculator: toolcell.ToolSet) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool

    tools = toolcell.langchain.tools(calculator)
    assert convert_to_openai_tool(tools[0])["function"]["parameters"] == own_schema(calculator)
    model = fake_tool_model(
        AIMessage(content="", tool_calls=[{"name": "calculator", "args": BAD, "id": "c1"}]),
        AIMessage(content="", tool_calls=[{"name": "calculator", "args": GOOD, "id": "c2"}]),
        AIMessage(content="42"),
    )
    result = await create_agent(model, tools=tools).ainvoke({"messages": [("user", "6 * 7?")]})
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in answers] == ["error", "success"]
    assert HINT in str(answers[0].content) and json.loads(str(answers[1].content)) == {"value": 42.0}
    assert result["messages"][-1].content == "42"


def test_langchain_tools_work_sync_too(calculator: toolcell.ToolSet) -> None:
    (tool,) = toolcell.langchain.tools(calculator)
    assert json.loads(tool.invoke(GOOD)) == {"value": 42.0}
    error = tool.invoke({"name": "calculator", "args": BAD, "id": "c1", "type": "tool_call"})
    assert error.status == "error" and HINT in error.content


# --- LlamaIndex: a function-calling mock LLM --------------------------------------------------


async def test_llama_index_agent_reads_the_error_and_corrects(calculator: toolcell.ToolSet) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    tools = toolcell.llama_index.tools(calculator)
    assert tools[0].metadata.to_openai_tool()["function"]["parameters"] == own_schema(calculator)
    seen: list[list[str]] = []

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        answers = [str(m.content) for m in messages if m.role == MessageRole.TOOL]
        seen.append(answers)
        if not answers:
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="calculator", tool_kwargs=BAD)])
        if len(answers) == 1:
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c2", tool_name="calculator", tool_kwargs=GOOD)])
        return ChatMessage(role="assistant", content="42")

    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=respond))
    result = await agent.run(user_msg="6 * 7?")
    assert str(result) == "42"
    assert HINT in seen[1][0] and json.loads(seen[2][1]) == {"value": 42.0}


def test_llama_index_output_says_is_error(calculator: toolcell.ToolSet) -> None:
    (tool,) = toolcell.llama_index.tools(calculator)
    error = tool.call(**BAD)
    assert error.is_error and HINT in error.content and error.raw_input == BAD
    assert not tool.call(**GOOD).is_error


# --- OpenAI Agents SDK: a scripted model ----------------------------------------------------


class ScriptedModel:
    """An Agents SDK model that plays a script: tool calls (name, arguments) and a final text."""

    def __init__(self, *script: Any) -> None:
        from agents.models.interface import Model

        class Scripted(Model):
            seen: list[list[str]] = []
            tools: list[Any] = []

            async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, *args: Any, **kwargs: Any) -> Any:
                from agents import ModelResponse, Usage
                from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

                self.tools.append(tools)
                self.seen.append([i["output"] for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"])
                step = steps.pop(0)
                if isinstance(step, str):
                    text = ResponseOutputText(type="output_text", text=step, annotations=[])
                    output: list[Any] = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[text])]
                else:
                    name, arguments, call_id = step
                    output = [ResponseFunctionToolCall(id=f"fc_{call_id}", call_id=call_id, name=name, arguments=json.dumps(arguments), type="function_call", status="completed")]
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError

        steps = list(script)
        self.model = Scripted()


async def test_openai_agents_sdk_reads_the_error_and_corrects(calculator: toolcell.ToolSet) -> None:
    from agents import Agent, RunConfig, Runner

    tools = toolcell.openai_agents.tools(calculator)
    strict = calculator.definition("calculator", "openai-responses-strict")
    assert strict is not None
    assert tools[0].strict_json_schema and tools[0].params_json_schema == strict["parameters"]
    scripted = ScriptedModel(("calculator", BAD, "c1"), ("calculator", {**GOOD, "variables": None}, "c2"), "42").model
    agent = Agent(name="calculator", model=scripted, tools=tools)
    result = await Runner.run(agent, "6 * 7?", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "42"
    assert HINT in scripted.seen[1][0] and json.loads(scripted.seen[2][1]) == {"value": 42.0}


async def test_openai_agents_sdk_repairs_strict_arguments(calculator: toolcell.ToolSet) -> None:
    """Strict mode sends a map as a list of entries: the adapter gives the tool its own shape."""
    from agents import Agent, RunConfig, Runner

    arguments = {"expression": "x * y", "variables": [{"key": "x", "value": 6}, {"key": "y", "value": 7}]}
    scripted = ScriptedModel(("calculator", arguments, "c1"), "done").model
    agent = Agent(name="calculator", model=scripted, tools=toolcell.openai_agents.tools(calculator))
    await Runner.run(agent, "6 * 7?", run_config=RunConfig(tracing_disabled=True))
    assert json.loads(scripted.seen[1][0]) == {"value": 42.0}


# --- code mode, through each adapter ------------------------------------------------------------


def test_code_mode_is_one_tool_set_for_every_adapter(guests: toolcell.Runtime) -> None:
    code_mode = toolcell.code_mode(guests)
    program = {"code": "tools.calculator(expression='6*7')['value']"}
    (search, execute) = toolcell.langchain.tools(code_mode)
    assert (search.name, execute.name) == ("search", "execute")
    assert json.loads(execute.invoke(program))["value"] == 42.0
    (_, li_execute) = toolcell.llama_index.tools(code_mode)
    assert json.loads(li_execute.call(**program).content)["value"] == 42.0
    assert [tool.name for tool in toolcell.openai_agents.tools(code_mode)] == ["search", "execute"]
    assert [tool.name for tool in toolcell.pydantic_ai.tools(code_mode)] == ["search", "execute"]


def test_an_adapter_says_which_extra_installs_its_framework(monkeypatch: pytest.MonkeyPatch, calculator: toolcell.ToolSet) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "langchain_core.tools", None)
    with pytest.raises(ImportError, match=r"pip install 'toolcell\[langchain\]'"):
        toolcell.langchain.tools(calculator)


def test_an_adapter_refuses_what_is_not_tools() -> None:
    with pytest.raises(TypeError, match="toolcell Runtime, ToolSet or CodeMode"):
        toolcell.langchain.tools(["calculator"])  # type: ignore[arg-type]
