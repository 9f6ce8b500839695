"""toolcell's tools as a pydantic-ai toolset.

    agent = Agent(model, toolsets=[toolcell.pydantic_ai.toolset(runtime)])

A call the model should fix (bad arguments, an unknown tool) raises ``ModelRetry`` with toolcell's
message, so pydantic-ai asks the model again; any other failure (a timeout, a tool's own error)
is returned as the tool's result, the message the model reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolcell._adapt import Spec, require, specs
from toolcell._toolcell import Tools

if TYPE_CHECKING:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.toolsets import FunctionToolset

__all__ = ["tool", "tools", "toolset"]


def toolset(source: Tools, *, max_retries: int = 3) -> FunctionToolset[Any]:
    """A ``FunctionToolset`` of every tool of a Runtime, ToolSet or CodeMode. ``max_retries`` is how
    many times in a row the model may get a call wrong before the run fails."""
    toolsets = require("pydantic_ai.toolsets", "pydantic-ai")
    return toolsets.FunctionToolset(tools(source), max_retries=max_retries)  # type: ignore[no-any-return]


def tools(source: Tools) -> list[Tool[Any]]:
    """A pydantic-ai ``Tool`` per tool of a Runtime, ToolSet or CodeMode (for ``Agent(tools=...)``,
    whose ``retries`` then apply)."""
    return [tool(source, spec) for spec in specs(source)]


def tool(source: Tools, spec: Spec) -> Tool[Any]:
    """One tool, with toolcell's schema and description."""
    pydantic_ai = require("pydantic_ai", "pydantic-ai")

    async def run(ctx: RunContext[Any], **arguments: Any) -> str:
        out = await source.call(spec.name, arguments, id=ctx.tool_call_id)
        if out.is_error and out.is_caller_error:
            raise pydantic_ai.ModelRetry(out.content)
        return out.content

    return pydantic_ai.Tool.from_schema(  # type: ignore[no-any-return]
        run, name=spec.name, description=spec.description, json_schema=spec.parameters, takes_ctx=True
    )
