"""MCP's Tasks extension with the Python SDK (`mcp` 2.3.0), which has no tasks client of its own but
an extension point for one: `TasksExtension` below claims the `resultType: "task"` answer of
`tools/call` and resolves it by polling `tasks/get`, answering the task's questions with
`tasks/update`, the way SEP-2663 describes. Against `toolcell serve` over HTTP (2026-07-28): a long
call becomes a task polled to its result, a program's approval is asked through the task, and a
client without the extension gets every call answered inline."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from toolcell_server import HttpServer

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


def _tasks_extension(answer):
    """The client's extension; `answer(request)` answers each input request a task makes."""
    from mcp import types
    from mcp.client.extension import ClientExtension, ResultClaim
    from mcp_types import CallToolResult, Result

    class CreatedTask(Result):
        result_type: Literal["task"] = "task"
        task_id: str
        status: str
        ttl_ms: int | None
        poll_interval_ms: int | None = None

    class TaskIdParams(types.RequestParams):
        task_id: str

    class UpdateParams(TaskIdParams):
        input_responses: dict[str, Any]

    class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        params: TaskIdParams
        name_param: ClassVar[str | None] = "taskId"

    class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
        method: Literal["tasks/update"] = "tasks/update"
        params: UpdateParams
        name_param: ClassVar[str | None] = "taskId"

    class Polled(Result):
        model_config = {"extra": "allow"}

    class Tasks(ClientExtension):
        identifier = TASKS

        def __init__(self) -> None:
            self.created: list[CreatedTask] = []
            self.statuses: list[str] = []

        def claims(self):
            return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

        async def resolve(self, task: CreatedTask, ctx) -> CallToolResult:
            self.created.append(task)
            interval = (task.poll_interval_ms or 200) / 1000
            for _ in range(600):
                got = (await ctx.session.send_request(GetTask(params=TaskIdParams(task_id=task.task_id)), Polled))
                got = got.model_dump(by_alias=True)
                self.statuses.append(got["status"])
                if got["status"] == "input_required":
                    answers = {key: answer(request) for key, request in got["inputRequests"].items()}
                    update = UpdateTask(params=UpdateParams(task_id=task.task_id, input_responses=answers))
                    await ctx.session.send_request(update, Polled)
                elif got["status"] == "completed":
                    return CallToolResult.model_validate(got["result"])
                elif got["status"] in TERMINAL:
                    raise RuntimeError(f"task {task.task_id} ended {got['status']}: {got}")
                await asyncio.sleep(interval)
            raise TimeoutError(f"task {task.task_id} did not end")

    return Tasks()


@pytest.fixture
def task_tools(toolcell, tmp_path) -> Path:
    """The tasks fixture tools (toolcell-task-tools, beside the binary), and a policy that has a
    person approve every `calculator` call a program makes."""
    folder = tmp_path / "tools"
    subprocess.run([str(Path(toolcell.binary).with_name("toolcell-task-tools")), str(folder)], check=True, timeout=60)
    with open(folder / "toolcell.toml", "a") as policy:
        policy.write("\n[tools.calculator]\napprove = true\n")
    return folder


def _serve(toolcell, task_tools: Path) -> HttpServer:
    return HttpServer(toolcell.binary, "--code-mode", "also", "--tools-dir", str(task_tools), env=toolcell.env)


async def test_a_long_call_is_a_task_the_extension_polls_to_its_result(toolcell, task_tools):
    from mcp import Client

    tasks = _tasks_extension(lambda request: pytest.fail(f"unexpected question {request}"))
    with _serve(toolcell, task_tools) as server:
        async with Client(server.url, mode="2026-07-28", extensions=[tasks]) as client:
            slow = await client.call_tool("slow_compute", {"seconds": 1, "label": "py"})
            failing = await client.call_tool("failing_job", {})
            greeted = await client.call_tool("greet", {"name": "Py"})
    assert slow.content[0].text == '"py done after 1 s"'
    assert failing.is_error and "the job failed" in failing.content[0].text
    assert greeted.content[0].text == '"Hello, Py!"'
    # slow_compute and failing_job were tasks (polled while working); greet was not.
    assert len(tasks.created) == 2
    assert all(task.ttl_ms == 600_000 and task.poll_interval_ms for task in tasks.created)
    assert "working" in tasks.statuses


@pytest.mark.parametrize("approve", [True, False])
async def test_a_program_asks_for_approval_through_its_task(toolcell, task_tools, approve):
    from mcp import Client

    asked: list[dict] = []

    def answer(request: dict) -> dict:
        asked.append(request)
        return {"action": "accept", "content": {"approve": approve}}

    async def not_this_way(context, params):
        pytest.fail("a task's question comes through tasks/get, not elicitation/create")

    tasks = _tasks_extension(answer)
    code = "try:\n    print(tools.calculator(expression='6*7')['value'])\nexcept ToolCallError as e:\n    print(e.kind)"
    with _serve(toolcell, task_tools) as server:
        # The elicitation callback declares the capability: the server asks only clients that have it.
        async with Client(server.url, mode="2026-07-28", extensions=[tasks], elicitation_callback=not_this_way) as client:
            result = await client.call_tool("execute", {"code": code})
    assert len(tasks.created) == 1 and "input_required" in tasks.statuses
    assert [request["method"] for request in asked] == ["elicitation/create"]
    assert "`calculator`" in asked[0]["params"]["message"]
    assert result.structured_content["stdout"] == ("42.0\n" if approve else "denied\n")


async def test_without_the_extension_every_call_is_answered_inline(toolcell, task_tools):
    from mcp import Client

    from mcp import MCPError

    with _serve(toolcell, task_tools) as server:
        async with Client(server.url, mode="2026-07-28") as client:
            slow = await client.call_tool("slow_compute", {"seconds": 1})
            # failing_job requires a task: refused, saying which capability the client lacks.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("failing_job", {})
    assert slow.content[0].text == '"slow_compute done after 1 s"'
    assert refused.value.error.code == -32021
    assert refused.value.error.data["requiredCapabilities"]["extensions"] == {TASKS: {}}
