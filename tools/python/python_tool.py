"""The `python` standard tool: runs a model's Python program in a fresh interpreter.

Every call gets a new instance of a CPython pre-initialized at build time: nothing one
program does is seen by the next. The sandbox is the host's: no network, no files unless the
operator grants a directory, no environment, no subprocesses or threads, under the call's
fuel, memory and time limits.
"""

# The standard library a program can import: only the modules imported here, at build time,
# are in the component (its interpreter has no files to import others from), and importing
# them again costs a program nothing. Absent on purpose: socket, subprocess, threading's
# threads, ctypes, and zoneinfo (there is no time-zone database; the datetime tool has one).
import sys
import math  # noqa: F401
import statistics  # noqa: F401
import re  # noqa: F401
import datetime  # noqa: F401
import collections  # noqa: F401
import itertools  # noqa: F401
import functools  # noqa: F401
import fractions  # noqa: F401
import decimal  # noqa: F401
import string  # noqa: F401
import textwrap  # noqa: F401
import csv  # noqa: F401
import heapq  # noqa: F401
import bisect  # noqa: F401
import dataclasses  # noqa: F401
import typing  # noqa: F401
import io  # noqa: F401
import copy  # noqa: F401
import operator  # noqa: F401
import pprint  # noqa: F401
import enum  # noqa: F401
import base64  # noqa: F401
import hashlib  # noqa: F401
import uuid  # noqa: F401
import calendar  # noqa: F401
import difflib  # noqa: F401
import unicodedata  # noqa: F401
import html  # noqa: F401
import urllib.parse  # noqa: F401
import array  # noqa: F401
import struct  # noqa: F401
import time  # noqa: F401
import random  # noqa: F401
import json  # noqa: F401
import fnmatch  # noqa: F401
import shlex  # noqa: F401
import graphlib  # noqa: F401
import secrets  # noqa: F401
import gzip  # noqa: F401
import zlib  # noqa: F401
import binascii  # noqa: F401
import ipaddress  # noqa: F401
import colorsys  # noqa: F401
import hmac  # noqa: F401
import html.parser  # noqa: F401
import xml.etree.ElementTree  # noqa: F401
import sqlite3  # noqa: F401
import queue  # noqa: F401
import pathlib  # noqa: F401
import glob  # noqa: F401
import types  # noqa: F401
import numbers  # noqa: F401
import cmath  # noqa: F401
import contextlib  # noqa: F401
import abc  # noqa: F401
import weakref  # noqa: F401
import tomllib  # noqa: F401
import reprlib  # noqa: F401
from dataclasses import dataclass
from typing import Annotated, Any

import _toolcell_runner as runner
import _toolcell_tools as code_mode
from toolcell_tool import InvalidArguments, Length, tool

MAX_CODE_CHARS = 100_000


@dataclass
class ProgramError:
    """The exception that ended the program.

    Attributes:
        type: The exception's type, e.g. `ZeroDivisionError`.
        message: The exception's message.
        line: The line of `code` it was raised from, when it was raised there.
        traceback: The traceback, of the program's own lines only.
    """

    type: str
    message: str
    line: int | None
    traceback: str


@dataclass
class ProgramRun:
    """What the program did.

    Attributes:
        ok: Whether it finished without an exception.
        stdout: What it printed (the first 64 KiB of characters).
        stderr: What it wrote to stderr (the first 64 KiB of characters).
        value: The value of the final expression, when the code ends with one that is not
            None: as JSON when it is plain data (numbers, strings, lists, dicts), else its repr.
        value_type: The final expression's Python type, e.g. `int`, `datetime`.
        error: The exception that ended it, when one did.
        dropped_chars: Characters of stdout and stderr beyond the limit, dropped.
    """

    ok: bool
    stdout: str
    stderr: str
    value: Any
    value_type: str | None
    error: ProgramError | None
    dropped_chars: int


@tool(title="Python", read_only=True, idempotent=True, open_world=False, output_schema=True)
def python(
    code: Annotated[str, Length(min=1, max=MAX_CODE_CHARS)],
    inputs: Any = None,
) -> ProgramRun:
    """Run a Python 3 program in a fresh sandboxed interpreter; returns its stdout, stderr
    and the value of its final expression (as a notebook shows it), or the exception that
    ended it with a traceback. Use it to compute, parse, transform and summarize data. The
    common pure-Python standard library is there (math, statistics, re, json, datetime,
    collections, itertools, decimal, fractions, csv, sqlite3 in memory, random, ...); there
    is no network, no files, no subprocess, no threads, no time-zone database, and no
    packages beyond these. `random` is seeded from the call, so a run repeats. Tools the operator allows are functions of `tools`,
    e.g. `tools.calculator(expression="2 + 2")`; `print(tools)` lists them.

    Args:
        code: The program. Its final line, if an expression, is the result's `value`.
        inputs: Data for the program, bound to the variable `inputs` (any JSON value), so it
            need not be pasted into the code.
    """
    try:
        body, final = runner.compile_program(code)
    except runner.ProgramSyntaxError as err:
        raise InvalidArguments(err.message) from None
    runner.reseed(runner.seed_for(code, inputs))
    names = {"inputs": inputs, "tools": code_mode.tools(), "ToolCallError": code_mode.ToolCallError}
    # In the component, the program's prints also go to the component's stdout as they are
    # made: the host streams them to a caller that asked for progress.
    echo = sys.__stdout__ if sys.platform == "wasi" else None
    outcome = runner.run(code, body, final, names, echo=echo)
    error = ProgramError(**outcome.error) if outcome.error is not None else None
    return ProgramRun(
        ok=error is None,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        value=outcome.value,
        value_type=outcome.value_type,
        error=error,
        dropped_chars=outcome.dropped_chars,
    )
