"""The `python` tool natively, as CPython runs it: results, errors, the traceback's shape and
code mode against a stand-in host. (tests/it/python.rs runs the component itself.)

    PYTHONPATH=sdk/python python3 -m unittest discover -s tools/python
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "sdk", "python"))
sys.path.insert(0, HERE)

from toolcell_tool import InvalidArguments, invoke_json  # noqa: E402
from toolcell_tool import calls  # noqa: E402

import python_tool  # noqa: E402


def run(code, inputs=None):
    arguments = {"code": code} if inputs is None else {"code": code, "inputs": inputs}
    return json.loads(invoke_json(python_tool.python, json.dumps(arguments)))


class EchoTest(unittest.TestCase):
    def test_what_is_kept_is_echoed_as_it_is_printed(self):
        import io

        import _toolcell_runner as runner

        echo = io.StringIO()
        body, final = runner.compile_program("print('one')\nprint('x' * 70000)\n7")
        outcome = runner.run("", body, final, {}, echo=echo)
        self.assertEqual(outcome.value, 7)
        self.assertEqual(echo.getvalue(), outcome.stdout, "only what is kept")
        self.assertTrue(echo.getvalue().startswith("one\nxxx"))


class ResultsTest(unittest.TestCase):
    def test_stdout_and_the_final_expression(self):
        result = run("print('hi')\nx = 6\nx * 7")
        self.assertEqual(result["stdout"], "hi\n")
        self.assertEqual((result["value"], result["value_type"]), (42, "int"))
        self.assertTrue(result["ok"])
        self.assertIsNone(result["error"])

    def test_a_value_without_a_plain_json_form_is_its_repr(self):
        result = run("import datetime\ndatetime.date(2024, 2, 29) + datetime.timedelta(days=1)")
        self.assertEqual((result["value"], result["value_type"]), ("datetime.date(2024, 3, 1)", "date"))
        self.assertEqual(run("{1: 'a'}")["value"], "{1: 'a'}", "int keys are not JSON keys")
        self.assertEqual(run("{'a': (1, 2.5, None)}")["value"], {"a": [1, 2.5, None]})
        self.assertEqual(run("float('nan')")["value"], "nan")

    def test_no_final_expression_or_none_has_no_value(self):
        for code in ("x = 1", "None", "print(1)"):
            result = run(code)
            self.assertIsNone(result["value"], code)
            self.assertIsNone(result["value_type"], code)

    def test_inputs_are_bound_to_a_variable(self):
        result = run("sum(row['n'] for row in inputs)", inputs=[{"n": 2}, {"n": 3}])
        self.assertEqual(result["value"], 5)

    def test_output_is_bounded(self):
        result = run("print('x' * 100_000)")
        self.assertEqual(len(result["stdout"]), 64 * 1024)
        self.assertEqual(result["dropped_chars"], 100_001 - 64 * 1024)

    def test_random_is_seeded_from_the_call(self):
        code = "import random\n[random.randint(0, 10**9) for _ in range(3)]"
        self.assertEqual(run(code)["value"], run(code)["value"], "the same call repeats")
        self.assertNotEqual(run(code)["value"], run(code + "\n")["value"], "another call draws others")


class ErrorsTest(unittest.TestCase):
    def test_a_syntax_error_is_the_callers_to_fix_with_line_and_column(self):
        with self.assertRaises(InvalidArguments) as refused:
            run("x = 1\nif x\n    print(x)")
        message = refused.exception.message
        self.assertIn("SyntaxError at line 2, column 5", message)
        self.assertIn("    if x\n        ^", message)
        with self.assertRaises(InvalidArguments) as refused:
            run("def f():\nreturn 1")
        self.assertIn("IndentationError at line 2", refused.exception.message)

    def test_an_exception_is_a_result_with_a_clean_traceback(self):
        result = run("def f(x):\n    return 1 / x\nprint('before')\nf(0)")
        self.assertFalse(result["ok"])
        self.assertEqual(result["stdout"], "before\n", "output up to the failure is kept")
        error = result["error"]
        self.assertEqual((error["type"], error["message"], error["line"]), ("ZeroDivisionError", "division by zero", 2))
        lines = [line for line in error["traceback"].splitlines() if not set(line.strip()) <= set("~^")]
        self.assertEqual(
            lines,
            [
                "Traceback (most recent call last):",
                "  line 4, in <module>",
                "    f(0)",
                "  line 2, in f",
                "    return 1 / x",
                "ZeroDivisionError: division by zero",
            ],
        )

    def test_library_frames_and_paths_stay_out_of_the_traceback(self):
        error = run("import json\njson.loads('{')")["error"]
        self.assertEqual((error["type"], error["line"]), ("JSONDecodeError", 2))
        self.assertNotIn("/", error["traceback"], error["traceback"])
        self.assertNotIn(HERE, json.dumps(error))

    def test_deep_recursion_is_a_recursion_error(self):
        error = run("def f(n):\n    return f(n + 1)\nf(0)")["error"]
        self.assertEqual(error["type"], "RecursionError")
        self.assertIn("earlier calls left out", error["traceback"])
        self.assertLess(error["traceback"].count("\n"), 40)

    def test_exit_codes(self):
        self.assertTrue(run("import sys\nprint(1)\nsys.exit(0)")["ok"])
        error = run("raise SystemExit(3)")["error"]
        self.assertEqual((error["type"], error["message"]), ("SystemExit", "3"))



class ProgramOutcomeTest(unittest.TestCase):
    """Whatever a program raises or calls, its run is its result: showing its value or its
    exception runs its code too, and os._exit would end the interpreter."""

    def test_a_value_whose_repr_raises_any_base_exception_is_described(self):
        for stop, name in (
            ("raise SystemExit", "SystemExit"),
            ("raise KeyboardInterrupt", "KeyboardInterrupt"),
            ("raise GeneratorExit", "GeneratorExit"),
            ("raise type('Stop', (BaseException,), {})()", "Stop"),
        ):
            code = f"print('before')\nclass A:\n    def __repr__(self):\n        print('in repr')\n        {stop}\nA()"
            result = run(code)
            self.assertEqual((result["ok"], result["stdout"]), (True, "before\nin repr\n"), code)
            self.assertEqual((result["value"], result["value_type"]), (f"<A whose repr failed: {name}>", "A"), code)

    def test_the_values_type_and_structure_are_read_without_its_code(self):
        result = run("class A:\n    @property\n    def __class__(self):\n        raise SystemExit\nA()")
        self.assertTrue(result["value"].startswith("<__main__.A object at 0x"), result)
        result = run("class M(type):\n    @property\n    def __name__(cls):\n        raise SystemExit\nclass A(metaclass=M):\n    pass\nA()")
        self.assertEqual(result["value_type"], "A")
        plain = (
            "class L(list):\n    def __iter__(self):\n        raise SystemExit\n"
            "class D(dict):\n    def items(self):\n        raise SystemExit\n"
            "class I(int):\n    def __int__(self):\n        raise SystemExit\n"
            "class S(str):\n    def __str__(self):\n        raise SystemExit\n"
            "L([D(a=I(1)), S('s'), (2.5,)])"
        )
        self.assertEqual(run(plain)["value"], [{"a": 1}, "s", [2.5]])

    def test_an_exception_that_cannot_be_shown_is_still_the_error(self):
        for code, kind, message in (
            ("class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\nraise E()", "E", "<exception str() failed>"),
            ("class E(Exception):\n    def __str__(self):\n        return 42\nraise E()", "E", "<exception str() failed>"),
            ("class A:\n    def __repr__(self):\n        raise GeneratorExit\nraise ValueError(A(), 2)", "ValueError", "<exception str() failed>"),
            ("class E(Exception):\n    @property\n    def __notes__(self):\n        raise SystemExit\nraise E('m')", "E", "m"),
            ("class E(Exception):\n    @property\n    def __traceback__(self):\n        raise SystemExit\nraise E('m')", "E", "m"),
            ("class A:\n    def __dir__(self):\n        raise SystemExit\nA().missing", "AttributeError", "'A' object has no attribute 'missing'"),
            ("class X(SystemExit):\n    @property\n    def code(self):\n        raise KeyboardInterrupt\nraise X(1)", "X", "1"),
        ):
            result = run("print('before')\n" + code)
            self.assertEqual((result["ok"], result["stdout"]), (False, "before\n"), code)
            error = result["error"]
            self.assertEqual((error["type"], error["message"], error["line"]), (kind, message, code.count("\n") + 2), code)
            self.assertTrue(error["traceback"].endswith(f"{kind}: {message}\n"), error["traceback"])
            self.assertIn(code.splitlines()[-1], error["traceback"])

    def test_os_exit_ends_the_program_with_its_status_and_output(self):
        result = run("import os, sys\nprint('out')\nprint('err', file=sys.stderr)\nos._exit(0)\nprint('after')\n1")
        self.assertEqual((result["ok"], result["stdout"], result["stderr"], result["value"]), (True, "out\n", "err\n", None))
        result = run("import os\nprint('out')\ntry:\n    os._exit(3)\nexcept BaseException:\n    print('caught')\n'value'")
        self.assertEqual((result["ok"], result["stdout"], result["value"]), (False, "out\n", None))
        error = result["error"]
        self.assertEqual((error["type"], error["message"], error["line"]), ("SystemExit", "3", 4))
        self.assertEqual(error["traceback"], "Traceback (most recent call last):\n  line 4, in <module>\n    os._exit(3)\nSystemExit: 3\n")
        for code in (
            "import posix\nposix._exit(4)",
            "from os import _exit\n_exit(4)",
            "import sys\nsys.modules['posix']._exit(4)",
            "import importlib, os\nimportlib.reload(os)\nos._exit(4)",
            "import sys\ndel sys.modules['posix']\nimport posix\nposix._exit(4)",
            "import _imp, importlib.machinery as m\nposix = _imp.create_builtin(m.ModuleSpec('posix', m.BuiltinImporter))\nposix._exit(4)",
        ):
            self.assertEqual(run(code)["error"]["message"], "4", code)
        self.assertEqual(run("import os\nos.abort()")["error"]["message"], "os.abort() ended the program")

    def test_os_exit_checks_its_argument_as_the_real_one_does(self):
        self.assertEqual(run("import os\nos._exit('1')")["error"]["type"], "TypeError")
        self.assertEqual(run("import os\nos._exit(2**40)")["error"]["type"], "OverflowError")
        self.assertTrue(run("import os\nos._exit(status=0)")["ok"])

    def test_an_exit_from_a_finalizer_or_while_shown_ends_the_program(self):
        for code in (
            "class D:\n    def __del__(self):\n        import os\n        os._exit(5)\nd = D()\ndel d\nprint('after')",
            "class A:\n    def __repr__(self):\n        import os\n        os._exit(5)\nA()",
            "class E(Exception):\n    def __str__(self):\n        import os\n        os._exit(5)\nraise E()",
        ):
            result = run(code)
            self.assertEqual((result["stdout"], result["value"], result["error"]["message"], result["error"]["line"]), ("", None, "5", 4), code)

    def test_outside_a_program_the_exits_are_never_the_real_exit_but_abort_is(self):
        import _toolcell_runner as runner

        self.assertIs(os._exit, runner._exit)
        with self.assertRaises(SystemExit):
            os._exit(0)
        from unittest import mock

        with mock.patch.object(runner, "_ABORT") as real:
            os.abort()
        real.assert_called_once_with()

class DepthTest(unittest.TestCase):
    """What keeps deep structures from recursing in C past the wasm stack (the component's
    outcomes are in tests/it/python.rs)."""

    def test_a_deep_value_is_shown_to_a_bounded_depth(self):
        result = run("x = []\nfor _ in range(100_000):\n    x = [x]\nx")
        self.assertEqual(result["value_type"], "list")
        self.assertTrue(result["value"].startswith("[" * 50 + "[...]"), result["value"][:80])

    def test_what_a_program_made_is_kept_not_freed(self):
        import _toolcell_runner as runner

        kept = len(runner._KEPT)
        run("marker = object()\nmarker")
        self.assertEqual(len(runner._KEPT), kept + 1)
        namespace, value, exception = runner._KEPT[-1]
        self.assertIs(namespace["marker"], value)
        self.assertIsNone(exception)

    def test_after_a_memory_error_the_program_is_freed_to_format_it(self):
        import _toolcell_runner as runner

        kept = len(runner._KEPT)
        self.assertEqual(run("raise MemoryError")["error"]["type"], "MemoryError")
        self.assertEqual(len(runner._KEPT), kept)

    def test_source_too_deep_for_the_parser_is_the_callers_to_fix(self):
        import ast
        from unittest import mock

        import _toolcell_runner as runner

        for error in (MemoryError("Parser stack overflowed - Python source too complex to parse"), RecursionError()):
            with mock.patch.object(ast, "parse", side_effect=error):
                with self.assertRaises(runner.ProgramSyntaxError) as raised:
                    runner.compile_program("x = 1")
            self.assertIn("nests too deeply to compile", raised.exception.message)


class StandIn:
    """A host with `calculator`, recording the calls made."""

    def __init__(self):
        self.made = []

    def callable(self):
        schema = {
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "An arithmetic expression."}},
            "required": ["expression"],
        }
        return [calls.CallableTool("calculator", "Evaluate arithmetic.", schema)]

    def call(self, name, arguments):
        self.made.append((name, json.loads(arguments)))
        if json.loads(arguments).get("expression") == "1/0":
            raise calls.ToolCallError("rejected_arguments", "The tool rejected the arguments: division by zero", True)
        return json.dumps({"value": 4.0})


class CodeModeTest(unittest.TestCase):
    def setUp(self):
        self.host = StandIn()
        calls.use_host(self.host)
        self.addCleanup(calls.use_host, None)

    def test_allowed_tools_are_functions_with_signatures_and_docs(self):
        result = run(
            "import inspect\n"
            "print(inspect.signature(tools.calculator))\n"
            "print(tools.calculator.__doc__.splitlines()[0])\n"
            "tools.calculator(expression='2 + 2')['value'] + tools.calculator('2 * 2')['value']"
        )
        self.assertEqual(result["stdout"], "(expression: str)\nEvaluate arithmetic.\n")
        self.assertEqual(result["value"], 8.0)
        self.assertEqual(self.host.made, [("calculator", {"expression": "2 + 2"}), ("calculator", {"expression": "2 * 2"})])

    def test_types_are_written_as_the_host_writes_them(self):
        # The same cases as `formats::python`'s tests in the runtime: code mode's `search`
        # shows the host's rendering, and a program sees this one.
        import _toolcell_tools as code_mode

        root = {"$defs": {"Unit": {"enum": ["m", "ft", "it's"]}, "Loop": {"$ref": "#/$defs/Loop"}}, "properties": {}}
        cases = [
            ({"$ref": "#/$defs/Unit"}, 'Literal[\'m\', \'ft\', "it\'s"]'),
            ({"$ref": "#/$defs/Loop"}, "Any"),
            ({"$ref": "#/$defs/Missing"}, "Any"),
            ({"type": ["string", "null"]}, "str | None"),
            ({"anyOf": [{"type": "integer"}, {"type": "integer"}, {"type": "null"}]}, "int | None"),
            ({"anyOf": [{"type": "integer"}, {}]}, "Any"),
            ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "list[list[float]]"),
            ({"type": "array"}, "list"),
            ({"const": 3}, "Literal[3]"),
            ({"enum": [True, None, -1, "a\\b\n\x01"]}, "Literal[True, None, -1, 'a\\\\b\\n\\x01']"),
            ({"type": "string", "enum": ["\u00e9"]}, "str"),
            ({"type": "number", "enum": [1.5, 2]}, "float | int"),
            ({"oneOf": [{"const": "m"}, {"const": "ft"}]}, "Literal['m', 'ft']"),
            ({"anyOf": [{"const": "m"}, {"type": "null"}]}, "Literal['m'] | None"),
            ({"type": "weird"}, "Any"),
            ({"type": "integer", "enum": list(range(17))}, "int"),
            ({"oneOf": [{"const": f"unit{i}"} for i in range(17)]}, "str"),
        ]
        for schema, expected in cases:
            self.assertEqual(code_mode._type_text(schema, root, 0), expected, schema)

    def test_keyword_arguments_are_sent_as_binding_the_signature_sends_them(self):
        schema = {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "to": {"type": "string"},
                "from": {"type": "string"},
                "precision": {"type": "integer"},
            },
            "required": ["value", "to"],
        }
        self.host.callable = lambda: [calls.CallableTool("unit_convert", "Convert.", schema)]
        run(
            "tools.unit_convert(to='km', value=1.5)\n"
            "tools.unit_convert(1.5, 'km')\n"
            "tools.unit_convert(precision=None, to='km', value=None)\n"
            "tools.unit_convert(to='km', value=1, precision=2, **{'from': 'mile'})"
        )
        self.assertEqual(
            [list(arguments.items()) for _, arguments in self.host.made],
            [
                [("value", 1.5), ("to", "km")],
                [("value", 1.5), ("to", "km")],
                [("value", None), ("to", "km")],
                [("value", 1), ("to", "km"), ("precision", 2), ("from", "mile")],
            ],
        )
        error = run("tools.unit_convert(to='km')")["error"]
        self.assertIn("missing a required argument: 'value'", error["message"])

    def test_a_failed_call_raises_with_the_hosts_message(self):
        result = run(
            "try:\n    tools.calculator(expression='1/0')\nexcept ToolCallError as err:\n    caught = err.kind, err.message\ncaught"
        )
        self.assertEqual(result["value"], ["rejected_arguments", "The tool rejected the arguments: division by zero"])
        error = run("tools.calculator(expression='1/0')")["error"]
        self.assertEqual(error["type"], "ToolCallError")
        self.assertIn("division by zero", error["traceback"])

    def test_an_unknown_tool_or_wrong_arguments_say_what_may_be_called(self):
        error = run("tools.files(path='/')")["error"]
        self.assertIn("no tool `files` may be called here; these may: calculator", error["message"])
        error = run("tools.calculator(expr='1')")["error"]
        self.assertIn("its signature is calculator(expression: str)", error["message"])

    def test_without_a_host_no_tool_is_callable(self):
        calls.use_host(None)
        self.assertIn("this program may call no tools here", run("tools.calculator(expression='1')")["error"]["message"])


if __name__ == "__main__":
    unittest.main()
