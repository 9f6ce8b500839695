"""Calling other tools of the host ("code mode"), through the `toolcell:tool/calls` import.

    from toolcell_tool.calls import ToolCallError, call_tool, callable_tools

A tool may call only the tools its operator's policy names for it (`call_tools` in
`toolcell.toml`); by default none. Each call runs the way any call does: the callee's schema
checks the arguments, and it runs in a fresh instance under its own limits and grants. The
time and fuel it takes come out of this call's.

Importing this module is what makes `build.py` build the tool against the `calling-tool`
world, whose one addition is this import: a tool that never imports it does not import the
interface, and runs on hosts that predate it. Outside a component (a native test) no tool
is callable, unless a test installs a stand-in host with `use_host`.
"""

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class CallableTool:
    """A tool this tool may call: its name, its description and its parameters' JSON Schema."""

    name: str
    description: str
    parameters_schema: dict


class ToolCallError(Exception):
    """A call to another tool produced no result. `kind` is the host's (`invalid_arguments`,
    `tool_failed`, `timeout`, ..., `not_allowed`, `depth_limit`, `call_limit`); `message`
    says what went wrong and what to do, for a model; `retryable` whether calling again
    unchanged may succeed."""

    def __init__(self, kind, message, retryable=False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable


class _NoHost:
    """Outside a component: nothing to call."""

    def callable(self):
        return []

    def call(self, name, arguments):
        raise ToolCallError(
            "not_allowed",
            f"`{name}` was not called: calling other tools needs a toolcell host, and this is not a component",
        )


class _ComponentHost:
    """The `calls` import of a component built against the `calling-tool` world."""

    def __init__(self, calls, err_type):
        self._calls = calls
        self._err = err_type

    def callable(self):
        return [
            CallableTool(tool.name, tool.description, json.loads(tool.parameters_schema))
            for tool in self._calls.callable()
        ]

    def call(self, name, arguments):
        try:
            return self._calls.call(name, arguments)
        except self._err as err:
            error = err.value
            raise ToolCallError(error.kind, error.message, error.retryable) from None


def _component_host():
    try:
        import componentize_py_types
        from wit_world.imports import calls
    except ImportError:
        return None
    return _ComponentHost(calls, componentize_py_types.Err)


_host = _component_host() or _NoHost()


def use_host(host):
    """Installs a stand-in for the host in native tests: an object with `callable()` (a list
    of CallableTool) and `call(name, arguments_json)` (the result as JSON text, or raising
    ToolCallError). `None` restores the default."""
    global _host
    _host = host if host is not None else (_component_host() or _NoHost())


def callable_tools():
    """The tools this tool may call here, as CallableTool; empty unless the operator allows some."""
    return _host.callable()


def call_tool(name, arguments=None):
    """Calls the tool named `name` with `arguments` (a dict, JSON-ready) and returns its
    result, parsed. Raises ToolCallError when the callee failed or was not run."""
    text = _host.call(name, json.dumps(arguments if arguments is not None else {}, ensure_ascii=False))
    try:
        return json.loads(text)
    except ValueError as err:
        raise ToolCallError("invalid_output", f"tool `{name}` returned a result that is not JSON: {err}") from None
