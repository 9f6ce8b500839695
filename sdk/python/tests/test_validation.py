"""invoke_json refuses arguments as the host does, in the host's words (toolcell-schema)."""

import enum
import unittest
from dataclasses import dataclass
from typing import Annotated, Literal

from support import problems, refusal

from toolcell_tool import Failed, InvalidArguments, Length, Pattern, Range, invoke_json, tool


class Order(enum.Enum):
    ASCENDING = "ascending"
    DESCENDING = "descending"


@dataclass
class Options:
    top_words: Annotated[int, Range(min=1, max=50)]
    language: str
    order: Order = Order.ASCENDING
    inner: "Options | None" = None


@tool
def echo(
    text: Annotated[str, Length(min=1, max=20)],
    count: Annotated[int, Range(min=1, max=10)] = 1,
    volume: Literal["quiet", "loud"] = "quiet",
    code: Annotated[str, Pattern("^[A-Z]{3}$")] | None = None,
    tags: list[str] | None = None,
    options: Options | None = None,
    ratio: float = 0.5,
) -> dict:
    """Echo the text.

    Args:
        text: The text to echo. It comes back.
        count: How often.
    """
    return {"text": text * count}


class MessagesTest(unittest.TestCase):
    def test_valid_arguments_run_the_tool(self):
        self.assertEqual(invoke_json(echo, '{"text": "ab", "count": 2}'), '{"text":"abab"}')

    def test_the_report_is_the_hosts(self):
        self.assertEqual(
            refusal(echo, '{"text": "hi", "count": 0}'),
            "The arguments do not match the tool's parameters schema (1 problem):\n"
            "- /count: must be at least 1; got 0\n"
            "Fix these and call the tool again.",
        )

    def test_limits(self):
        self.assertEqual(problems(echo, '{"text": "hi", "count": 11}'), ["- /count: must be at most 10; got 11"])
        self.assertEqual(problems(echo, '{"text": ""}'), ["- /text: must not be empty"])
        self.assertEqual(
            problems(echo, '{"text": "' + "x" * 21 + '"}'),
            ["- /text: must be at most 20 characters long; got 21 characters"],
        )
        self.assertEqual(
            problems(echo, '{"text": "hi", "code": "abc"}'),
            ['- /code: must match the pattern `^[A-Z]{3}$`; got "abc"'],
        )

    def test_types(self):
        self.assertEqual(
            problems(echo, '{"text": 42}'),
            ["- /text: expected a non-empty string of at most 20 characters, got the number 42"],
        )
        self.assertEqual(
            problems(echo, '{"text": "a", "count": "3"}'),
            ['- /count: expected an integer from 1 to 10, got the string "3"'],
        )
        self.assertEqual(
            problems(echo, '{"text": "a", "count": 1.5}'), ["- /count: expected an integer from 1 to 10, got the number 1.5"]
        )
        self.assertEqual(problems(echo, '{"text": "a", "ratio": true}'), ["- /ratio: expected a number, got true"])
        self.assertEqual(
            problems(echo, '{"text": "a", "tags": [1]}'), ["- /tags/0: expected a string, got the number 1"]
        )
        self.assertEqual(
            problems(echo, '{"text": "a", "tags": "x"}'), ['- /tags: expected an array of strings or null, got the string "x"']
        )
        self.assertEqual(problems(echo, "[]"), ["- (top level): expected an object, got an empty array"])

    def test_required_and_unknown(self):
        self.assertEqual(
            problems(echo, '{"txt": "hi"}'),
            [
                "- (top level): `text` is missing: it is required "
                "(a non-empty string of at most 20 characters: The text to echo.)",
                "- /txt: `txt` is not a parameter; did you mean `text`? "
                "Parameters: code, count, options, ratio, tags, text, volume",
            ],
        )

    def test_enums(self):
        self.assertEqual(
            problems(echo, '{"text": "a", "volume": "LOUDER"}'),
            ["- /volume: `LOUDER` is not one of the allowed values; did you mean `loud`? Allowed: quiet, loud"],
        )
        self.assertEqual(
            problems(echo, '{"text": "a", "volume": 3}'),
            ["- /volume: the number 3 is not one of the allowed values. Allowed: quiet, loud"],
        )

    def test_nested_objects_are_explained_inside(self):
        arguments = (
            '{"text": "q", "options": {"top_words": 0, "order": "asc", "languag": "en",'
            ' "inner": {"language": "en", "top_words": "3"}}}'
        )
        self.assertEqual(
            problems(echo, arguments),
            [
                "- /options: `language` is missing: it is required (a string)",
                '- /options/inner/top_words: expected an integer from 1 to 50, got the string "3"',
                "- /options/languag: `languag` is not a field of this object; did you mean `language`? "
                "Fields: inner, language, order, top_words",
                "- /options/order: `asc` is not one of the allowed values; did you mean `ascending`? "
                "Allowed: ascending, descending",
                "- /options/top_words: must be at least 1; got 0",
            ],
        )
        self.assertEqual(
            problems(echo, '{"text": "q", "options": "fast"}'),
            ['- /options: expected an object or null, got the string "fast"'],
        )

    def test_many_problems_are_counted_and_sorted(self):
        message = refusal(echo, '{"text": "", "count": 11, "volume": "x", "zzz": 1}')
        self.assertTrue(message.startswith("The arguments do not match the tool's parameters schema (4 problems):"))
        self.assertEqual([line.split(":")[0] for line in message.splitlines()[1:-1]], ["- /count", "- /text", "- /volume", "- /zzz"])

    def test_malformed_json(self):
        with self.assertRaises(InvalidArguments) as refused:
            invoke_json(echo, '{"text": "a",, }')
        self.assertTrue(refused.exception.message.startswith("The arguments are not valid JSON (line 1, column 14)"))
        self.assertIn('Send the arguments as a single JSON object, e.g. {"name": "value"}.', refused.exception.message)

    def test_long_values_are_cut(self):
        message = refusal(echo, '{"text": 1, "volume": "' + "x" * 500 + '"}')
        self.assertLess(max(len(line) for line in message.splitlines()), 320)


class OutputTest(unittest.TestCase):
    def test_a_result_breaking_the_declared_schema_fails_as_the_host_would(self):
        @tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        def wrong() -> dict:
            """Doc."""
            return {"n": "one"}

        with self.assertRaises(Failed) as failed:
            invoke_json(wrong, "{}")
        self.assertEqual(
            failed.exception.message,
            "the tool returned an invalid result: it does not match the tool's output schema "
            '(at `/n`: expected an integer, got the string "one"); a host would report it as `invalid_output`',
        )


if __name__ == "__main__":
    unittest.main()
