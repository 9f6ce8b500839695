"""toolcell's tools as OpenAI Agents SDK tools.

    agent = Agent(name="assistant", tools=toolcell.openai_agents.tools(runtime))

Each is a ``FunctionTool`` with toolcell's strict schema where toolcell's strict export has one
(``openai-responses-strict``), else its own schema, not strict. A failed call returns toolcell's
message as the tool's output, which the SDK sends back to the model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolcell._adapt import Spec, require, specs
from toolcell._toolcell import FormatError, Tools, repair

if TYPE_CHECKING:
    from agents import FunctionTool
    from agents.tool_context import ToolContext

__all__ = ["tool", "tools"]

STRICT_FORMAT = "openai-responses-strict"


def tools(source: Tools) -> list[FunctionTool]:
    """A ``FunctionTool`` per tool of a Runtime, ToolSet or CodeMode."""
    return [tool(source, spec) for spec in specs(source)]


def tool(source: Tools, spec: Spec) -> FunctionTool:
    """One tool: strict when toolcell can export it strict, its arguments then repaired back into
    the tool's own shape before the call."""
    agents = require("agents", "openai-agents")
    try:
        strict_definition = source.definition(spec.name, STRICT_FORMAT)
    except FormatError:
        strict_definition = None
    strict = strict_definition is not None
    schema = strict_definition["parameters"] if strict_definition is not None else spec.parameters

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError:
            # toolcell says what is wrong with the text, for the model.
            return (await source.call(spec.name, arguments, id=ctx.tool_call_id)).content
        if strict:
            parsed = repair(STRICT_FORMAT, spec.parameters, parsed)
        return (await source.call(spec.name, parsed, id=ctx.tool_call_id)).content

    return agents.FunctionTool(  # type: ignore[no-any-return]
        name=spec.name,
        description=spec.description,
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=strict,
    )
