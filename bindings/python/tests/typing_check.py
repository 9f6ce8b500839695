"""Not a test: code a user writes, which `mypy --strict` checks against the package's stub (in
.ci/python). A wrong type here, or a stub that drifted from the module, fails the check."""

from __future__ import annotations

import asyncio
from typing import Any

import toolcell


def use(runtime: toolcell.Runtime) -> str:
    out: toolcell.ToolOutput = runtime.call_sync("calculator", {"expression": "1"}, context={"user": "u"})
    kind: str | None = out.error_kind
    fuel: int = out.usage.fuel_consumed
    definitions: list[dict[str, Any]] = runtime.definitions("openai-strict")
    tool_set = runtime.tool_set(allow=["calculator"], limits={"timeout_ms": 100}, retry=True)
    code_mode: toolcell.CodeMode = toolcell.code_mode(tool_set)
    replies: list[dict[str, Any]] = runtime.respond_sync("openai", {"role": "assistant", "tool_calls": []})
    return f"{out.content} {kind} {fuel} {len(definitions)} {code_mode.names} {replies}"


async def use_async(runtime: toolcell.Runtime) -> bool:
    def deny(call: dict[str, Any]) -> toolcell.Deny | None:
        return toolcell.Deny("no") if call["name"] == "python" else None

    guarded = runtime.tool_set(interceptors=[deny])
    outs = await asyncio.gather(guarded.call("calculator", {"expression": "2"}), guarded.call("python", {"code": "1"}))
    loaded: toolcell.Runtime = await toolcell.Runtime.load(code_mode=True)
    return all(out.is_error for out in outs) and len(loaded) > 0


def adapters(tools: toolcell.Tools) -> int:
    return (
        len(toolcell.langchain.tools(tools))
        + len(toolcell.llama_index.tools(tools))
        + len(toolcell.openai_agents.tools(tools))
        + len(toolcell.pydantic_ai.tools(tools))
    )


def policy_questions(policy: str) -> bool:
    explained: list[dict[str, Any]] = toolcell.explain_policy(policy=policy, tool="python")
    outcomes = toolcell.check_policy(['deny reach "*.internal"'], tools_dir="tools", code_mode=True)
    suggested: dict[str, Any] = toolcell.suggest_rules("denials.jsonl")
    return bool(explained) and all(outcome["holds"] for outcome in outcomes) and bool(suggested["rules"])
