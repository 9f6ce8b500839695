"""Makes the SDK importable without installing it, and holds what several tests share."""

import json
import os
import sys

SDK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(SDK))
if SDK not in sys.path:
    sys.path.insert(0, SDK)

from toolcell_tool import InvalidArguments, invoke_json  # noqa: E402


def parameters(tool):
    """A tool's parameters schema, parsed."""
    return json.loads(tool.metadata()["parameters_schema"])


def refusal(tool, arguments):
    """The message invoke_json refuses `arguments` with (fails the test if it does not)."""
    try:
        result = invoke_json(tool, arguments)
    except InvalidArguments as err:
        return err.message
    raise AssertionError(f"{arguments} was accepted: {result}")


def problems(tool, arguments):
    """The report's problem lines, without the header and the closing advice."""
    return refusal(tool, arguments).splitlines()[1:-1]
