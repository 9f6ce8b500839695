"""Calling other tools natively: nothing is callable without a host, and a stand-in host
sees exactly the JSON a component would send."""

import json
import unittest

import support  # noqa: F401  (makes the SDK importable)

from toolcell_tool import calls


class Recorder:
    def __init__(self, reply):
        self.reply = reply
        self.sent = []

    def callable(self):
        return [calls.CallableTool("echo", "Echo.", {"type": "object"})]

    def call(self, name, arguments):
        self.sent.append((name, arguments))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


class CallsTest(unittest.TestCase):
    def tearDown(self):
        calls.use_host(None)

    def test_natively_nothing_is_callable(self):
        self.assertEqual(calls.callable_tools(), [])
        with self.assertRaises(calls.ToolCallError) as refused:
            calls.call_tool("calculator", {"expression": "1"})
        self.assertEqual(refused.exception.kind, "not_allowed")
        self.assertIn("needs a toolcell host", refused.exception.message)

    def test_a_call_sends_json_and_parses_the_result(self):
        host = Recorder('{"text": "hé"}')
        calls.use_host(host)
        self.assertEqual([tool.name for tool in calls.callable_tools()], ["echo"])
        self.assertEqual(calls.call_tool("echo", {"text": "hé"}), {"text": "hé"})
        self.assertEqual(calls.call_tool("echo"), {"text": "hé"})
        self.assertEqual([(name, json.loads(text)) for name, text in host.sent], [("echo", {"text": "hé"}), ("echo", {})])

    def test_failures_and_non_json_results_raise(self):
        calls.use_host(Recorder(calls.ToolCallError("timeout", "The tool did not finish", False)))
        with self.assertRaises(calls.ToolCallError) as failed:
            calls.call_tool("echo", {})
        self.assertEqual((failed.exception.kind, str(failed.exception)), ("timeout", "The tool did not finish"))
        calls.use_host(Recorder("not json"))
        with self.assertRaises(calls.ToolCallError) as failed:
            calls.call_tool("echo", {})
        self.assertEqual(failed.exception.kind, "invalid_output")


if __name__ == "__main__":
    unittest.main()
