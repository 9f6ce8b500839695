"""toolcell: WebAssembly-sandboxed tools for LLM agents, in process.

``Runtime`` loads tools (the standard ones, and a folder's) and calls them, each call in a fresh
sandbox under its limits. A failed call is never an exception: it is a ``ToolOutput`` with
``is_error``, whose ``content`` tells the model what to fix. Exceptions are for setup problems
(``PolicyError``, ``LoadError``, ...).

The framework adapters live in submodules that import their framework only when used:
``toolcell.pydantic_ai``, ``toolcell.langchain``, ``toolcell.llama_index`` and
``toolcell.openai_agents``.
"""

from __future__ import annotations

from toolcell._toolcell import (
    CodeMode,
    CodeModeError,
    Defer,
    Deny,
    FormatError,
    LoadError,
    MessageError,
    PolicyError,
    ResumeError,
    Runtime,
    ToolcellError,
    ToolOutput,
    Tools,
    ToolSet,
    ToolSetError,
    Usage,
    __version__,
    check_policy,
    explain_policy,
    formats,
    repair,
    suggest_rules,
)

# The adapters import their framework only when called, so importing them here costs nothing.
from toolcell import langchain, llama_index, openai_agents, pydantic_ai  # noqa: E402  (after the names they use)

__all__ = [
    "CodeMode",
    "CodeModeError",
    "Defer",
    "Deny",
    "FormatError",
    "LoadError",
    "MessageError",
    "PolicyError",
    "ResumeError",
    "Runtime",
    "ToolOutput",
    "ToolSet",
    "ToolSetError",
    "ToolcellError",
    "Tools",
    "Usage",
    "__version__",
    "check_policy",
    "code_mode",
    "explain_policy",
    "formats",
    "langchain",
    "llama_index",
    "openai_agents",
    "pydantic_ai",
    "repair",
    "suggest_rules",
]


def code_mode(tools: Runtime | ToolSet) -> CodeMode:
    """Code mode over a runtime or a tool set: two tools, ``search`` and ``execute``, where the
    model writes one Python program that calls the tools (``tools.<name>(...)``) under one
    budget. Hand the result to any adapter as you would the runtime.

    Raises ``CodeModeError`` when the policy does not turn code mode on (a ``[code_mode]`` table,
    or ``Runtime(code_mode=True)``).
    """
    return tools.code_mode()
