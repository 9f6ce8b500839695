"""toolcell's tools as LlamaIndex tools.

    agent = FunctionAgent(tools=toolcell.llama_index.tools(runtime), llm=llm)

Each is a ``FunctionTool`` whose metadata gives the model toolcell's schema unchanged, and whose
output is a ``ToolOutput`` with ``is_error`` set from the call: a failure's content is
toolcell's message, which the agent hands the model as the tool's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolcell._adapt import Spec, require, specs
from toolcell._toolcell import ToolOutput as CallOutput
from toolcell._toolcell import Tools

if TYPE_CHECKING:
    from llama_index.core.tools import FunctionTool

__all__ = ["tool", "tools"]


def tools(source: Tools) -> list[FunctionTool]:
    """A ``FunctionTool`` per tool of a Runtime, ToolSet or CodeMode."""
    return [tool(source, spec) for spec in specs(source)]


def tool(source: Tools, spec: Spec) -> FunctionTool:
    """One tool, with toolcell's schema and description; sync and async."""
    li_tools = require("llama_index.core.tools", "llama-index")
    metadata = _metadata_class(li_tools.ToolMetadata)(
        description=spec.description, name=spec.name, parameters=spec.parameters
    )

    def output(answer: _Answer) -> Any:
        return li_tools.ToolOutput(
            tool_name=spec.name,
            content=answer.output.content,
            raw_input=answer.arguments,
            raw_output=answer.output,
            is_error=answer.output.is_error,
        )

    async def run(**arguments: Any) -> _Answer:
        return _Answer(await source.call(spec.name, arguments), arguments)

    def run_sync(**arguments: Any) -> _Answer:
        return _Answer(source.call_sync(spec.name, arguments), arguments)

    async def output_async(answer: _Answer) -> Any:
        return output(answer)

    # The callbacks' ToolOutput replaces the one FunctionTool would make, which has no is_error.
    return li_tools.FunctionTool(  # type: ignore[no-any-return]
        fn=run_sync, async_fn=run, metadata=metadata, callback=output, async_callback=output_async
    )


@dataclass(frozen=True)
class _Answer:
    """A call's output with the arguments it was made with, for the ToolOutput."""

    output: CallOutput
    arguments: dict[str, Any]

    def __str__(self) -> str:
        return self.output.content


_METADATA: dict[type, type] = {}


def _metadata_class(base: type) -> type:
    """``ToolMetadata`` whose parameters are toolcell's schema as it is (LlamaIndex's own keeps
    only some keys of a pydantic model's schema, and would drop ``additionalProperties``)."""
    if base not in _METADATA:

        @dataclass
        class SchemaMetadata(base):  # type: ignore[misc]
            parameters: dict[str, Any] = field(default_factory=dict)

            def get_parameters_dict(self) -> dict[str, Any]:
                return self.parameters

        _METADATA[base] = SchemaMetadata
    return _METADATA[base]
