"""What the framework adapters share: the tools' own definitions, and the import of a framework
that says which extra installs it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from toolcell._toolcell import Tools


@dataclass(frozen=True)
class Spec:
    """One tool as a framework needs it: its name, its description and its parameters' schema."""

    name: str
    description: str
    parameters: dict[str, Any]


def specs(tools: Tools) -> list[Spec]:
    """The tools' own definitions, as the model will see them."""
    if not isinstance(tools, Tools):
        raise TypeError(
            f"expected a toolcell Runtime, ToolSet or CodeMode, got {type(tools).__name__}: "
            "make one with toolcell.Runtime(), runtime.tool_set(...) or toolcell.code_mode(runtime)"
        )
    return [
        Spec(name=d["name"], description=d["description"], parameters=d["parameters"])
        for d in tools.definitions()
    ]


def require(module: str, extra: str) -> ModuleType:
    """Imports a framework's module, or says which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"this adapter needs `{module}`, which is not installed: pip install 'toolcell[{extra}]'"
        ) from err
