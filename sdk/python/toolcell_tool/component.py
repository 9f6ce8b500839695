"""The WIT exports of a tool component, for componentize-py's world `tool`.

Imported only inside a component build: `wit_world` and `componentize_py_types` are the
bindings componentize-py generates. Everything here runs at build time (componentize-py
pre-initializes the module and snapshots it), so a call only ever runs `invoke`.
"""

import importlib
import os
import sys

import componentize_py_types
import wit_world

from .context import Context
from .tool import find_tool


# Modules the standard library imports only when a function first needs them: in a component
# there are no files to import from during a call, so a tool whose code passes natively would
# fail there (`Counter.most_common` imports `heapq`; `datetime.strptime` imports `_strptime`).
# Each is imported here, at build time, into the snapshot every call starts from.
LAZILY_IMPORTED = (
    "heapq",  # collections.Counter.most_common
    "_strptime",  # datetime.strptime, time.strptime
    "weakref",  # functools.singledispatch
    "types",
    "copy",  # dataclasses.replace and asdict of nested values
    "bisect",  # random.choices with weights
    "locale",  # str formatting with "n", calendar
    "encodings.idna",  # str.encode("idna"), urllib.parse with non-ASCII hosts
    "encodings.latin_1",
    "encodings.ascii",
    "encodings.utf_16",
    "encodings.utf_32",
    "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
)


def preimport_lazy_stdlib():
    """Imports `LAZILY_IMPORTED`, skipping any this interpreter does not have."""
    for name in LAZILY_IMPORTED:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def exports(module, version):
    """The `WitWorld` class exporting the one tool in `module` at `version`."""
    preimport_lazy_stdlib()
    tool = find_tool(module)
    tool.version = version
    described = tool.metadata()
    metadata = wit_world.ToolMetadata(**described)
    requested = tool.capabilities
    capabilities = wit_world.CapabilityRequest(
        http_hosts=list(requested["http_hosts"]),
        directories=[wit_world.DirectoryRequest(path, writable) for path, writable in requested["directories"]],
        env=list(requested["env"]),
    )
    annotations = wit_world.ToolAnnotations(**tool.annotations)

    class WitWorld(wit_world.WitWorld):
        def metadata(self):
            return metadata

        def capabilities(self):
            return capabilities

        def annotations(self):
            return annotations

        def invoke(self, arguments, context):
            try:
                outcome = tool.run(arguments, Context.from_wit(context.call_id, context.host_context))
            except MemoryError:
                _out_of_memory()
            if outcome[0] == "ok":
                return outcome[1]
            if outcome[0] == "invalid":
                raise componentize_py_types.Err(wit_world.ToolError_InvalidArguments(outcome[1]))
            failure = wit_world.Failure(message=outcome[1], retryable=outcome[2])
            raise componentize_py_types.Err(wit_world.ToolError_Failed(failure))

    return WitWorld


def _out_of_memory():
    # An exception escaping an export makes componentize-py panic, which the host reports as
    # a crash. abort() traps with `unreachable` and no panic message: what the host reads as
    # an allocation failure after a refused memory.grow, i.e. `memory_limit`.
    try:
        sys.stderr.write("toolcell: the tool ran out of memory\n")
    except BaseException:
        pass
    os.abort()
