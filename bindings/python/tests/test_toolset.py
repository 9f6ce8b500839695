"""Tool sets: allow/deny/filter, context, limits, retries, and interceptors written in Python
(sync and async, before and after, in direct calls and in code mode's nested calls). Code mode."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

import toolcell
from conftest import cancel_while_running


def test_allow_deny_and_filter_choose_the_tools(runtime: toolcell.Runtime) -> None:
    assert runtime.tool_set(allow=["calculator", "regex"]).names == ["calculator", "regex"]
    assert "python" not in runtime.tool_set(deny=["python"]).names
    seen: list[str] = []

    def closed_world(definition: dict[str, Any]) -> bool:
        seen.append(definition["name"])
        return not definition["annotations"]["openWorldHint"]

    kept = runtime.tool_set(filter=closed_world)
    assert seen == runtime.names and "calculator" in kept.names and "http_fetch" not in kept.names
    # A tool outside the set is unknown to it.
    out = runtime.tool_set(allow=["regex"]).call_sync("calculator", {"expression": "1"})
    assert out.error_kind == "unknown_tool"


def test_naming_a_tool_not_loaded_is_an_exception(runtime: toolcell.Runtime) -> None:
    with pytest.raises(toolcell.ToolSetError, match="calculater"):
        runtime.tool_set(allow=["calculater"])


def test_a_filter_that_raises_raises_from_tool_set(runtime: toolcell.Runtime) -> None:
    def broken(definition: dict[str, Any]) -> bool:
        raise KeyError("oops")

    with pytest.raises(KeyError, match="oops"):
        runtime.tool_set(filter=broken)


def test_context_and_limits_of_the_set(guests: toolcell.Runtime) -> None:
    tool_set = guests.tool_set(context={"tenant": "t-1"}, limits={"timeout_ms": 100})
    assert tool_set.call_sync("echo", {"text": "a", "count": 1}).value["host_context"] == {"tenant": "t-1"}
    assert tool_set.call_sync("sleeper").error_kind == "timeout"


def test_a_sync_interceptor_rewrites_denies_and_sees_outputs(runtime: toolcell.Runtime) -> None:
    outputs: list[tuple[str, str]] = []

    class Guard:
        def before(self, call: dict[str, Any]) -> Any:
            if call["arguments"].get("expression") == "forbidden":
                return toolcell.Deny("that expression is not allowed here; ask the user")
            if call["arguments"].get("expression") == "double me":
                return {**call, "arguments": {"expression": "21 * 2"}}
            return None

        def after(self, call: dict[str, Any], output: toolcell.ToolOutput) -> None:
            outputs.append((call["id"], output.content))

    tool_set = runtime.tool_set(interceptors=[Guard()])
    denied = tool_set.call_sync("calculator", {"expression": "forbidden"}, id="d")
    assert denied.error_kind == "denied" and "ask the user" in denied.content
    assert tool_set.call_sync("calculator", {"expression": "double me"}, id="r").value == {"value": 42.0}
    assert tool_set.call_sync("calculator", {"expression": "1"}, id="p").value == {"value": 1.0}
    assert [call_id for call_id, _ in outputs] == ["d", "r", "p"]


async def test_an_async_interceptor_runs_on_the_callers_event_loop(runtime: toolcell.Runtime) -> None:
    loop = asyncio.get_running_loop()
    ran_on: list[Any] = []

    async def approve(call: dict[str, Any]) -> bool:
        ran_on.append(asyncio.get_running_loop())
        await asyncio.sleep(0.01)
        return call["arguments"]["expression"] != "2+2"

    tool_set = runtime.tool_set(interceptors=[approve])
    allowed, refused = await asyncio.gather(
        tool_set.call("calculator", {"expression": "1+1"}), tool_set.call("calculator", {"expression": "2+2"})
    )
    assert allowed.value == {"value": 2.0}
    assert refused.error_kind == "denied"
    assert ran_on == [loop, loop]


def test_an_async_interceptor_of_a_blocking_call_runs_in_its_own_loop(runtime: toolcell.Runtime) -> None:
    async def deny(call: dict[str, Any]) -> toolcell.Deny:
        await asyncio.sleep(0)
        return toolcell.Deny("no")

    assert runtime.tool_set(interceptors=[deny]).call_sync("calculator", {"expression": "1"}).error_kind == "denied"


def test_a_python_approval_prompt_blocks_only_its_call(runtime: toolcell.Runtime) -> None:
    """A sync interceptor waiting for a person (here, an event another thread sets) runs off
    the calling thread, which has released the GIL: the other thread can answer it."""
    asked = threading.Event()
    answered = threading.Event()

    def ask_a_person(call: dict[str, Any]) -> bool:
        asked.set()
        return answered.wait(timeout=30)

    def person() -> None:
        asked.wait(timeout=30)
        answered.set()

    helper = threading.Thread(target=person)
    helper.start()
    out = runtime.tool_set(interceptors=[ask_a_person]).call_sync("calculator", {"expression": "5"})
    helper.join()
    assert out.value == {"value": 5.0}


def test_an_interceptor_that_raises_refuses_the_call_without_telling_the_model_why(
    runtime: toolcell.Runtime, capfd: pytest.CaptureFixture[str]
) -> None:
    def broken(call: dict[str, Any]) -> None:
        raise RuntimeError("secret-internal-detail")

    out = runtime.tool_set(interceptors=[broken]).call_sync("calculator", {"expression": "1"})
    assert out.error_kind == "denied" and "interceptor failed" in out.content
    assert "secret-internal-detail" not in out.content
    assert "secret-internal-detail" in capfd.readouterr().err


def test_an_interceptor_returning_nonsense_refuses_the_call(runtime: toolcell.Runtime) -> None:
    out = runtime.tool_set(interceptors=[lambda call: 42]).call_sync("calculator", {"expression": "1"})
    assert out.error_kind == "denied"


def test_defer_ends_a_direct_call_approval_required(runtime: toolcell.Runtime) -> None:
    out = runtime.tool_set(interceptors=[lambda call: toolcell.Defer("ask the owner")]).call_sync(
        "calculator", {"expression": "1"}
    )
    assert out.error_kind == "approval_required"


def test_retry_takes_true_or_a_count(runtime: toolcell.Runtime) -> None:
    assert runtime.tool_set(retry=True).call_sync("calculator", {"expression": "1"}).value == {"value": 1.0}
    assert runtime.tool_set(retry=3).names == runtime.names
    with pytest.raises(TypeError, match="retry is True, False or a number"):
        runtime.tool_set(retry="often")  # type: ignore[arg-type]


def test_code_mode_runs_a_program_calling_the_tools(guests: toolcell.Runtime) -> None:
    code_mode = toolcell.code_mode(guests)
    assert code_mode.names == ["search", "execute"] and "calculator" in code_mode.callable
    out = code_mode.call_sync("execute", {"code": "tools.calculator(expression='6*7')['value']"})
    assert not out.is_error and out.value["value"] == 42.0
    assert out.usage.nested_calls == 1


async def test_interceptors_see_code_modes_nested_calls(guests: toolcell.Runtime) -> None:
    seen: list[str] = []

    async def log(call: dict[str, Any]) -> None:
        seen.append(call["name"])

    code_mode = guests.tool_set(interceptors=[log]).code_mode()
    out = await code_mode.call(
        "execute", {"code": "[tools.calculator(expression=str(i))['value'] for i in range(3)]"}
    )
    assert out.value["value"] == [0.0, 1.0, 2.0]
    assert seen.count("calculator") == 3


def test_code_mode_off_is_an_exception_saying_how_to_turn_it_on(runtime: toolcell.Runtime) -> None:
    with pytest.raises(toolcell.CodeModeError, match=r"toolcell.Runtime\(code_mode=True\)"):
        toolcell.code_mode(runtime)


async def test_respond_runs_each_call_with_the_async_interceptors_of_its_loop(runtime: toolcell.Runtime) -> None:
    loop = asyncio.get_running_loop()
    ran_on: list[Any] = []

    async def record(call: dict[str, Any]) -> None:
        ran_on.append(asyncio.get_running_loop())

    message = {"role": "assistant", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "calculator", "arguments": f'{{"expression": "{i}"}}'}}
        for i in range(4)
    ]}
    replies = await runtime.tool_set(interceptors=[record]).respond("openai", message)
    assert [reply["content"] for reply in replies] == [f'{{"value":{i}.0}}' for i in range(4)]
    assert ran_on == [loop] * 4


async def test_cancelling_respond_stops_every_call(guests: toolcell.Runtime) -> None:
    message = {"role": "assistant", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "sleeper", "arguments": "{}"}} for i in range(2)
    ]}
    respond = guests.respond("openai", message)
    await cancel_while_running(guests, respond, calls=2)


def test_a_python_approval_pauses_a_program_and_resume_finishes_it(guests: toolcell.Runtime) -> None:
    asked: list[dict[str, Any]] = []

    def ask_first(call: dict[str, Any]) -> toolcell.Defer | None:
        if call["name"] == "calculator" and not asked:
            asked.append(call)
            return toolcell.Defer("a person approves each calculation")
        return None

    code_mode = guests.tool_set(interceptors=[ask_first]).code_mode()
    program = {"code": "tools.calculator(expression='6*7')['value'] + 1"}
    paused = code_mode.call_sync("execute", program, id="run-1")
    assert paused.error_kind == "approval_required" and paused.error is not None
    token = paused.error["resume_token"]
    assert token and asked[0]["arguments"] == {"expression": "6*7"}

    resumed = code_mode.resume_sync("run-1", token, approved=True)
    assert not resumed.is_error and resumed.value["value"] == 43.0
    with pytest.raises(toolcell.ResumeError, match="used already"):
        code_mode.resume_sync("run-1", token, approved=True)
    with pytest.raises(toolcell.ResumeError, match="not authentic"):
        code_mode.resume_sync("run-1", token[:-4] + "AAAA", approved=False)


async def test_a_denied_approval_is_the_programs_to_handle(guests: toolcell.Runtime) -> None:
    code_mode = guests.tool_set(interceptors=[lambda call: toolcell.Defer("ask")]).code_mode()
    program = {"code": "try:\n    got = tools.calculator(expression='1')\nexcept ToolCallError as err:\n    got = err.kind\ngot"}
    paused = await code_mode.call("execute", program, id="run-2")
    assert paused.error is not None
    resumed = await code_mode.resume("run-2", paused.error["resume_token"], approved=False)
    assert resumed.value["value"] == "denied"


def test_an_interceptor_running_when_the_interpreter_exits_finishes_and_the_exit_is_clean(tmp_path: Path) -> None:
    # A daemon thread's call is in its interceptor (on a thread of the runtime's) when the script
    # ends. The exit waits for it to leave Python: before, the thread was cut off mid-interceptor
    # (here, before it wrote its file), and a thread entering Python while it finalized could
    # abort the process (`PyGILState_Release: thread state must be current`).
    marker = tmp_path / "finished"
    program = textwrap.dedent(
        f"""
        import threading, time, toolcell
        def slow(call):
            time.sleep(0.5)
            open({str(marker)!r}, "w").write("finished")
        tools = toolcell.Runtime().tool_set(interceptors=[slow])
        threading.Thread(target=lambda: tools.call_sync("calculator", {{"expression": "1+1"}}), daemon=True).start()
        time.sleep(0.1)
        """
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (0, "")
    assert marker.read_text() == "finished"
