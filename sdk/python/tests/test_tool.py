"""@tool: options, metadata, definition errors, and how a call's outcome is reported."""

import contextlib
import io
import json
import types
import unittest

import support  # noqa: F401  (makes the SDK importable)

from toolcell_tool import Context, Failed, InvalidArguments, ToolDefinitionError, Unavailable, find_tool, tool


def documented(text: str) -> str:
    """Return the text."""
    return text


class OptionsTest(unittest.TestCase):
    def test_metadata(self):
        echo = tool(documented)
        metadata = echo.metadata()
        self.assertEqual(metadata["name"], "documented")
        self.assertEqual(metadata["description"], "Return the text.")
        self.assertIsNone(metadata["output_schema"])
        # Natively the version is the nearest pyproject's: the SDK's own here.
        self.assertEqual(metadata["version"], "0.1.0")
        self.assertTrue(metadata["parameters_schema"].startswith('{"$schema":'))
        self.assertEqual(echo("x"), "x")  # still the function

    def test_options_mirror_the_rust_macro(self):
        echo = tool(
            name="echo-2", title=" Echo ", read_only=True, idempotent=False, http=["api.example.com"],
            dirs=["/workspace"], writable_dirs=["/out"], env=["API_KEY"],
        )(documented)
        self.assertEqual(echo.name, "echo-2")
        self.assertEqual(
            echo.annotations,
            {"title": "Echo", "read_only": True, "destructive": None, "idempotent": False, "open_world": None},
        )
        self.assertEqual(
            echo.capabilities,
            {"http_hosts": ["api.example.com"], "directories": [("/workspace", False), ("/out", True)], "env": ["API_KEY"]},
        )

    def test_definition_errors_say_what_to_do(self):
        cases = [
            ({"name": "bad name"}, "tool name `bad name` is invalid"),
            ({"name": "x" * 65}, "is invalid: use 1-64 characters"),
            ({"title": ""}, "title is empty"),
            ({"title": "x" * 129}, "at most 128"),
            ({"title": "a\nb"}, r"control character U\+000A"),
            ({"read_only": True, "destructive": True}, "both `read_only` and `destructive`"),
            ({"read_only": "yes"}, "takes True, False or None"),
            ({"dirs": ["workspace"]}, "must be absolute"),
            ({"http": [""]}, "expected a host pattern"),
        ]
        for options, fragment in cases:
            with self.subTest(options=options), self.assertRaisesRegex(ToolDefinitionError, fragment):
                tool(**options)(documented)

    def test_a_description_is_required_and_bounded(self):
        def undocumented(text: str) -> str:
            return text

        with self.assertRaisesRegex(ToolDefinitionError, "`undocumented` needs a docstring"):
            tool(undocumented)
        def long(text: str) -> str:
            pass

        long.__doc__ = "x" * 1025
        with self.assertRaisesRegex(ToolDefinitionError, "is 1025 characters; model providers accept at most 1024"):
            tool(long)

    def test_documenting_a_missing_parameter_is_an_error(self):
        def typo(text: str) -> str:
            """Doc.

            Args:
                txt: The text.
            """

        with self.assertRaisesRegex(ToolDefinitionError, "`Args:` documents txt"):
            tool(typo)

    def test_async_is_refused(self):
        async def later(text: str) -> str:
            """Doc."""

        with self.assertRaisesRegex(ToolDefinitionError, "not async"):
            tool(later)


class FindToolTest(unittest.TestCase):
    def module(self, **members):
        module = types.ModuleType("tool_module")
        for name, value in members.items():
            if hasattr(value, "func"):
                value.func.__module__ = "tool_module"
            setattr(module, name, value)
        return module

    def test_exactly_one_tool(self):
        def one(text: str) -> str:
            """Doc."""

        one = tool(one)
        self.assertIs(find_tool(self.module(one=one)), one)

    def test_zero_or_two_is_an_error(self):
        with self.assertRaisesRegex(ToolDefinitionError, r"exactly one @tool function; found 0 \(none\)"):
            find_tool(self.module())

        def a(x: int) -> int:
            """A."""

        def b(x: int) -> int:
            """B."""

        with self.assertRaisesRegex(ToolDefinitionError, r"found 2 \(a, b\)"):
            find_tool(self.module(a=tool(a), b=tool(b)))


class OutcomeTest(unittest.TestCase):
    """`Tool.run`, what a component does with each call."""

    def run_mode(self, mode):
        @tool
        def misbehave(mode: str, context: Context) -> dict:
            """Misbehaves."""
            if mode == "reject":
                raise InvalidArguments("`mode` is wrong")
            if mode == "retry":
                raise Failed("busy", retryable=True)
            if mode == "unavailable":
                raise Unavailable("no directory is granted")
            if mode == "boom":
                raise RuntimeError("password=SECRET-py-7f3a")
            if mode == "bomb":
                raise MemoryError()
            if mode == "unserializable":
                return {"x": object()}
            return {"call_id": context.call_id, "user": context.host_context.get("user")}

        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            outcome = misbehave.run(json.dumps({"mode": mode}), Context("c1", {"user": "u"}))
        return outcome, stderr.getvalue()

    def test_results_and_tool_errors(self):
        self.assertEqual(self.run_mode("ok"), (("ok", '{"call_id":"c1","user":"u"}'), ""))
        self.assertEqual(self.run_mode("reject")[0], ("invalid", "`mode` is wrong"))
        self.assertEqual(self.run_mode("retry")[0], ("failed", "busy", True))
        self.assertEqual(self.run_mode("unavailable")[0], ("failed", "no directory is granted", False))

    def test_an_unexpected_error_keeps_its_details_out_of_the_message(self):
        outcome, stderr = self.run_mode("boom")
        self.assertEqual(
            outcome,
            ("failed", "the tool failed with an unexpected error (RuntimeError); its details went to the operator's log", False),
        )
        self.assertIn("SECRET-py-7f3a", stderr)
        self.assertIn("Traceback", stderr)
        outcome, stderr = self.run_mode("unserializable")
        self.assertIn("(TypeError)", outcome[1])
        self.assertIn("has no JSON form", stderr)

    def test_memory_error_propagates(self):
        with self.assertRaises(MemoryError):
            self.run_mode("bomb")


if __name__ == "__main__":
    unittest.main()
