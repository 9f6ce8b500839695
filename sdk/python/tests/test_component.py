"""The component's exports, against stand-ins for the bindings componentize-py generates
(the real ones exist only inside a build; the shapes here are those of `componentize-py
bindings` for world `tool`)."""

import contextlib
import importlib
import io
import sys
import types
import unittest
from dataclasses import dataclass
from typing import Literal, Optional
from unittest import mock

import support  # noqa: F401

from toolcell_tool import InvalidArguments, tool


def fake_bindings():
    world = types.ModuleType("wit_world")

    @dataclass
    class ToolMetadata:
        name: str
        description: str
        version: str
        parameters_schema: str
        output_schema: Optional[str]

    @dataclass
    class CallContext:
        call_id: str
        host_context: str

    @dataclass
    class Failure:
        message: str
        retryable: bool

    @dataclass
    class ToolError_InvalidArguments:  # noqa: N801 - the generated name
        value: str

    @dataclass
    class ToolError_Failed:  # noqa: N801
        value: Failure

    @dataclass
    class DirectoryRequest:
        guest_path: str
        writable: bool

    @dataclass
    class CapabilityRequest:
        http_hosts: list
        directories: list
        env: list

    @dataclass
    class ToolAnnotations:
        title: Optional[str]
        read_only: Optional[bool]
        destructive: Optional[bool]
        idempotent: Optional[bool]
        open_world: Optional[bool]

    class WitWorld:
        pass

    for value in (ToolMetadata, CallContext, Failure, ToolError_InvalidArguments, ToolError_Failed,
                  DirectoryRequest, CapabilityRequest, ToolAnnotations, WitWorld):
        setattr(world, value.__name__, value)
    types_module = types.ModuleType("componentize_py_types")

    @dataclass(frozen=True)
    class Err(Exception):
        value: object

    types_module.Err = Err
    return world, types_module


@tool(title="Probe", read_only=True, dirs=["/workspace"])
def probe(mode: Literal["ok", "reject", "boom", "bomb"]) -> dict:
    """Probe the exports."""
    if mode == "reject":
        raise InvalidArguments("no")
    if mode == "boom":
        raise RuntimeError("SECRET")
    if mode == "bomb":
        raise MemoryError()
    return {"ok": True}


class ComponentTest(unittest.TestCase):
    def setUp(self):
        self.world, self.types = fake_bindings()
        patched = {"wit_world": self.world, "componentize_py_types": self.types}
        self.enterContext(mock.patch.dict(sys.modules, patched))
        sys.modules.pop("toolcell_tool.component", None)
        self.addCleanup(sys.modules.pop, "toolcell_tool.component", None)
        component = importlib.import_module("toolcell_tool.component")
        module = types.ModuleType("probe_module")
        probe.func.__module__ = module.__name__
        module.probe = probe
        self.exports = component.exports(module, version="1.2.3")()

    def invoke(self, mode):
        context = self.world.CallContext(call_id="c", host_context="{}")
        return self.exports.invoke(f'{{"mode": "{mode}"}}', context)

    def test_metadata_capabilities_annotations(self):
        metadata = self.exports.metadata()
        self.assertEqual((metadata.name, metadata.version, metadata.output_schema), ("probe", "1.2.3", None))
        self.assertEqual(self.exports.capabilities().directories, [self.world.DirectoryRequest("/workspace", False)])
        annotations = self.exports.annotations()
        self.assertEqual((annotations.title, annotations.read_only, annotations.open_world), ("Probe", True, None))

    def test_invoke(self):
        self.assertEqual(self.invoke("ok"), '{"ok":true}')
        with self.assertRaises(self.types.Err) as err:
            self.invoke("reject")
        self.assertEqual(err.exception.value, self.world.ToolError_InvalidArguments("no"))
        with self.assertRaises(self.types.Err) as err, contextlib.redirect_stderr(io.StringIO()) as stderr:
            self.invoke("boom")
        self.assertFalse(err.exception.value.value.retryable)
        self.assertNotIn("SECRET", err.exception.value.value.message)
        self.assertIn("SECRET", stderr.getvalue())

    def test_out_of_memory_aborts(self):
        with mock.patch("os.abort", side_effect=SystemExit("aborted")) as abort, contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                self.invoke("bomb")
        abort.assert_called_once()


if __name__ == "__main__":
    unittest.main()
