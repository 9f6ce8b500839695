"""Runs one program: compiles it (a syntax error is the caller's to fix), runs it with its
output captured and bounded, and reports the value of its final expression or the exception
that ended it, with a traceback of the program's own lines only."""

import ast
import builtins
import hashlib
import json
import linecache
import math
import random
import sys
import traceback
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
    """What running a program came to."""

    stdout: str
    stderr: str
    dropped_chars: int
    has_value: bool
    value: object
    exception: BaseException | None
    traceback: str
    line: int | None


class BoundedStream:
    """A text stream that keeps its first `limit` characters and counts the rest."""

    def __init__(self, limit):
        self.limit = limit
        self.parts = []
        self.kept = 0
        self.dropped = 0

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.limit - self.kept
        if len(text) <= room:
            self.parts.append(text)
            self.kept += len(text)
        else:
            self.parts.append(text[:room])
            self.kept = self.limit
            self.dropped += len(text) - room
        return len(text)

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


def run(code, body, final, names):
    """Runs compiled `body` then `final` with the globals `names`; returns an Outcome."""
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    stdout, stderr = BoundedStream(MAX_STREAM_CHARS), BoundedStream(MAX_STREAM_CHARS)
    namespace = {"__name__": "__main__", "__builtins__": builtins, **names}
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    has_value, value, exception = False, None, None
    try:
        exec(body, namespace)
        if final is not None:
            value = eval(final, namespace)
            has_value = value is not None
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            exception = exit_
    except BaseException as err:  # noqa: BLE001 - the program's failure is the result
        exception = err
    finally:
        sys.stdout, sys.stderr = saved
    if isinstance(exception, MemoryError):
        namespace.clear()  # free what the program made, so formatting the error has memory
    else:
        _KEPT.append((namespace, value, exception))
    text, line = format_exception(exception) if exception is not None else ("", None)
    if isinstance(exception, MemoryError):
        exception.__traceback__ = None  # and the frames' locals
    return Outcome(
        stdout=stdout.text(),
        stderr=stderr.text(),
        dropped_chars=stdout.dropped + stderr.dropped,
        has_value=has_value,
        value=value,
        exception=exception,
        traceback=text,
        line=line,
    )


def format_exception(exception):
    """The traceback of the program's own frames (innermost last, at most a dozen) and the
    exception, and the program line it was raised from."""
    frames = [frame for frame in traceback.extract_tb(exception.__traceback__) if frame.filename == FILENAME]
    line = frames[-1].lineno if frames else None
    lines = ["Traceback (most recent call last):\n"]
    if len(frames) > MAX_TRACEBACK_ENTRIES:
        lines.append(f"  ... {len(frames) - MAX_TRACEBACK_ENTRIES} earlier calls left out ...\n")
        frames = frames[-MAX_TRACEBACK_ENTRIES:]
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exception), exception)
    return "".join(lines).replace('File "<program>", ', ""), line


def json_form(value):
    """(the value as JSON, True) when it has a plain JSON form: None, booleans, numbers,
    strings, and lists, tuples and dicts with string keys of these, nested at most 100 deep.
    Else (None, False): the caller shows its repr."""
    return (_plain(value, 100), True) if _is_plain(value, 100) else (None, False)


def _is_plain(value, depth):
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if depth == 0:
        return False
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item, depth - 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_plain(item, depth - 1) for key, item in value.items())
    return False


def _plain(value, depth):
    """The value with subclasses (bool, int, str, float, list, tuple, dict) made plain."""
    if value is None or isinstance(value, bool):
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth - 1) for item in value]
    return {str(key): _plain(item, depth - 1) for key, item in value.items()}


def reseed(seed):
    random.seed(seed)
