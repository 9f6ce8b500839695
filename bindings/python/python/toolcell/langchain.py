"""toolcell's tools as LangChain tools, for LangChain and LangGraph agents.

    agent = create_agent(model, tools=toolcell.langchain.tools(runtime))

Each is a ``StructuredTool`` with toolcell's schema (passed through unchanged, so the model sees
exactly what toolcell validates) and ``handle_tool_error``: a failed call becomes a
``ToolMessage`` with ``status="error"`` and toolcell's message, which the model reads and
corrects from (LangGraph's ``ToolNode`` would otherwise re-raise it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolcell._adapt import Spec, require, specs
from toolcell._toolcell import Tools

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["tool", "tools"]


def tools(source: Tools) -> list[StructuredTool]:
    """A ``StructuredTool`` per tool of a Runtime, ToolSet or CodeMode."""
    return [tool(source, spec) for spec in specs(source)]


def tool(source: Tools, spec: Spec) -> StructuredTool:
    """One tool, with toolcell's schema and description; sync and async."""
    lc_tools = require("langchain_core.tools", "langchain")

    def outcome(content: str, is_error: bool) -> str:
        if is_error:
            raise lc_tools.ToolException(content)
        return content

    async def run(**arguments: Any) -> str:
        out = await source.call(spec.name, arguments)
        return outcome(out.content, out.is_error)

    def run_sync(**arguments: Any) -> str:
        out = source.call_sync(spec.name, arguments)
        return outcome(out.content, out.is_error)

    return lc_tools.StructuredTool.from_function(  # type: ignore[no-any-return]
        func=run_sync,
        coroutine=run,
        name=spec.name,
        description=spec.description,
        args_schema=spec.parameters,
        infer_schema=False,
        handle_tool_error=True,
    )
