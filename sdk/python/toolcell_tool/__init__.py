"""toolcell's Python guest SDK: write a tool as a plain, documented, type-hinted function.

    from typing import Annotated, Literal
    from toolcell_tool import InvalidArguments, Length, tool

    @tool(read_only=True, idempotent=True)
    def word_count(text: Annotated[str, Length(min=1)], unit: Literal["words", "lines"] | None = None) -> int:
        \"\"\"Count the words or lines in a text.

        Args:
            text: The text to measure.
            unit: What to count; words when omitted.
        \"\"\"

`build.py` (next to this package) compiles a project holding one such function into a
WebAssembly component for toolcell; `invoke_json` calls it natively, as the host would.
"""

from .constraints import Length, Pattern, Range, Schema
from .context import Context
from .errors import Failed, InvalidArguments, ToolDefinitionError, ToolError, Unavailable
from .tool import Tool, find_tool, invoke_json, tool

__all__ = [
    "Context",
    "Failed",
    "InvalidArguments",
    "Length",
    "Pattern",
    "Range",
    "Schema",
    "Tool",
    "ToolDefinitionError",
    "ToolError",
    "Unavailable",
    "find_tool",
    "invoke_json",
    "tool",
]
