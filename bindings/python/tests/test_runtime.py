"""The runtime in process: loading, definitions, calls (sync and async), errors as outputs,
setup errors as exceptions, the GIL released while a call runs, and cancellation."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import toolcell
from conftest import cancel_while_running

STANDARD = ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]


def test_the_standard_tools_ship_in_the_wheel(runtime: toolcell.Runtime) -> None:
    assert runtime.names == STANDARD
    assert runtime.diagnostics == []
    assert "calculator" in runtime and len(runtime) == len(STANDARD)


def test_a_call_returns_the_output_and_its_usage(runtime: toolcell.Runtime) -> None:
    out = runtime.call_sync("calculator", {"expression": "2 * (3 + 4)"}, id="call-1")
    assert (out.call_id, out.tool, out.is_error, out.error_kind, out.error) == ("call-1", "calculator", False, None, None)
    assert json.loads(out.content) == {"value": 14.0} == out.value
    assert out.usage.fuel_consumed > 0 and out.usage.duration_us > 0 and out.usage.peak_memory_bytes > 0


def test_arguments_may_be_the_json_text_a_provider_sent(runtime: toolcell.Runtime) -> None:
    assert runtime.call_sync("calculator", '{"expression": "1+1"}').value == {"value": 2.0}
    bad = runtime.call_sync("calculator", '{"expression": ')
    assert bad.is_error and bad.error_kind == "malformed_arguments" and bad.is_caller_error


def test_bad_arguments_are_an_output_for_the_model_never_an_exception(runtime: toolcell.Runtime) -> None:
    out = runtime.call_sync("calculator", {"expr": "2+2"})
    assert out.is_error and out.error_kind == "invalid_arguments"
    assert out.retryable and out.is_caller_error and out.value is None
    assert "did you mean `expression`?" in out.content
    assert out.error is not None and out.error["kind"] == "invalid_arguments"
    assert [v["pointer"] for v in out.error["violations"]] == ["", "/expr"]


def test_an_unknown_tool_and_a_failing_tool_are_outputs(runtime: toolcell.Runtime) -> None:
    unknown = runtime.call_sync("calculater", {})
    assert unknown.error_kind == "unknown_tool" and "calculator" in unknown.content and unknown.is_caller_error
    denied = runtime.call_sync("http_fetch", {"url": "https://example.com/"})
    assert denied.error_kind == "http_denied" and not denied.is_caller_error and not denied.retryable


def test_per_call_limits_use_the_policy_keys(runtime: toolcell.Runtime) -> None:
    out = runtime.call_sync("python", {"code": "while True: pass"}, limits={"timeout_ms": 200})
    assert out.error_kind == "timeout" and not out.is_caller_error
    with pytest.raises(ValueError, match="`timeout` is not a limit: limits takes the policy file's limit keys"):
        runtime.call_sync("python", {"code": "1"}, limits={"timeout": 1})


def test_host_context_reaches_the_tool_not_the_schema(guests: toolcell.Runtime) -> None:
    definition = guests.definition("echo")
    assert definition is not None and "user_id" not in json.dumps(definition)
    out = guests.call_sync("echo", {"text": "hi", "count": 1}, context={"user_id": "u-42"})
    assert out.value["host_context"] == {"user_id": "u-42"}
    with pytest.raises(TypeError, match="context must be a dict"):
        guests.call_sync("echo", {"text": "hi", "count": 1}, context=["u-42"])


def test_definitions_in_every_provider_format(runtime: toolcell.Runtime) -> None:
    own = runtime.definitions()
    assert [d["name"] for d in own] == STANDARD and own[0]["parameters"]["type"] == "object"
    assert len(toolcell.formats()) == 10
    for name in toolcell.formats():
        try:
            assert runtime.definitions(name), name
        except toolcell.FormatError as refused:
            # All eight at once have more optional parameters than Anthropic's strict mode takes.
            assert name == "anthropic-strict" and "at most 24 optional parameters" in str(refused)
    openai = runtime.definitions("openai-strict")
    assert openai[0]["function"]["strict"] is True
    schema = {key: value for key, value in own[0]["parameters"].items() if key != "$schema"}
    assert runtime.definition("calculator", "anthropic")["input_schema"] == schema
    assert runtime.definition("nope") is None


def test_an_unknown_format_is_an_exception_naming_the_formats(runtime: toolcell.Runtime) -> None:
    with pytest.raises(toolcell.FormatError, match="openai-strict") as raised:
        runtime.definitions("openai-stric")
    assert isinstance(raised.value, toolcell.ToolcellError)


def test_respond_answers_a_models_message(runtime: toolcell.Runtime) -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "6*7"}'}},
            {"id": "c2", "type": "function", "function": {"name": "calculator", "arguments": '{"expr": "1"}'}},
        ],
    }
    replies = runtime.respond_sync("openai", message)
    assert [(r["role"], r["tool_call_id"]) for r in replies] == [("tool", "c1"), ("tool", "c2")]
    assert json.loads(replies[0]["content"]) == {"value": 42.0}
    assert "did you mean `expression`" in replies[1]["content"]
    assert asyncio.run(runtime.respond("openai", message)) == replies
    with pytest.raises(toolcell.MessageError):
        runtime.respond_sync("anthropic", {"content": 42})


def test_setup_problems_are_exceptions_of_the_runtimes_types(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[tools.calculator]\nfuel = -1\n")
    with pytest.raises(toolcell.PolicyError, match="policy.toml") as raised:
        toolcell.Runtime(policy=policy)
    assert isinstance(raised.value, toolcell.ToolcellError)
    with pytest.raises(toolcell.LoadError, match="no-such-folder"):
        toolcell.Runtime(tmp_path / "no-such-folder")


def test_a_folders_bad_file_is_a_diagnostic_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "broken.wasm").write_bytes(b"\0asm not really")
    runtime = toolcell.Runtime(tmp_path, builtins=False)
    assert runtime.names == []
    assert len(runtime.diagnostics) == 1 and "broken.wasm" in runtime.diagnostics[0]


async def test_parallel_async_calls(runtime: toolcell.Runtime) -> None:
    outs = await asyncio.gather(*(runtime.call("calculator", {"expression": f"{i} * 2"}) for i in range(8)))
    assert [out.value["value"] for out in outs] == [float(i * 2) for i in range(8)]


def test_a_call_is_awaited_once_and_runs_only_when_awaited(runtime: toolcell.Runtime) -> None:
    pending = runtime.call("calculator", {"expression": "3"})
    assert asyncio.run(pending).value == {"value": 3.0}
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        asyncio.run(pending)
    never_awaited = runtime.call("python", {"code": "while True: pass"})
    assert runtime.calls_in_flight == 0
    never_awaited.close()


async def test_runtime_load_is_awaitable() -> None:
    runtime = await toolcell.Runtime.load(builtins=True)
    assert (await runtime.call("calculator", {"expression": "1"})).value == {"value": 1.0}


def test_the_gil_is_released_while_a_call_runs(guests: toolcell.Runtime) -> None:
    """A thread blocked in a minute-long call does not keep other threads' calls (nor plain
    Python) from running: the slow call is still running when the fast ones are done."""
    slow: list[toolcell.ToolOutput] = []
    thread = threading.Thread(target=lambda: slow.append(guests.call_sync("sleeper", limits={"timeout_ms": 3_000})))
    thread.start()
    try:
        fast = [guests.call_sync("calculator", {"expression": "1+1"}) for _ in range(5)]
        assert all(out.value == {"value": 2.0} for out in fast)
        assert thread.is_alive() and not slow
    finally:
        thread.join()
    assert slow[0].error_kind == "timeout"


async def test_cancelling_the_asyncio_task_stops_the_sandbox(guests: toolcell.Runtime) -> None:
    assert guests.calls_in_flight == 0
    await cancel_while_running(guests, guests.call("sleeper"), calls=1)


def test_ctrl_c_stops_a_blocking_call(guests_dir: Path) -> None:
    # A background job (CI runs these tests in one) starts with SIGINT ignored, and Python then
    # keeps it so: the program asks for Ctrl-C's KeyboardInterrupt, as an interactive one has.
    program = textwrap.dedent(f"""
        import signal, sys, toolcell
        signal.signal(signal.SIGINT, signal.default_int_handler)
        runtime = toolcell.Runtime({str(guests_dir)!r}, builtins=False)
        print("calling", flush=True)
        try:
            runtime.call_sync("sleeper")
        except KeyboardInterrupt:
            print("interrupted", runtime.calls_in_flight, flush=True)
            sys.exit(3)
    """)
    child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "calling"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=30)
    assert (child.returncode, out.strip()) == (3, "interrupted 0")


# --- attacks: what a model, a framework or the host's code can hand the binding ---------------


def nested(depth: int) -> dict[str, object]:
    root: dict[str, object] = {}
    level = root
    for _ in range(depth):
        level["a"] = {}
        level = level["a"]  # type: ignore[assignment]
    return root


def test_arguments_nested_without_end_are_the_models_error_not_a_crash(runtime: toolcell.Runtime) -> None:
    """A 200,000-deep dict (it crashed the interpreter with a stack overflow before the bound)
    and a dict containing itself are refused as the runtime refuses JSON text that deep."""
    cyclic: dict[str, object] = {}
    cyclic["a"] = cyclic
    for arguments in (nested(200_000), cyclic, [nested(500)]):
        out = runtime.call_sync("calculator", arguments)
        assert out.error_kind == "malformed_arguments" and "recursion limit exceeded" in out.content
    # 100 levels are taken, and checked against the schema as usual.
    assert runtime.call_sync("calculator", nested(100)).error_kind == "invalid_arguments"


def test_host_values_nested_without_end_are_an_exception(runtime: toolcell.Runtime) -> None:
    cyclic: dict[str, object] = {}
    cyclic["a"] = cyclic
    with pytest.raises(ValueError, match="nests deeper than 128 levels"):
        runtime.call_sync("calculator", {"expression": "1"}, context=cyclic)
    with pytest.raises(ValueError, match="nests deeper than 128 levels"):
        runtime.respond_sync("openai", nested(10_000))


def test_what_json_cannot_hold_is_refused_saying_what(runtime: toolcell.Runtime) -> None:
    with pytest.raises(TypeError, match="a set is not JSON data"):
        runtime.call_sync("calculator", {"expression": {1, 2}})
    with pytest.raises(TypeError, match="a dict key must be a str"):
        runtime.call_sync("calculator", {1: "x"})
    with pytest.raises(TypeError, match="nan is not a JSON number"):
        runtime.call_sync("calculator", {"expression": "x", "variables": {"x": float("nan")}})
    with pytest.raises(TypeError, match="too large"):
        runtime.call_sync("calculator", {"expression": "x", "variables": {"x": 2**70}})
