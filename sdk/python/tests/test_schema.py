"""Schemas derived from type hints, shaped as the Rust SDK's schemars output."""

import enum
import unittest
from dataclasses import dataclass, field
from typing import Annotated, Any, Dict, List, Literal, Optional, TypedDict, Union

try:
    from typing import NotRequired
except ImportError:  # Python < 3.11
    from typing_extensions import NotRequired

from support import parameters

from toolcell_tool import Context, Length, Pattern, Range, Schema, ToolDefinitionError, tool

DRAFT = "https://json-schema.org/draft/2020-12/schema"


class Colour(enum.Enum):
    """A colour."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point on the plane.

    Attributes:
        x: Across.
        y: Up.
    """

    x: float
    y: float = 0.0
    label: str | None = None
    tags: list[str] = field(default_factory=list)


@dataclass
class Node:
    value: int
    next: "Node | None" = None


class Movie(TypedDict):
    """A film."""

    title: str
    year: NotRequired[int]


def property_of(hint, **kwargs):
    """The schema of `x`, `required` and the document of a tool taking `x: hint` (with
    `default=` when given)."""

    def probe(x):
        """Probe."""

    probe.__annotations__ = {"x": hint}
    if "default" in kwargs:
        probe.__defaults__ = (kwargs["default"],)
    schema = parameters(tool(probe))
    return schema["properties"]["x"], schema["required"], schema


class ScalarsTest(unittest.TestCase):
    def test_the_document_is_shaped_like_schemars(self):
        _, required, schema = property_of(str)
        self.assertEqual(schema["$schema"], DRAFT)
        self.assertEqual(schema["type"], "object")
        self.assertIs(schema["additionalProperties"], False)
        self.assertEqual(required, ["x"])
        self.assertNotIn("title", schema)
        self.assertNotIn("$defs", schema)

    def test_scalars(self):
        for hint, kind in ((str, "string"), (int, "integer"), (float, "number"), (bool, "boolean")):
            self.assertEqual(property_of(hint)[0], {"type": kind})

    def test_lists_and_dicts(self):
        self.assertEqual(property_of(list[int])[0], {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(property_of(List[str])[0], {"type": "array", "items": {"type": "string"}})
        self.assertEqual(
            property_of(dict[str, float])[0], {"type": "object", "additionalProperties": {"type": "number"}}
        )
        self.assertEqual(property_of(Dict[str, list[bool]])[0]["additionalProperties"]["items"], {"type": "boolean"})

    def test_optional_is_nullable_and_not_required(self):
        for hint in (Optional[int], int | None, Union[int, None]):
            schema, required, _ = property_of(hint)
            self.assertEqual(schema, {"type": ["integer", "null"], "default": None})
            self.assertEqual(required, [])
        schema, _, _ = property_of(list[str] | None)
        self.assertEqual(schema["type"], ["array", "null"])

    def test_any_is_any_json_value(self):
        self.assertEqual(property_of(Any), ({}, ["x"], property_of(Any)[2]))
        schema, required, _ = property_of(Any, default=None)
        self.assertEqual((schema, required), ({"default": None}, []))
        schema, required, _ = property_of(Optional[Any])
        self.assertEqual((schema, required), ({"default": None}, []))
        self.assertEqual(property_of(list[Any])[0], {"type": "array", "items": {}})

    def test_defaults_are_not_required_and_shown(self):
        schema, required, _ = property_of(int, default=3)
        self.assertEqual((schema, required), ({"type": "integer", "default": 3}, []))
        schema, _, _ = property_of(int | None, default=5)
        self.assertEqual(schema["default"], 5)
        schema, _, _ = property_of(Colour, default=Colour.GREEN)
        self.assertEqual(schema["default"], "green")

    def test_literals_are_enums(self):
        self.assertEqual(property_of(Literal["a", "b"])[0], {"type": "string", "enum": ["a", "b"]})
        self.assertEqual(property_of(Literal[1, 2])[0], {"type": "integer", "enum": [1, 2]})
        self.assertEqual(property_of(Literal["a", 1])[0], {"enum": ["a", 1]})
        schema, required, _ = property_of(Literal["a", "b"] | None)
        self.assertEqual(schema, {"type": ["string", "null"], "enum": ["a", "b", None], "default": None})
        self.assertEqual(required, [])


class DefinitionsTest(unittest.TestCase):
    def test_an_enum_goes_to_defs(self):
        schema, _, document = property_of(Colour)
        self.assertEqual(schema, {"$ref": "#/$defs/Colour"})
        self.assertEqual(
            document["$defs"]["Colour"], {"type": "string", "enum": ["red", "green"], "description": "A colour."}
        )
        self.assertEqual(property_of(Level)[2]["$defs"]["Level"], {"type": "integer", "enum": [1, 2]})

    def test_an_optional_reference_is_any_of_null(self):
        schema, required, _ = property_of(Optional[Colour])
        self.assertEqual(schema, {"anyOf": [{"$ref": "#/$defs/Colour"}, {"type": "null"}], "default": None})
        self.assertEqual(required, [])

    def test_a_dataclass_is_an_object_in_defs(self):
        _, _, document = property_of(Point)
        self.assertEqual(
            document["$defs"]["Point"],
            {
                "type": "object",
                "description": "A point on the plane.",
                "properties": {
                    "x": {"type": "number", "description": "Across."},
                    "y": {"type": "number", "default": 0.0, "description": "Up."},
                    "label": {"type": ["string", "null"], "default": None},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                },
                "required": ["x"],
                "additionalProperties": False,
            },
        )

    def test_a_recursive_dataclass_refers_to_itself(self):
        _, _, document = property_of(Node)
        self.assertEqual(
            document["$defs"]["Node"]["properties"]["next"]["anyOf"][0], {"$ref": "#/$defs/Node"}
        )

    def test_a_typed_dict(self):
        _, _, document = property_of(Movie)
        movie = document["$defs"]["Movie"]
        self.assertEqual(movie["required"], ["title"])
        self.assertEqual(movie["properties"]["year"], {"type": "integer"})
        self.assertIs(movie["additionalProperties"], False)
        self.assertEqual(movie["description"], "A film.")


class ConstraintsTest(unittest.TestCase):
    def test_markers_become_keywords(self):
        self.assertEqual(
            property_of(Annotated[int, Range(min=1, max=10)])[0], {"type": "integer", "minimum": 1, "maximum": 10}
        )
        self.assertEqual(property_of(Annotated[float, Range(max=1.5)])[0], {"type": "number", "maximum": 1.5})
        self.assertEqual(
            property_of(Annotated[str, Length(min=1, max=9)])[0], {"type": "string", "minLength": 1, "maxLength": 9}
        )
        self.assertEqual(
            property_of(Annotated[list[int], Length(max=3)])[0]["maxItems"], 3
        )
        self.assertEqual(property_of(Annotated[dict[str, int], Length(min=1)])[0]["minProperties"], 1)
        self.assertEqual(property_of(Annotated[str, Pattern("^[a-z]+$")])[0]["pattern"], "^[a-z]+$")
        self.assertEqual(
            property_of(Annotated[str, Schema({"format": "date"})])[0], {"type": "string", "format": "date"}
        )

    def test_constraints_inside_optional_and_lists(self):
        schema, required, _ = property_of(Annotated[int, Range(min=1)] | None)
        self.assertEqual(schema, {"type": ["integer", "null"], "minimum": 1, "default": None})
        self.assertEqual(required, [])
        schema, _, _ = property_of(list[Annotated[str, Length(min=1)]])
        self.assertEqual(schema["items"], {"type": "string", "minLength": 1})

    def test_a_constraint_on_the_wrong_type_is_an_error(self):
        with self.assertRaisesRegex(ToolDefinitionError, "parameter `x`.*Range applies to int and float"):
            property_of(Annotated[str, Range(min=1)])
        with self.assertRaisesRegex(ToolDefinitionError, "Pattern applies to str"):
            property_of(Annotated[int, Pattern("x")])
        with self.assertRaisesRegex(ValueError, "Range needs"):
            Range()


class UnsupportedTest(unittest.TestCase):
    def assert_refused(self, hint, *fragments):
        with self.assertRaises(ToolDefinitionError) as refused:
            property_of(hint)
        message = str(refused.exception)
        self.assertIn("parameter `x`", message)
        for fragment in fragments:
            self.assertIn(fragment, message)

    def test_unsupported_hints_name_the_parameter_and_what_to_use(self):
        self.assert_refused(tuple[int, int], "is not supported")
        self.assert_refused(set, "is not supported")
        self.assert_refused(list, "list[str]")
        self.assert_refused(dict, "dict[str, T]")
        self.assert_refused(dict[int, str], "JSON object keys are strings")
        self.assert_refused(Union[int, str], "use one type")
        self.assert_refused(bytes, "is not supported")

    def test_a_parameter_without_a_hint(self):
        def untyped(x):
            """Doc."""

        with self.assertRaisesRegex(ToolDefinitionError, "parameter `x` has no type hint"):
            tool(untyped)

    def test_none_default_needs_an_optional_hint(self):
        with self.assertRaisesRegex(ToolDefinitionError, r"defaults to None, so annotate it `int \| None`"):
            property_of(int, default=None)

    def test_var_args(self):
        def variadic(*items: int):
            """Doc."""

        with self.assertRaisesRegex(ToolDefinitionError, r"\*args"):
            tool(variadic)


class ContextTest(unittest.TestCase):
    def test_context_is_not_in_the_schema(self):
        @tool
        def with_context(text: str, context: Context) -> str:
            """Doc."""
            return text

        schema = parameters(with_context)
        self.assertEqual(list(schema["properties"]), ["text"])
        self.assertEqual(schema["required"], ["text"])

        @tool
        def optional_context(text: str, context: Optional[Context] = None) -> str:
            """Doc."""
            return text

        self.assertEqual(list(parameters(optional_context)["properties"]), ["text"])

    def test_context_elsewhere_is_an_error(self):
        with self.assertRaisesRegex(ToolDefinitionError, "`Context` is only allowed as a parameter"):
            property_of(list[Context])


class OutputSchemaTest(unittest.TestCase):
    def test_a_dataclass_result_is_inlined_with_every_field_required(self):
        @tool(output_schema=True)
        def locate() -> Point:
            """Doc."""
            return Point(1.0)

        schema = __import__("json").loads(locate.metadata()["output_schema"])
        self.assertEqual(schema["$schema"], DRAFT)
        self.assertEqual(schema["type"], "object")
        self.assertEqual(schema["required"], ["x", "y", "label", "tags"])
        self.assertNotIn("$defs", schema)

    def test_no_output_schema_unless_asked(self):
        @tool
        def plain() -> int:
            """Doc."""
            return 1

        self.assertIsNone(plain.metadata()["output_schema"])

    def test_output_schema_needs_a_return_hint(self):
        def unhinted():
            """Doc."""

        with self.assertRaisesRegex(ToolDefinitionError, "needs a return type hint"):
            tool(output_schema=True)(unhinted)


if __name__ == "__main__":
    unittest.main()
