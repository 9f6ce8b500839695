"""Between JSON values and the Python values a tool's hints name: arguments in, results out."""

import dataclasses
import enum
import math

from .hints import classify, strip_typed_dict_wrapper, type_hints

RESULT_TYPES = "str, int, float, bool, None, list, tuple, dict with str keys, a dataclass or an Enum"


def from_json(value, hint):
    """`value` (already valid against the hint's schema) as the hint's Python type:
    Enums and dataclasses constructed, ints made floats where a float is wanted."""
    kind, detail = classify(hint)
    if value is None:
        return None
    if kind == "annotated":
        return from_json(value, detail[0])
    if kind == "optional":
        return from_json(value, detail)
    if kind == "int" and isinstance(value, float):
        return int(value)  # JSON's 3.0 is an integer for the schema
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "list":
        return [from_json(item, detail) for item in value]
    if kind == "dict":
        return {key: from_json(item, detail) for key, item in value.items()}
    if kind == "enum":
        return detail(value)
    if kind == "dataclass":
        hints = type_hints(detail)
        fields = {field.name: field for field in dataclasses.fields(detail) if field.init}
        given = {name: from_json(item, hints[name]) for name, item in value.items() if name in fields}
        for name, field in fields.items():
            has_default = field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            if name not in given and not has_default:
                given[name] = None  # an optional field without a default
        return detail(**given)
    if kind == "typeddict":
        hints = type_hints(detail)
        return {name: from_json(item, strip_typed_dict_wrapper(hints[name])) for name, item in value.items()}
    return value


def to_json(value):
    """A result (or default) as a JSON-ready value; TypeError names what has no JSON form."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"the float {value!r} has no JSON form")
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, enum.Enum):
                key = key.value
            if not isinstance(key, str):
                raise TypeError(f"a dict key {key!r} is not a str, and JSON object keys are strings")
            out[key] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    raise TypeError(f"a {type(value).__name__} has no JSON form: return {RESULT_TYPES}")
