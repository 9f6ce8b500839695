"""JSON Schemas (draft 2020-12) from type hints, shaped as the Rust SDK's schemars output:
`$schema` at the top, nested types in `$defs` behind `$ref`, objects with `required` and
`additionalProperties: false`, optional values typed `[T, "null"]`.
"""

import dataclasses
import json

from . import docstrings
from .constraints import Constraint
from .convert import to_json
from .hints import UnsupportedHint, classify, strip_typed_dict_wrapper, type_hints

DRAFT = "https://json-schema.org/draft/2020-12/schema"
_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "null": "null"}
MISSING = dataclasses.MISSING  # "no default"


class SchemaBuilder:
    """Builds schemas that share one `$defs`. `output=True` describes values the tool
    returns: then every field of an object is present (None as null), so all are required."""

    def __init__(self, output=False):
        self.output = output
        self.defs = {}
        self._owners = {}  # def name -> the class it describes, to catch two classes of one name

    def schema(self, hint):
        kind, detail = classify(hint)
        if kind in _TYPES:
            return {"type": _TYPES[kind]}
        if kind == "any":
            return {}  # any JSON value, null included
        if kind == "optional":
            inner = self.schema(detail)
            return inner if inner == {} else nullable(inner)
        if kind == "list":
            return {"type": "array", "items": self.schema(detail)}
        if kind == "dict":
            return {"type": "object", "additionalProperties": self.schema(detail)}
        if kind == "literal":
            return _literal(detail)
        if kind == "annotated":
            return self._annotated(*detail)
        if kind == "context":
            raise UnsupportedHint("`Context` is only allowed as a parameter of the tool function itself")
        return self._reference(kind, detail)

    def _annotated(self, base, markers):
        schema = self.schema(base)
        for marker in markers:
            if not isinstance(marker, Constraint):
                continue  # other Annotated metadata is for other tools
            try:
                schema.update(marker.keywords(_json_kind(schema, self.defs)))
            except ValueError as err:
                raise UnsupportedHint(f"{marker!r} cannot constrain `{base!r}`: {err}") from None
        return schema

    def _reference(self, kind, cls):
        name = cls.__name__
        owner = self._owners.get(name)
        if owner is not None and owner is not cls:
            raise UnsupportedHint(f"two different types are named `{name}`: rename one of them")
        if owner is None:
            self._owners[name] = cls
            self.defs[name] = {}  # reserved first, so a recursive type refers to itself
            build = {"enum": _enum_schema, "dataclass": self._dataclass, "typeddict": self._typed_dict}[kind]
            self.defs[name] = build(cls)
        return {"$ref": f"#/$defs/{name}"}

    def _dataclass(self, cls):
        hints = type_hints(cls)
        description, field_docs = docstrings.parse(class_doc(cls))
        properties, required = {}, []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            where = f"field `{field.name}` of `{cls.__name__}`"
            default = field.default
            if default is MISSING and field.default_factory is not MISSING:
                default = field.default_factory()
            schema = self.property(hints[field.name], where, default)
            doc = field.metadata.get("description") or field_docs.get(field.name)
            if doc:
                schema["description"] = doc
            properties[field.name] = schema
            if self.output or (default is MISSING and not is_optional(hints[field.name])):
                required.append(field.name)
        return _object(description, properties, required)

    def _typed_dict(self, cls):
        hints = type_hints(cls)
        description, field_docs = docstrings.parse(class_doc(cls))
        properties = {}
        for name, hint in hints.items():
            schema = self.property(strip_typed_dict_wrapper(hint), f"key `{name}` of `{cls.__name__}`", MISSING)
            schema.pop("default", None)  # a TypedDict key has no default: absent means absent
            if field_docs.get(name):
                schema["description"] = field_docs[name]
            properties[name] = schema
        required = [name for name in hints if name in cls.__required_keys__]
        return _object(description, properties, required)

    def property(self, hint, where, default):
        """The schema of one parameter or field, with its default; `where` names it in errors."""
        try:
            schema = self.schema(hint)
        except UnsupportedHint as err:
            raise UnsupportedHint(f"{where}: {err}") from None
        if default is None and not _accepts_null(schema, self.defs):
            raise UnsupportedHint(f"{where} defaults to None, so annotate it `{_hint_name(hint)} | None`")
        if default is not MISSING:
            try:
                schema["default"] = to_json(default)
            except TypeError as err:
                raise UnsupportedHint(f"{where}: its default has no JSON form ({err})") from None
        elif is_optional(hint) and not self.output:
            schema["default"] = None  # omitted means None, as schemars says for Option<T>
        return schema


def nullable(schema):
    """`schema` or null: `type: [T, "null"]` where the type is plain, else `anyOf`."""
    kind = schema.get("type")
    if isinstance(kind, str) and not any(key in schema for key in ("$ref", "anyOf", "oneOf", "allOf")):
        schema = dict(schema, type=[kind, "null"])
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = schema["enum"] + [None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def is_optional(hint):
    kind, detail = classify(hint)
    if kind == "annotated":
        return is_optional(detail[0])
    return kind == "optional" or (kind == "literal" and None in detail)


def class_doc(cls):
    """A class's own docstring; dataclasses invent one ("Name(a: int)") that says nothing."""
    doc = cls.__dict__.get("__doc__") or ""
    return "" if doc.startswith(cls.__name__ + "(") else doc


def _literal(values):
    kinds = {_TYPES[type(value).__name__] for value in values if value is not None}
    schema = {"enum": list(values)}
    if len(kinds) == 1:
        (kind,) = kinds
        schema["type"] = [kind, "null"] if None in values else kind
    return schema


def _enum_schema(cls):
    values = [member.value for member in cls]
    all_str = all(isinstance(value, str) for value in values)
    all_int = all(isinstance(value, int) and not isinstance(value, bool) for value in values)
    if not values or not (all_str or all_int):
        raise UnsupportedHint(f"the Enum `{cls.__name__}` needs values that are all str or all int")
    schema = {"type": "string" if isinstance(values[0], str) else "integer", "enum": values}
    description, _ = docstrings.parse(class_doc(cls))
    if description:
        schema["description"] = description
    return schema


def _object(description, properties, required):
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    if description:
        schema["description"] = description
    return schema


def _resolve(schema, defs):
    ref = schema.get("$ref", "")
    return defs.get(ref.rpartition("/")[2], schema) if ref.startswith("#/$defs/") else schema


def _json_kind(schema, defs):
    kind = _resolve(schema, defs).get("type")
    if isinstance(kind, list):
        kind = next((each for each in kind if each != "null"), None)
    return kind


def _accepts_null(schema, defs):
    resolved = _resolve(schema, defs)
    if not any(key in resolved for key in ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not")):
        return True  # no constraint on the kind of value: `Any`
    kind = resolved.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(branch.get("type") == "null" for branch in schema.get("anyOf", []))


def _hint_name(hint):
    return hint.__name__ if isinstance(hint, type) else repr(hint).replace("typing.", "")


def finish(root, defs):
    """The document: `$schema` first, `$defs` when any."""
    document = {"$schema": DRAFT}
    document.update(root)
    if defs:
        document["$defs"] = defs
    return document


def output_document(hint):
    """The output schema of a return hint; an object type is inlined at the root (MCP wants
    `type: object` there) unless it refers to itself."""
    builder = SchemaBuilder(output=True)
    root = builder.schema(hint)
    name = root.get("$ref", "").rpartition("/")[2]
    if name and f'"#/$defs/{name}"' not in json.dumps(builder.defs):
        root = builder.defs.pop(name)
    return finish(root, builder.defs)
