"""The exports of a test-harness component: the tool's own tests, run inside the component.

`toolcell test` builds the project with `build.py --tests`, whose entry imports the tool as the
tool's own build does, then the project's `test*.py` modules (at build time, like every import
in a component), and exports `harness_exports(...)`. The host then calls `invoke` once with
`{}` to list the tests, and once per test with `{"run": INDEX}`, each in a fresh instance under
the tool's limits and grants, so a test meets what a call of the tool meets.

What the test side imported is not there for the tool: the tool's own component has only the
modules its entry imported at build time, and nothing can be imported during a call. So while a
test runs, an `import` by a module the tool's entry loaded (the tool, the SDK, the standard
library they use) of a module only the tests loaded fails as it would in the tool's component,
with `ModuleNotFoundError`.

The protocol's answers are JSON: `{"tests": [{"name", "file"}], "errors": [{"file", "details"}]}`
for the list; `{"outcome": "passed"|"failed"|"skipped", "message", "details"}` for a test.
"""

import builtins
import importlib
import json
import sys
import traceback

import componentize_py_types
import wit_world

from .component import exports

# The harness's parameters: none lists the tests, `run` runs one by its index in the list.
PARAMETERS = {
    "type": "object",
    "properties": {"run": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}


def harness_exports(tool_module, version, test_modules):
    """The `WitWorld` class of the harness for the tool in `tool_module`: its tests are in the
    modules named `test_modules`, imported here."""
    tool_world = exports(tool_module, version)
    # Everything the tool's own component would have: what its entry imported, and what
    # describing the tool imported. Taken before anything of the tests is imported.
    tool_side = frozenset(sys.modules)
    tests, errors = _collect(test_modules)
    metadata = tool_world().metadata()
    metadata = wit_world.ToolMetadata(
        name=metadata.name,
        description=f"The tests of `{metadata.name}`, run inside its component by `toolcell test`.",
        version=metadata.version,
        parameters_schema=json.dumps(PARAMETERS),
        output_schema=None,
    )
    listing = json.dumps({
        "tests": [{"name": test.id(), "file": type(test).__module__ + ".py"} for test in tests],
        "errors": errors,
    })

    class WitWorld(tool_world):
        def metadata(self):
            return metadata

        def invoke(self, arguments, context):
            try:
                index = json.loads(arguments).get("run")
                if index is None:
                    return listing
                if not 0 <= index < len(tests):
                    raise IndexError(f"there are {len(tests)} tests; no test {index}")
                return json.dumps(_run(tests[index], tool_side))
            except BaseException as err:  # noqa: BLE001  an exception escaping an export traps
                message = f"the test harness failed: {type(err).__name__}: {err}"
                raise componentize_py_types.Err(wit_world.ToolError_Failed(wit_world.Failure(message, False)))

    return WitWorld


def _collect(test_modules):
    """The test cases of `test_modules` in order, and the modules that failed to import (with
    their tracebacks): a test module that cannot be imported in the component fails, as it
    would natively."""
    import unittest

    loader = unittest.TestLoader()
    tests, errors = [], []
    for name in test_modules:
        try:
            module = importlib.import_module(name)
        except BaseException:  # noqa: BLE001  reported as the module's failure
            errors.append({"file": name + ".py", "details": traceback.format_exc()})
            continue
        tests.extend(_flatten(loader.loadTestsFromModule(module)))
        errors.extend({"file": name + ".py", "details": error} for error in loader.errors)
        loader.errors = []
    return tests, errors


def _flatten(suite):
    for test in suite:
        if hasattr(test, "__iter__"):
            yield from _flatten(test)
        else:
            yield test


def _run(test, tool_side):
    """Runs one test case with the tool side's imports limited to what its component has."""
    import unittest

    result = unittest.TestResult()
    # Capture what the test prints; it is reported with a failure.
    result.buffer = True
    original_import = builtins.__import__
    builtins.__import__ = _guarded_import(original_import, tool_side)
    try:
        test.run(result)
    finally:
        builtins.__import__ = original_import
    if result.failures or result.errors or result.unexpectedSuccesses:
        problems = result.failures + result.errors
        details = "\n".join(text for _, text in problems) or "the test was expected to fail, and passed"
        # The guard's own frame is not the test's or the tool's.
        details = "\n".join(line for line in details.splitlines() if 'toolcell_tool/selftest.py", line' not in line)
        return {"outcome": "failed", "message": _last_line(details), "details": details}
    if result.skipped:
        return {"outcome": "skipped", "message": result.skipped[0][1], "details": ""}
    return {"outcome": "passed", "message": "", "details": ""}


def _last_line(details):
    """The exception line of a traceback (the last line that is not blank or captured output)."""
    lines = [line for line in details.split("\n\nStdout:")[0].split("\n\nStderr:")[0].splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _guarded_import(original_import, tool_side):
    """`__import__` as the tool's component sees it: a module the tool side imports must be one
    the tool's component has, even when the tests' imports put it in `sys.modules`."""

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__")
        if importer in tool_side:
            absolute = _absolute(name, globals, level)
            wanted = [absolute.rsplit(".", depth)[0] for depth in range(absolute.count("."), -1, -1)]
            wanted += [f"{absolute}.{item}" for item in fromlist or () if item != "*"]
            for module in wanted:
                if module in sys.modules and module not in tool_side:
                    # In the words the tool's component would use.
                    raise ModuleNotFoundError(f"No module named '{module}'", name=module)
        return original_import(name, globals, locals, fromlist, level)

    return guarded


def _absolute(name, globals, level):
    if level == 0:
        return name
    package = (globals or {}).get("__package__") or ""
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{name}" if name else base
