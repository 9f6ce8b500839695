"""Which of the supported kinds a type hint is; the schema and the conversions both
dispatch on it, so they always agree on what a hint means."""

import dataclasses
import enum
import types
import typing

from .context import Context

_UNIONS = (typing.Union, getattr(types, "UnionType", typing.Union))
_TYPED_DICT_WRAPPERS = tuple(
    wrapper for wrapper in (getattr(typing, "Required", None), getattr(typing, "NotRequired", None)) if wrapper
)

SUPPORTED = (
    "str, int, float, bool, list[T], dict[str, T], T | None, Literal[...], an Enum, "
    "a dataclass, a TypedDict (optionally in Annotated[T, ...]) or Any (any JSON value)"
)


class UnsupportedHint(ValueError):
    """A hint the SDK cannot turn into a schema; the message says what to use instead."""


def classify(hint):
    """Returns (kind, detail):

    ("str"|"int"|"float"|"bool"|"null", None), ("optional", inner), ("list", item),
    ("dict", value), ("literal", values), ("enum", cls), ("dataclass", cls),
    ("typeddict", cls), ("annotated", (base, markers)), ("context", None), ("any", None).
    """
    if hint in (str, int, float, bool):
        return hint.__name__, None
    if hint is typing.Any:
        return "any", None
    if hint is None or hint is type(None):
        return "null", None
    if hint is Context:
        return "context", None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return "annotated", (args[0], args[1:])
    if origin in _UNIONS:
        members = [arg for arg in args if arg is not type(None)]
        if len(members) == 1 and len(args) == 2:
            return "optional", members[0]
        raise UnsupportedHint(
            f"the union `{_name(hint)}` is not supported: use one type, `T | None` for an optional "
            "value, or a Literal / Enum for a choice of values"
        )
    if origin is typing.Literal:
        if not args or not all(arg is None or isinstance(arg, (str, int, bool)) for arg in args):
            raise UnsupportedHint(f"`{_name(hint)}`: Literal values must be str, int, bool or None")
        return "literal", list(args)
    if origin is list:
        if len(args) != 1:
            raise UnsupportedHint("a bare `list` has no item type: write `list[str]`, `list[int]`, ...")
        return "list", args[0]
    if origin is dict:
        if len(args) != 2 or args[0] is not str:
            raise UnsupportedHint("a dict must be `dict[str, T]`: JSON object keys are strings")
        return "dict", args[1]
    if hint is list or hint is typing.List:
        raise UnsupportedHint("a bare `list` has no item type: write `list[str]`, `list[int]`, ...")
    if hint is dict or hint is typing.Dict:
        raise UnsupportedHint("a bare `dict` has no value type: write `dict[str, T]`, or a dataclass")
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return "enum", hint
        if dataclasses.is_dataclass(hint):
            return "dataclass", hint
        if typing.is_typeddict(hint):
            return "typeddict", hint
    if isinstance(hint, str) or type(hint).__name__ == "ForwardRef":
        raise UnsupportedHint(f"the hint {hint!r} could not be resolved: define the type at module level")
    raise UnsupportedHint(f"`{_name(hint)}` is not supported: use {SUPPORTED}")


def strip_typed_dict_wrapper(hint):
    """`NotRequired[T]` / `Required[T]` (kept by get_type_hints(include_extras=True)) -> T."""
    if _TYPED_DICT_WRAPPERS and typing.get_origin(hint) in _TYPED_DICT_WRAPPERS:
        return typing.get_args(hint)[0]
    return hint


_HINTS = {}


def type_hints(obj):
    """The resolved hints of a function or class, Annotated kept. Cached: resolving them
    may evaluate strings, which a component should do once, at build time."""
    hints = _HINTS.get(obj)
    if hints is None:
        hints = _HINTS[obj] = typing.get_type_hints(obj, include_extras=True)
    return hints


def _name(hint):
    if isinstance(hint, type):
        return hint.__qualname__
    return repr(hint).replace("typing.", "")
