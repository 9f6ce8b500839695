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
        # A function is made at its first use: making one (its signature and docstring from
        # the schema) costs about a quarter of a millisecond, half a short nested call, and a
        # program calls few of the tools it may.
        self._by_name = {tool.name: tool for tool in callables}
        self._functions = {}
        self._by_attribute = {}
        for name in self._by_name:
            attribute = name.replace("-", "_")
            if attribute.isidentifier() and not keyword.iskeyword(attribute):
                self._by_attribute.setdefault(attribute, name)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in self._by_attribute:
            raise AttributeError(self._missing(name))
        return self._function(self._by_attribute[name])

    def __getitem__(self, name):
        if name not in self._by_name:
            raise KeyError(self._missing(name))
        return self._function(name)

    def _function(self, name):
        function = self._functions.get(name)
        if function is None:
            function = self._functions[name] = _function(self._by_name[name])
        return function

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
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [name for name in schema.get("required") or [] if name in properties]
    optional = [name for name in properties if name not in required]
    named = [name for name in required + optional if _is_python_name(name)]
    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None if name in optional else inspect.Parameter.empty,
            annotation=_Annotation(_parameter_type(properties[name], schema, name in optional)),
        )
        for name in named
    ]
    if len(named) < len(properties):
        # A parameter whose name is not a Python name is passed as **{"the-name": value}.
        parameters.append(inspect.Parameter("more", inspect.Parameter.VAR_KEYWORD))
    signature = inspect.Signature(parameters)
    name = tool.name
    plain = frozenset(named)
    required_named = [each for each in named if each in required]

    def call(*args, **kwargs):
        if not args and kwargs.keys() <= plain and all(each in kwargs for each in required_named):
            # Every argument by its own name, as a program writes them: what binding to the
            # signature gives, in its order, without `inspect`'s cost.
            arguments = {each: kwargs[each] for each in named if each in kwargs}
        else:
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
    call.__doc__ = _docstring(tool.description, properties, required, schema)
    return call


def _is_python_name(name):
    return name.isidentifier() and not keyword.iskeyword(name) and name != "more"


# The signatures and docstrings below are also written by the host, for code mode's `search`
# (`toolcell_runtime::formats::python`): the two must stay the same, and a test compares them.


class _Annotation:
    """A parameter's type as text: `inspect` shows an annotation as its repr."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _docstring(description, properties, required, root):
    sections = [description.strip()]
    if properties:
        lines = ["Args:"]
        for name, schema in properties.items():
            kind = _type_text(schema, root, 0)
            optional = "" if name in required else ", optional"
            text = schema.get("description") if isinstance(schema, dict) else None
            text = text.strip().replace("\n", " ") if isinstance(text, str) else ""
            lines.append(f"    {name} ({kind}{optional})" + (f": {text}" if text else ""))
        sections.append("\n".join(lines))
    sections.append("Raises ToolCallError (with .kind and .message) when the call fails.")
    return "\n\n".join(sections)


def _parameter_type(schema, root, optional):
    text = _type_text(schema, root, 0)
    if optional and text != "Any" and text != "None" and not text.endswith(" | None"):
        return text + " | None"
    return text


# How deep `$ref`s, unions and items are followed before a type is just Any.
_MAX_TYPE_DEPTH = 8
# An enum with more values than this is written as its type, not as a Literal.
_MAX_LITERAL_VALUES = 16


def _type_text(schema, root, depth):
    if not isinstance(schema, dict) or depth > _MAX_TYPE_DEPTH:
        return "Any"
    if isinstance(schema.get("$ref"), str):
        return _type_text(_resolve(root, schema["$ref"]), root, depth + 1)
    if "const" in schema:
        return _constants([schema["const"]])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _constants(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            choices = schema[key]
            # A choice of constants ({"const": "m"}, ...) is one choice of all of them.
            if all(isinstance(each, dict) and "const" in each for each in choices):
                return _constants([each["const"] for each in choices])
            return _union([_type_text(each, root, depth + 1) for each in choices])
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        return _union([_json_type(each, schema, root, depth) for each in kind])
    if isinstance(kind, str):
        return _json_type(kind, schema, root, depth)
    return "Any"


def _json_type(kind, schema, root, depth):
    if kind == "array":
        inner = _type_text(schema.get("items"), root, depth + 1) if isinstance(schema.get("items"), dict) else "Any"
        return "list" if inner == "Any" else f"list[{inner}]"
    return _JSON_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


def _constants(values):
    """A Literal of the values, or, when that cannot be written, the union of their types."""
    return _literal(values) or _union([_value_type(value) for value in values])


def _value_type(value):
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return {str: "str", float: "float", list: "list", dict: "dict"}.get(type(value), "Any")


def _union(parts):
    if "Any" in parts:
        return "Any"
    return " | ".join(dict.fromkeys(parts))


def _literal(values):
    """`Literal[...]` of plain values (ASCII strings, integers, booleans, None), else None."""
    if not values or len(values) > _MAX_LITERAL_VALUES:
        return None
    for value in values:
        if isinstance(value, str):
            if not value.isascii():
                return None
        elif value is not None and not isinstance(value, int):
            return None
    return "Literal[" + ", ".join(repr(value) for value in values) + "]"


def _resolve(root, reference):
    """The schema a local `$ref` (`#/$defs/Name`, any JSON pointer in the document) points to."""
    if not reference.startswith("#"):
        return None
    target = root
    for token in reference[1:].split("/")[1:] if reference != "#" else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return None
    return target


__all__ = ["ToolCallError", "Tools", "tools"]
