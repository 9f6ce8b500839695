"""Tests of the `{{name}}` tool, run natively: `python3 -m unittest` in this folder."""

import json
import unittest

from toolcell_tool import InvalidArguments, invoke_json

from {{module}} import {{function}}


def invoke(arguments):
    # As the host would: the arguments are checked against the schema, then the tool runs.
    return json.loads(invoke_json({{function}}, arguments))


class ToolTest(unittest.TestCase):
    def test_counts_words_unless_told_otherwise(self):
        self.assertEqual(invoke('{"text": "one two  three"}')["count"], 3)
        self.assertEqual(invoke('{"text": "one\\ntwo", "unit": "lines"}')["count"], 2)
        self.assertEqual(invoke('{"text": "b a b", "top_words": 1}')["most_common"], ["b"])

    def test_checks_the_arguments_against_the_schema_as_the_host_does(self):
        # Natively as in the host, the arguments are checked against the schema before the
        # function runs, and refused in the words a model would read.
        with self.assertRaises(InvalidArguments) as refused:
            invoke('{"text": ""}')
        self.assertIn("/text: must not be empty", refused.exception.message)
        with self.assertRaises(InvalidArguments) as refused:
            invoke('{"text": "a", "unit": "pages"}')
        self.assertIn("/unit", refused.exception.message)

    def test_refuses_a_text_of_only_whitespace(self):
        with self.assertRaises(InvalidArguments) as refused:
            invoke('{"text": "   "}')
        self.assertEqual(refused.exception.message, "`text` is only whitespace: give the text to measure")


if __name__ == "__main__":
    unittest.main()
