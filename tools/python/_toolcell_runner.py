"""Runs one program: compiles it (a syntax error is the caller's to fix), runs it with its
output captured and bounded, and reports the value of its final expression or the exception
that ended it, with a traceback of the program's own lines only.

Whatever the program does, its run is its result: showing its value or its exception runs
its code too (`__repr__`, `__str__`, a `__class__` property, ...), and may raise anything,
`SystemExit` and `KeyboardInterrupt` included; each such step falls back to a description
that runs none of it. `os._exit` and `os.abort`, which would end the interpreter (and the
call, as the tool's crash, with the program's output), end the program instead."""

import _imp
import ast
import builtins
import hashlib
import json
import linecache
import math
import operator
import os
import random
import reprlib
import sys
import traceback
import types
from dataclasses import dataclass

# The name the program's code goes by in tracebacks: never a host or build path.
FILENAME = "<program>"
# What a program may print to each of stdout and stderr before the rest is dropped.
MAX_STREAM_CHARS = 64 * 1024
# Traceback entries kept (the innermost): a RecursionError has a thousand.
MAX_TRACEBACK_ENTRIES = 12


# What programs made, never freed: the instance is thrown away after the call anyway, and
# freeing a deeply nested value (a linked list of 100,000 tuples) recurses in C, past the
# wasm stack, where CPython's recursion checks (of its other, linear-memory stack) do not see.
_KEPT = []


class ProgramSyntaxError(Exception):
    """The code does not compile; `message` says where and why, for the model."""

    def __init__(self, message, line, column):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass
class Outcome:
    """What running a program came to, as plain data."""

    stdout: str
    stderr: str
    dropped_chars: int
    # The final expression's value as JSON, or its repr (None: no value).
    value: object
    value_type: str | None
    # What ended the program: {"type", "message", "line", "traceback"} (None: it finished).
    error: dict | None


class BoundedStream:
    """A text stream that keeps its first `limit` characters and counts the rest. What it
    keeps also goes to `echo` (the component's own stdout), where the host can stream it to
    a caller who asked for progress while the program runs."""

    def __init__(self, limit, echo=None):
        self.limit = limit
        self.echo = echo
        self.parts = []
        self.kept = 0
        self.dropped = 0
        self.frozen = False  # once the program exited: nothing written after it is seen

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        text = str.__str__(text)  # a str subclass's own len() and slicing are the program's
        if self.frozen:
            return len(text)
        room = self.limit - self.kept
        kept = text if len(text) <= room else text[:room]
        self.parts.append(kept)
        self.kept += len(kept)
        self.dropped += len(text) - len(kept)
        if kept and self.echo is not None:
            self._echo(kept)
        return len(text)

    def _echo(self, text):
        try:
            self.echo.write(text)
            if "\n" in text:
                self.echo.flush()
        except Exception:  # the echo is a courtesy: the program's output is what is kept
            self.echo = None

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True

    def text(self):
        return "".join(self.parts)


def compile_program(code):
    """(body, final expression or None), both code objects; raises ProgramSyntaxError."""
    try:
        tree = ast.parse(code, FILENAME, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, FILENAME, "exec")
        final = compile(last, FILENAME, "eval") if last is not None else None
    except SyntaxError as err:
        raise ProgramSyntaxError(_describe_syntax_error(err), err.lineno, err.offset) from None
    except ValueError as err:  # e.g. a NUL character in the source
        raise ProgramSyntaxError(f"`code` cannot be compiled: {err}", None, None) from None
    except (MemoryError, RecursionError) as err:  # the parser's or compiler's nesting limit
        raise ProgramSyntaxError(
            f"`code` nests too deeply to compile ({err}): use fewer nested brackets or "
            "expressions, e.g. build a deep value in a loop",
            None,
            None,
        ) from None
    return body, final


def _describe_syntax_error(err):
    kind = type(err).__name__
    where = f"line {err.lineno}, column {err.offset}" if err.lineno else "an unknown place"
    message = f"`code` has a {kind} at {where}: {err.msg}."
    if err.text:
        line = err.text.rstrip("\n")
        caret = " " * max((err.offset or 1) - 1, 0) + "^"
        message += f"\n    {line}\n    {caret}"
    return message  # the host adds what to do: change the arguments and call again


def seed_for(code, inputs):
    """A seed for `random` from the call's arguments: the same call repeats exactly."""
    digest = hashlib.sha256(code.encode("utf-8", "surrogatepass"))
    digest.update(b"\0" + json.dumps(inputs, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:8], "big")


def run(code, body, final, names, echo=None):
    """Runs compiled `body` then `final` with the globals `names`, and shows what it came to
    (its value or the exception that ended it, or its exit) with its output captured
    throughout; returns an Outcome. Nothing the program does escapes. What it prints (as
    much as is kept) is also written to `echo` as it runs."""
    global _RUNNING
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    stdout, stderr = BoundedStream(MAX_STREAM_CHARS, echo=echo), BoundedStream(MAX_STREAM_CHARS)
    namespace = {"__name__": "__main__", "__builtins__": builtins, **names}
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    running = _RUNNING = _Run(stdout, stderr)
    try:
        has_value, value, exception = _execute(body, final, namespace)
        if issubclass(type(exception), MemoryError):
            # Free what the program made, so formatting the error has memory.
            _guarded(namespace.clear, None)
        else:
            _KEPT.append((namespace, value, exception))
        shown, value_type = None, None
        if has_value:
            value_type = type_name(value)
            shown = _guarded(lambda: _show(value), f"<{value_type} that could not be shown>")
        error = describe_exception(exception) if exception is not None else None
        if issubclass(type(exception), MemoryError):
            BaseException.with_traceback(exception, None)  # and the frames' locals
        if running.exit is not None:
            # It exited, during its run or while its value or exception was shown: what
            # came after is not its outcome.
            shown, value_type, error = None, None, running.exit.error()
    finally:
        sys.stdout, sys.stderr = saved
        _RUNNING = None
    return Outcome(
        stdout=stdout.text(),
        stderr=stderr.text(),
        dropped_chars=stdout.dropped + stderr.dropped,
        value=shown,
        value_type=value_type,
        error=error,
    )


def _execute(body, final, namespace):
    """(has a value, the value, the exception that ended the program or None)."""
    try:
        exec(body, namespace)
        if final is not None:
            value = eval(final, namespace)
            return value is not None, value, None
    except SystemExit as exit_:
        if not _exits_cleanly(exit_):
            return False, None, exit_
    except BaseException as err:  # noqa: BLE001 - the program's failure is the result
        return False, None, err
    return False, None, None


def _exits_cleanly(exit_):
    """Whether a SystemExit is `sys.exit()`, `sys.exit(0)` or `sys.exit(None)`."""
    try:
        code = exit_.code  # a property of a subclass is the program's code
    except BaseException:  # noqa: BLE001
        return False
    return code is None or (issubclass(type(code), int) and int.__int__(code) == 0)


def _guarded(step, fallback):
    """`step()`, or `fallback` when the program's code it runs raises anything."""
    try:
        return step()
    except BaseException:  # noqa: BLE001 - whatever it raises, the outcome is shown
        return fallback


_TYPE_NAME = type.__dict__["__name__"].__get__


def type_name(value):
    """The name of `value`'s type, read past any `__name__` or `__class__` of the program's."""
    return str.__str__(_TYPE_NAME(type(value)))


def _text(exception):
    """str(exception), or what CPython prints when it fails."""
    try:
        return str.__str__(str(exception))
    except BaseException:  # noqa: BLE001
        return "<exception str() failed>"


def describe_exception(exception):
    """The exception that ended the program: its type, message, the program line it was
    raised from, and a traceback of the program's own frames (innermost last, at most a
    dozen). Each part falls back to one made without the program's code."""
    kind, message = type_name(exception), _text(exception)
    tb = BaseException.__traceback__.__get__(exception)
    frames = _guarded(lambda: _own_frames(traceback.extract_tb(tb)), None)
    if frames is None:
        frames = _walk(tb)
    last = _guarded(lambda: "".join(traceback.format_exception_only(type(exception), exception)), None)
    if last is None:
        last = f"{kind}: {message}\n" if message else f"{kind}\n"
    return {
        "type": kind,
        "message": message,
        "line": frames[-1].lineno if frames else None,
        "traceback": _traceback_text(frames, str.__str__(last)),
    }


def _own_frames(frames):
    return [frame for frame in frames if type(frame.filename) is str and frame.filename == FILENAME]


def _walk(tb):
    """The program's frames of a traceback, read from the frames themselves (no source lines
    are looked up but the program's own)."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if type(code.co_filename) is str and code.co_filename == FILENAME:
            frames.append(traceback.FrameSummary(FILENAME, tb.tb_lineno, code.co_name, lookup_line=False))
        tb = tb.tb_next
    return frames


def _stack(frame):
    """The program's frames on the stack from `frame` outward, outermost first."""
    frames = []
    while frame is not None:
        code = frame.f_code
        if type(code.co_filename) is str and code.co_filename == FILENAME:
            frames.append(traceback.FrameSummary(FILENAME, frame.f_lineno, code.co_name, lookup_line=False))
        frame = frame.f_back
    return frames[::-1]


def _traceback_text(frames, last):
    lines = ["Traceback (most recent call last):\n"]
    if len(frames) > MAX_TRACEBACK_ENTRIES:
        lines.append(f"  ... {len(frames) - MAX_TRACEBACK_ENTRIES} earlier calls left out ...\n")
        frames = frames[-MAX_TRACEBACK_ENTRIES:]
    lines += _guarded(lambda: traceback.format_list(frames), [])
    lines.append(last)
    return "".join(lines).replace('File "<program>", ', "")


# The exits that skip Python. In a program, each ends the program, as `sys.exit` does: the
# runner reports its status with the output so far, and nothing the program does after it
# (should it catch the exception that stops it) is seen.


class ProgramExited(BaseException):
    """Raised where a program called os._exit or os.abort, to stop it."""


class _Exit:
    """A program's call of os._exit(status) (status None: os.abort())."""

    def __init__(self, status, frames):
        self.status = status
        self.frames = frames

    def error(self):
        """The error it is reported as (None: it exited with status 0)."""
        if self.status == 0:
            return None
        message = "os.abort() ended the program" if self.status is None else str(self.status)
        return {
            "type": "SystemExit",
            "message": message,
            "line": self.frames[-1].lineno if self.frames else None,
            "traceback": _traceback_text(self.frames, f"SystemExit: {message}\n"),
        }


class _Run:
    """The program running now: its output, and its exit once it called one."""

    def __init__(self, stdout, stderr):
        self.stdout = stdout
        self.stderr = stderr
        self.exit = None


_RUNNING = None


def _end(status, frame):
    running = _RUNNING
    if running is None:
        # Outside a run (a program's object finalized later): never the real exit.
        raise SystemExit(status)
    if running.exit is None:
        running.stdout.frozen = running.stderr.frozen = True
        running.exit = _Exit(status, _guarded(lambda: _stack(frame), []))
    raise ProgramExited(status)


def _exit(status):
    """Exit with status `status`: in a program, ends the program (see the runner)."""
    status = int.__int__(operator.index(status))  # an int subclass's own methods are the program's
    if not -(2**31) <= status < 2**31:
        raise OverflowError("Python int too large to convert to C int")
    _end(status, sys._getframe(1))


_ABORT = os.abort


def abort():
    """Abort: in a program, ends the program (see the runner); elsewhere the real abort."""
    if _RUNNING is None:
        _ABORT()  # the SDK's, when a tool runs out of memory
    else:
        _end(None, sys._getframe(1))


def _replace_exits(module):
    module._exit = _exit
    module.abort = abort


_CREATE_BUILTIN = _imp.create_builtin


def _create_builtin(spec):
    """_imp.create_builtin, with the exits above in a `posix` made afresh (imported again
    once deleted from sys.modules, or from its spec), as in the one imported at start."""
    module = _CREATE_BUILTIN(spec)
    if type(module) is types.ModuleType and "_exit" in module.__dict__:
        _replace_exits(module)
    return module


def _install_exits():
    """Puts the exits above in place of the interpreter's, in `os` and in the module it
    takes them from (`posix`; `from os import _exit`, `importlib.reload(os)`), and in any
    `posix` created later."""
    _replace_exits(os)
    _replace_exits(sys.modules[os.name])
    _imp.create_builtin = _create_builtin


_install_exits()


# The repr of a final value that is not plain data. Its recursion into lists, dicts and the
# like is Python's and stops at a depth, where the builtin repr recurses in C and can
# overflow the wasm stack on a deeply nested value.
_REPR = reprlib.Repr()
_REPR.maxlevel = 50
for _kind in ("tuple", "list", "array", "dict", "set", "frozenset", "deque"):
    setattr(_REPR, f"max{_kind}", 10_000)
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = MAX_STREAM_CHARS


def _show(value):
    """The value as JSON when it is plain data, else its repr, bounded."""
    shown, plain = json_form(value)
    if plain:
        return shown
    try:
        text = str.__str__(_REPR.repr(value))
    except BaseException as err:  # noqa: BLE001 - a broken __repr__ is the program's
        return f"<{type_name(value)} whose repr failed: {type_name(err)}>"
    return text if len(text) <= MAX_STREAM_CHARS else text[:MAX_STREAM_CHARS] + "…"


def json_form(value):
    """(the value as JSON, True) when it has a plain JSON form: None, booleans, numbers,
    strings, and lists, tuples and dicts with string keys of these, nested at most 100 deep.
    Else (None, False): the caller shows its repr. Reads subclasses of these by their
    builtin type's methods: none of the program's code runs (no `__class__`, `__iter__`,
    `items`, `__int__` or `__str__` of its own)."""
    return (_plain(value, 100), True) if _is_plain(value, 100) else (None, False)


def _is_plain(value, depth):
    kind = type(value)
    if value is None or issubclass(kind, (bool, int, str)):
        return True
    if issubclass(kind, float):
        return math.isfinite(float.__float__(value))
    if depth == 0:
        return False
    if issubclass(kind, (list, tuple)):
        return all(_is_plain(item, depth - 1) for item in _items(value))
    if issubclass(kind, dict):
        return all(issubclass(type(key), str) and _is_plain(item, depth - 1) for key, item in dict.items(value))
    return False


def _items(sequence):
    return list.__iter__(sequence) if issubclass(type(sequence), list) else tuple.__iter__(sequence)


def _plain(value, depth):
    """The value with subclasses (int, str, float, list, tuple, dict) made plain."""
    kind = type(value)
    if value is None or kind is bool:
        return value
    for base, plain in ((int, int.__int__), (float, float.__float__), (str, str.__str__)):
        if issubclass(kind, base):
            return plain(value)
    if issubclass(kind, (list, tuple)):
        return [_plain(item, depth - 1) for item in _items(value)]
    return {str.__str__(key): _plain(item, depth - 1) for key, item in dict.items(value)}


def reseed(seed):
    random.seed(seed)
