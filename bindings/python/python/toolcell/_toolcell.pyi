"""Types of the extension module (Rust, PyO3). What users import comes through `toolcell`."""

import os
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, Sequence
from typing import Any, Generic, TypeVar, final

from typing_extensions import disjoint_base

_T = TypeVar("_T")

__all__ = [
    "__version__",
    "Tools",
    "Runtime",
    "ToolSet",
    "CodeMode",
    "ToolOutput",
    "Usage",
    "Deny",
    "Defer",
    "Pending",
    "repair",
    "formats",
    "explain_policy",
    "check_policy",
    "suggest_rules",
    "ToolcellError",
    "LoadError",
    "PolicyError",
    "FormatError",
    "MessageError",
    "ToolSetError",
    "CodeModeError",
    "ResumeError",
]

__version__: str

_JSON = Any
"""A _JSON value as Python holds it: dict, list, str, int, float, bool or None."""

_StrPath = str | os.PathLike[str]

class ToolcellError(Exception):
    """The base of toolcell's setup errors."""

class LoadError(ToolcellError):
    """The runtime could not be made: a tools folder that cannot be read, an engine or pool that cannot start."""

class PolicyError(ToolcellError):
    """A policy file that cannot be read or used."""

class FormatError(ToolcellError):
    """A definition that has no form in the asked provider format, or a format name that is not one."""

class MessageError(ToolcellError):
    """A model's message that is not in the format's shape."""

class ToolSetError(ToolcellError):
    """A tool set that names tools the runtime has not loaded."""

class CodeModeError(ToolcellError):
    """Code mode is off, or the tool that runs its programs is not loaded."""

class ResumeError(ToolcellError):
    """A paused program could not resume: its token is not authentic, expired or used, or the run diverged."""

@final
class Usage:
    """What a call used."""

    @property
    def duration_us(self) -> int: ...
    @property
    def fuel_consumed(self) -> int: ...
    @property
    def peak_memory_bytes(self) -> int: ...
    @property
    def nested_calls(self) -> int: ...

@final
class ToolOutput:
    """The outcome of a call, success or not."""

    @property
    def call_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def content(self) -> str:
        """What to give the model: the result _JSON on success, the error's message otherwise."""
    @property
    def is_error(self) -> bool: ...
    @property
    def error_kind(self) -> str | None:
        """`invalid_arguments`, `timeout`, ... when the call failed."""
    @property
    def retryable(self) -> bool: ...
    @property
    def is_caller_error(self) -> bool:
        """Whether the model caused the error with its call and should fix it."""
    @property
    def usage(self) -> Usage: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def detail(self) -> str | None: ...
    @property
    def value(self) -> _JSON:
        """The result as parsed _JSON when the call succeeded, else None."""
    @property
    def error(self) -> dict[str, _JSON] | None:
        """The error as the runtime reports it (`kind`, `retryable` and the kind's fields)."""

@final
class Deny:
    """Returned by an interceptor's `before`: refuse the call; the reason reaches the model."""

    def __new__(cls, reason: str) -> Deny: ...
    @property
    def reason(self) -> str: ...

@final
class Defer:
    """Returned by an interceptor's `before`: a person must decide first."""

    def __new__(cls, reason: str) -> Defer: ...
    @property
    def reason(self) -> str: ...

@final
class Pending(Generic[_T]):
    """A call not started yet (what the coroutines of `call`, `respond` and `load` await):
    awaiting it starts it on the awaiting event loop; cancelling the awaiting task stops its
    sandbox. Awaited once."""

    def __await__(self) -> Generator[Any, Any, _T]: ...

_Verdict = None | bool | dict[str, _JSON] | Deny | Defer
"""What an interceptor's `before` returns (or an awaitable of it)."""

_Interceptor = Callable[[dict[str, _JSON]], _Verdict | Awaitable[_Verdict]] | Any
"""A callable run before each call, or an object with `before(call)` and/or `after(call, output)`."""

@disjoint_base
class Tools:
    """Tools a model can call: definitions in every provider format, and calls."""

    @property
    def names(self) -> list[str]: ...
    def definitions(self, format: str | None = None) -> list[dict[str, _JSON]]: ...
    def definition(self, name: str, format: str | None = None) -> dict[str, _JSON] | None: ...
    def call(
        self,
        name: str,
        arguments: Mapping[str, _JSON] | str | None = None,
        *,
        id: str | None = None,
        context: Mapping[str, _JSON] | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> Coroutine[Any, Any, ToolOutput]: ...
    def call_sync(
        self,
        name: str,
        arguments: Mapping[str, _JSON] | str | None = None,
        *,
        id: str | None = None,
        context: Mapping[str, _JSON] | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> ToolOutput: ...
    def respond(self, format: str, message: Mapping[str, _JSON] | Sequence[_JSON]) -> Coroutine[Any, Any, list[dict[str, _JSON]]]: ...
    def respond_sync(self, format: str, message: Mapping[str, _JSON] | Sequence[_JSON]) -> list[dict[str, _JSON]]: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str, /) -> bool: ...

@final
class CodeMode(Tools):
    """Code mode: `search` and `execute`, a Python program calling the tools under one budget."""

    @property
    def callable(self) -> list[str]: ...
    @property
    def must_approve(self) -> list[str]: ...
    def resume(self, call_id: str, resume_token: str, approved: bool) -> Coroutine[Any, Any, ToolOutput]:
        """Resumes a program paused for approval (`error["resume_token"]`) with a person's decision."""
    def resume_sync(self, call_id: str, resume_token: str, approved: bool) -> ToolOutput: ...

@final
class ToolSet(Tools):
    """Some of a runtime's tools for one run, with context, limits, retries and interceptors."""

    def code_mode(self) -> CodeMode: ...

@final
class Runtime(Tools):
    """Loaded tools; each call in a fresh sandbox under its limits."""

    def __new__(
        cls,
        tools_dir: _StrPath | None = None,
        *,
        policy: _StrPath | None = None,
        cache_dir: _StrPath | None = None,
        cache: bool = True,
        builtins: bool = True,
        code_mode: bool = False,
    ) -> Runtime: ...
    @staticmethod
    def load(
        tools_dir: _StrPath | None = None,
        *,
        policy: _StrPath | None = None,
        cache_dir: _StrPath | None = None,
        cache: bool = True,
        builtins: bool = True,
        code_mode: bool = False,
    ) -> Coroutine[Any, Any, Runtime]: ...
    @property
    def diagnostics(self) -> list[str]: ...
    @property
    def calls_in_flight(self) -> int: ...
    def tool_set(
        self,
        *,
        allow: Sequence[str] | None = None,
        deny: Sequence[str] | None = None,
        filter: Callable[[dict[str, _JSON]], bool] | None = None,
        context: Mapping[str, _JSON] | None = None,
        limits: Mapping[str, int] | None = None,
        retry: bool | int | None = None,
        interceptors: Sequence[_Interceptor] = ...,
    ) -> ToolSet: ...
    def code_mode(self) -> CodeMode: ...

def formats() -> list[str]:
    """The provider formats' names, as `definitions(format=...)` takes them."""

def repair(format: str, parameters: Mapping[str, _JSON], arguments: _JSON) -> _JSON:
    """A model's arguments for a strict export, back in the tool's own shape."""

def explain_policy(
    tools_dir: _StrPath | None = None,
    *,
    policy: _StrPath | None = None,
    builtins: bool = True,
    code_mode: bool = False,
    tool: str | None = None,
) -> list[dict[str, Any]]:
    """What each tool can do under the policy, directly and through the tools it may call."""

def check_policy(
    assertions: Sequence[str] = ...,
    *,
    tools_dir: _StrPath | None = None,
    policy: _StrPath | None = None,
    builtins: bool = True,
    code_mode: bool = False,
) -> list[dict[str, Any]]:
    """Each assertion (the policy's and these): whether it holds, and the grants that break it."""

def suggest_rules(denials: _StrPath) -> dict[str, Any]:
    """The narrowest rules that would have allowed the refused requests of a denials file."""
