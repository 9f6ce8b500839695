"""`@tool`: a plain, documented, type-hinted function becomes a toolcell tool, its metadata
derived as the Rust SDK's `#[tool]` derives it."""

import functools
import inspect
import json
import re
import sys
import traceback

from . import docstrings, project, validate, violations
from .context import Context
from .convert import from_json, to_json
from .errors import Failed, InvalidArguments, ToolDefinitionError
from .hints import UnsupportedHint, type_hints
from .schema import MISSING, SchemaBuilder, finish, is_optional, output_document

MAX_DESCRIPTION_CHARS = 1024
MAX_TITLE_CHARS = 128
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_DEFAULT_VERSION = "0.0.0"


def tool(func=None, **options):
    """Makes `func` a tool; use as `@tool` or `@tool(name=..., title=..., read_only=True, ...)`.

    Options mirror the Rust macro: `name`, `title`, the hints `read_only`, `destructive`,
    `idempotent`, `open_world` (None: unsaid), the capability requests `http`, `dirs`,
    `writable_dirs`, `env`, and `output_schema` (True: derived from the return hint; a dict:
    that schema). The result is a `Tool`, still callable as the function.
    """
    if func is None:
        return lambda func: Tool(func, **options)
    return Tool(func, **options)


class Tool:
    """A tool: its metadata, derived once at decoration, and how to run a call."""

    def __init__(
        self, func, *, name=None, title=None, read_only=None, destructive=None, idempotent=None,
        open_world=None, http=(), dirs=(), writable_dirs=(), env=(), output_schema=False,
    ):
        if not callable(func) or isinstance(func, type):
            raise ToolDefinitionError("@tool decorates a function")
        functools.update_wrapper(self, func)
        self.func = func
        label = f"the tool function `{func.__name__}`"
        if inspect.iscoroutinefunction(func) or inspect.isgeneratorfunction(func):
            raise ToolDefinitionError(f"{label} must be a plain function: each call runs to completion, not async or a generator")
        self.name = name if name is not None else func.__name__
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ToolDefinitionError(f"tool name `{self.name}` is invalid: use 1-64 characters from a-z, A-Z, 0-9, `_` and `-`")
        self.description, arg_docs = docstrings.parse(func.__doc__)
        if not self.description:
            raise ToolDefinitionError(
                f"{label} needs a docstring: it becomes the description the model reads to decide when to call the tool"
            )
        if len(self.description) > MAX_DESCRIPTION_CHARS:
            raise ToolDefinitionError(
                f"the description of {label} (its docstring before `Args:`) is {len(self.description)} characters; "
                f"model providers accept at most {MAX_DESCRIPTION_CHARS}: shorten it"
            )
        self.version = None  # set by the build from pyproject.toml; natively found on demand
        self.annotations = _annotations(title, read_only, destructive, idempotent, open_world)
        self.capabilities = _capabilities(http, dirs, writable_dirs, env)
        try:
            self._derive_parameters(func, arg_docs)
            self.output_schema = _output_schema(func, output_schema)
        except UnsupportedHint as err:
            raise ToolDefinitionError(f"{label}: {err}") from None

    def _derive_parameters(self, func, arg_docs):
        try:
            hints = type_hints(func)
        except Exception as err:  # a hint naming something undefined
            raise UnsupportedHint(f"its type hints cannot be resolved ({err})") from None
        builder = SchemaBuilder()
        properties, required = {}, []
        self.parameters, self.context_parameter = {}, None
        self._none_when_absent = []  # `x: T | None` without a default: omitted means None
        for parameter in inspect.signature(func).parameters.values():
            where = f"parameter `{parameter.name}`"
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
                raise UnsupportedHint(f"{where}: *args, **kwargs and positional-only parameters cannot be arguments; name each one")
            if parameter.name not in hints:
                raise UnsupportedHint(f"{where} has no type hint: annotate it, e.g. `{parameter.name}: str`")
            hint = hints[parameter.name]
            if hint is Context or hint == (Context | None):
                if self.context_parameter is not None:
                    raise UnsupportedHint("a tool takes at most one `Context` parameter")
                self.context_parameter = parameter.name
                continue
            default = parameter.default if parameter.default is not parameter.empty else MISSING
            schema = builder.property(hint, where, default)
            if arg_docs.get(parameter.name):
                schema["description"] = arg_docs[parameter.name]
            properties[parameter.name] = schema
            self.parameters[parameter.name] = hint
            if default is MISSING and not is_optional(hint):
                required.append(parameter.name)
            elif default is MISSING:
                self._none_when_absent.append(parameter.name)
        unknown = sorted(set(arg_docs) - set(self.parameters) - {self.context_parameter})
        if unknown:
            raise UnsupportedHint(f"`Args:` documents {', '.join(unknown)}, which the function does not take")
        root = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
        self.parameters_schema = finish(root, builder.defs)

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __repr__(self):
        return f"<toolcell tool {self.name!r}>"

    def metadata(self):
        """The WIT `tool-metadata`, schemas as JSON text (keys sorted, as the Rust SDK's)."""
        output = None if self.output_schema is None else _dumps(self.output_schema)
        return {
            "name": self.name,
            "description": self.description,
            "version": self.resolved_version(),
            "parameters_schema": _dumps(self.parameters_schema),
            "output_schema": output,
        }

    def resolved_version(self):
        if self.version is None:
            source = inspect.getsourcefile(self.func) or ""
            self.version = (source and project.find_version(source)) or _DEFAULT_VERSION
        return self.version

    def call(self, arguments, context=None):
        """Runs the function on parsed, schema-valid `arguments`; returns the result as JSON
        text. InvalidArguments and Failed propagate, as does anything the function raises."""
        kwargs = {name: from_json(arguments[name], hint) for name, hint in self.parameters.items() if name in arguments}
        for name in self._none_when_absent:
            kwargs.setdefault(name, None)
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = context if context is not None else Context()
        result = self.func(**kwargs)
        try:
            return json.dumps(to_json(result), ensure_ascii=False, separators=(",", ":"))
        except TypeError as err:
            raise TypeError(f"the tool `{self.name}` returned a value with no JSON form: {err}") from None

    def run(self, arguments_json, context):
        """One call in a component: ("ok", text) | ("invalid", message) | ("failed", message,
        retryable). The host has validated the arguments. An unexpected exception is a bug
        whose text may hold secrets: its traceback goes to stderr (the operator's log), the
        model gets a generic message. MemoryError propagates so the call traps as out of memory."""
        try:
            return ("ok", self.call(json.loads(arguments_json), context))
        except InvalidArguments as err:
            return ("invalid", err.message)
        except Failed as err:
            return ("failed", err.message, err.retryable)
        except MemoryError:
            raise
        except Exception as err:
            _log_exception(self.name, err)
            message = (
                f"the tool failed with an unexpected error ({type(err).__name__}); "
                "its details went to the operator's log"
            )
            return ("failed", message, False)



def invoke_json(func_or_tool, arguments_json, context=None):
    """Calls a tool natively as the host would: the arguments are parsed and checked against
    the tool's schema first (refused with InvalidArguments in the host's words), then the
    function runs, and its result is returned as JSON text (checked against a declared
    output schema). InvalidArguments and Failed from the tool propagate; so does any other
    exception (in a component it becomes a generic `failed`; here its traceback helps)."""
    tool_ = func_or_tool if isinstance(func_or_tool, Tool) else None
    if tool_ is None:
        raise TypeError(f"{func_or_tool!r} is not a tool: decorate the function with @tool")
    try:
        arguments = json.loads(arguments_json)
    except ValueError as err:
        where = f" (line {err.lineno}, column {err.colno})" if hasattr(err, "lineno") else ""
        message = getattr(err, "msg", str(err))
        raise InvalidArguments(
            f"The arguments are not valid JSON{where}: {message}. "
            'Send the arguments as a single JSON object, e.g. {"name": "value"}.'
        ) from None
    found = violations.explain(tool_.parameters_schema, validate.errors(tool_.parameters_schema, arguments))
    if found:
        raise InvalidArguments(violations.arguments_report(found))
    output = tool_.call(arguments, context)
    if tool_.output_schema is not None:
        wrong = violations.explain(tool_.output_schema, validate.errors(tool_.output_schema, json.loads(output)))
        if wrong:
            raise Failed(
                f"the tool returned an invalid result: {violations.output_report(wrong)}; "
                "a host would report it as `invalid_output`"
            )
    return output


def find_tool(module):
    """The one Tool defined in `module` (tools it imports from elsewhere do not count)."""
    tools = [
        value for value in vars(module).values()
        if isinstance(value, Tool) and getattr(value.func, "__module__", None) == module.__name__
    ]
    if len(tools) != 1:
        found = ", ".join(sorted(each.name for each in tools)) or "none"
        raise ToolDefinitionError(
            f"the module `{module.__name__}` must define exactly one @tool function; found {len(tools)} ({found}): "
            "a project builds one component, which is one tool"
        )
    return tools[0]


def _dumps(schema):
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _annotations(title, read_only, destructive, idempotent, open_world):
    if title is not None:
        if not isinstance(title, str) or not title.strip():
            raise ToolDefinitionError('the tool\'s title is empty: give it a short name for people, such as "Calculator", or remove `title`')
        title = title.strip()
        if len(title) > MAX_TITLE_CHARS:
            raise ToolDefinitionError(
                f"the tool's title is {len(title)} characters; at most {MAX_TITLE_CHARS} are allowed: "
                "shorten it (the docstring is the place for detail)"
            )
        control = next((char for char in title if ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0), None)
        if control is not None:
            raise ToolDefinitionError(
                f"the tool's title contains the control character U+{ord(control):04X}: a title is one line of plain text; remove it"
            )
    hints = {"read_only": read_only, "destructive": destructive, "idempotent": idempotent, "open_world": open_world}
    for hint, value in hints.items():
        if value is not None and not isinstance(value, bool):
            raise ToolDefinitionError(f"`{hint}` takes True, False or None (unsaid), not {value!r}")
    if read_only is True and destructive is True:
        raise ToolDefinitionError(
            "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing; keep the one that is true"
        )
    return dict(title=title, **hints)


def _capabilities(http, dirs, writable_dirs, env):
    def strings(values, what):
        values = [values] if isinstance(values, str) else list(values)
        for value in values:
            if not isinstance(value, str) or not value.strip():
                raise ToolDefinitionError(f"expected {what}, not {value!r}")
        return values

    def paths(values):
        values = strings(values, 'an absolute guest path such as "/workspace"')
        for value in values:
            if not value.startswith("/"):
                raise ToolDefinitionError(f'a guest path must be absolute, such as "/workspace", not {value!r}')
        return values

    directories = [(path, False) for path in paths(dirs)] + [(path, True) for path in paths(writable_dirs)]
    return {
        "http_hosts": strings(http, 'a host pattern such as "api.example.com"'),
        "directories": directories,
        "env": strings(env, 'an environment variable name such as "API_KEY"'),
    }


def _output_schema(func, option):
    if option is False or option is None:
        return None
    if isinstance(option, dict):
        return option if "$schema" in option else finish(option, {})
    if option is not True:
        raise UnsupportedHint("output_schema takes True (derive it from the return hint) or a JSON Schema dict")
    hints = type_hints(func)
    if "return" not in hints:
        raise UnsupportedHint("output_schema=True needs a return type hint, e.g. `-> Stats`")
    try:
        return output_document(hints["return"])
    except UnsupportedHint as err:
        raise UnsupportedHint(f"the return type: {err}") from None


def _log_exception(name, err):
    # Formatting can fail in a sandbox (no source files to quote); the type and text then do.
    try:
        details = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    except Exception:
        details = f"{type(err).__name__}: {err}\n"
    try:
        sys.stderr.write(f"toolcell: the tool `{name}` raised an unexpected error:\n{details}")
        sys.stderr.flush()
    except Exception:
        pass
