"""Arguments become the hinted Python types; results become JSON."""

import enum
import json
import unittest
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import support  # noqa: F401

from toolcell_tool import Context, invoke_json, tool
from toolcell_tool.convert import from_json, to_json


class Unit(enum.Enum):
    WORDS = "words"
    LINES = "lines"


@dataclass
class Window:
    start: int
    end: int | None = None
    units: list[Unit] = field(default_factory=list)


class Span(TypedDict):
    at: float


@tool
def inspect_types(
    ratio: float,
    count: int,
    unit: Unit,
    window: Window,
    windows: list[Window],
    by_name: dict[str, Unit],
    span: Span,
    mode: Literal["a", "b"],
    maybe: int | None,
    context: Context,
    flag: bool = False,
) -> dict:
    """Reports the Python types it received."""
    return {
        "ratio": type(ratio).__name__,
        "count": type(count).__name__,
        "unit": unit,
        "window": window,
        "windows": [type(each).__name__ for each in windows],
        "by_name": by_name,
        "span": span,
        "mode": mode,
        "maybe": maybe,
        "call_id": context.call_id,
        "host_context": context.host_context,
        "flag": flag,
    }


class ArgumentsTest(unittest.TestCase):
    def test_arguments_become_the_hinted_types(self):
        arguments = {
            "ratio": 2,
            "count": 3.0,
            "unit": "lines",
            "window": {"start": 1, "units": ["words"]},
            "windows": [{"start": 2, "end": 3}],
            "by_name": {"x": "words"},
            "span": {"at": 1},
            "mode": "b",
        }
        context = Context(call_id="call-7", host_context={"user": "u1"})
        result = json.loads(invoke_json(inspect_types, json.dumps(arguments), context))
        self.assertEqual(
            result,
            {
                "ratio": "float",
                "count": "int",
                "unit": "lines",
                "window": {"start": 1, "end": None, "units": ["words"]},
                "windows": ["Window"],
                "by_name": {"x": "words"},
                "span": {"at": 1.0},
                "mode": "b",
                "maybe": None,
                "call_id": "call-7",
                "host_context": {"user": "u1"},
                "flag": False,
            },
        )

    def test_values_are_constructed(self):
        window = from_json({"start": 1, "units": ["lines"]}, Window)
        self.assertEqual(window, Window(start=1, end=None, units=[Unit.LINES]))
        self.assertIs(from_json("words", Unit | None), Unit.WORDS)
        self.assertIsNone(from_json(None, Window | None))

    def test_a_context_defaults_to_empty(self):
        self.assertEqual(Context.from_wit("id", "not json"), Context(call_id="id", host_context={}))
        self.assertEqual(Context.from_wit("id", '{"a": 1}').host_context, {"a": 1})


class ResultsTest(unittest.TestCase):
    def test_results_become_json(self):
        self.assertEqual(to_json(Window(1, 2, [Unit.WORDS])), {"start": 1, "end": 2, "units": ["words"]})
        self.assertEqual(to_json((1, "a", None, True, 1.5)), [1, "a", None, True, 1.5])
        self.assertEqual(to_json({Unit.WORDS: [Unit.LINES]}), {"words": ["lines"]})

    def test_values_without_json_form_are_named(self):
        for value, fragment in ((object(), "a object has no JSON form"), ({1: 2}, "not a str"), (float("nan"), "nan")):
            with self.assertRaisesRegex(TypeError, fragment):
                to_json(value)

    def test_a_tool_result_is_compact_json(self):
        @tool
        def unicode_result() -> dict:
            """Doc."""
            return {"text": "été", "n": [1, 2]}

        self.assertEqual(invoke_json(unicode_result, "{}"), '{"text":"été","n":[1,2]}')


if __name__ == "__main__":
    unittest.main()
