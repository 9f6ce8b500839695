"""Code mode: the tools a program may call, as functions of one object, `tools`.

    total = tools.calculator(expression="2 + 2")["value"]

Each function takes the callee's parameters (by keyword, or by position in the schema's
order, required ones first), carries a signature and a docstring made from its schema and
description, and returns the callee's result as Python values. A call that fails raises
ToolCallError, whose message is the one the host writes for a model.
"""

import inspect
import keyword

from toolcell_tool.calls import ToolCallError, call_tool, callable_tools

_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
    "null": "None",
}


class Tools:
    """The tools this program may call: `tools.<name>(...)`, or `tools["<name>"](...)` for a
    name that is not an identifier. `dir(tools)` lists them; `help` shows each one's use."""

    def __init__(self, callables):
        self._by_name = {tool.name: _function(tool) for tool in callables}
        self._by_attribute = {}
        for name, function in self._by_name.items():
            attribute = name.replace("-", "_")
            if attribute.isidentifier() and not keyword.iskeyword(attribute):
                self._by_attribute.setdefault(attribute, function)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._by_attribute[name]
        except KeyError:
            raise AttributeError(self._missing(name)) from None

    def __getitem__(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(self._missing(name)) from None

    def __dir__(self):
        return sorted(self._by_attribute)

    def __iter__(self):
        return iter(sorted(self._by_name))

    def __repr__(self):
        return f"<tools: {', '.join(sorted(self._by_name)) or 'none may be called here'}>"

    def _missing(self, name):
        if not self._by_name:
            return f"no tool `{name}`: this program may call no tools here (the operator allows none)"
        return f"no tool `{name}` may be called here; these may: {', '.join(sorted(self._by_name))}"


def tools():
    """The `tools` object for a program: the tools this call may make, read from the host."""
    return Tools(callable_tools())


def _function(tool):
    schema = tool.parameters_schema if isinstance(tool.parameters_schema, dict) else {}
    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required") or [] if name in properties]
    optional = [name for name in properties if name not in required]
    named = [name for name in required + optional if _is_python_name(name)]
    parameters = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None if name in optional else inspect.Parameter.empty)
        for name in named
    ]
    if len(named) < len(properties):
        # A parameter whose name is not a Python name is passed as **{"the-name": value}.
        parameters.append(inspect.Parameter("more", inspect.Parameter.VAR_KEYWORD))
    signature = inspect.Signature(parameters)
    name = tool.name

    def call(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"tools.{name}: {err}; its signature is {name}{signature}") from None
        arguments = dict(bound.arguments)
        arguments.update(arguments.pop("more", {}))
        # An optional parameter left at None is left out: the schema may not accept null.
        arguments = {key: value for key, value in arguments.items() if value is not None or key in required}
        return call_tool(name, arguments)

    call.__name__ = call.__qualname__ = name.replace("-", "_")
    call.__signature__ = signature
    call.__doc__ = _docstring(tool.description, properties, required)
    return call


def _is_python_name(name):
    return name.isidentifier() and not keyword.iskeyword(name) and name != "more"


def _docstring(description, properties, required):
    lines = [description.strip(), ""]
    if properties:
        lines.append("Args:")
        for name, schema in properties.items():
            kind = _type_name(schema)
            optional = "" if name in required else ", optional"
            text = (schema.get("description") or "").strip().replace("\n", " ")
            lines.append(f"    {name} ({kind}{optional})" + (f": {text}" if text else ""))
    lines += ["", "Raises ToolCallError (with .kind and .message) when the call fails."]
    return "\n".join(lines)


def _type_name(schema):
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        return " | ".join(_JSON_TYPES.get(each, str(each)) for each in kind)
    if isinstance(kind, str):
        return _JSON_TYPES.get(kind, kind)
    if isinstance(schema, dict) and "enum" in schema:
        return "one of " + ", ".join(repr(value) for value in schema["enum"])
    return "any"


__all__ = ["ToolCallError", "Tools", "tools"]
