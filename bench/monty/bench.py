"""Monty (pydantic-monty) as its users run it, timed from inside the process. Reads
{"programs": {name: code}, "calls": n, "cold": m} on stdin and prints JSON: the version; `cold`
cold starts (a new pool of workers, a session and the first `print(1)`); and per program the
milliseconds of `calls` runs, each in a fresh session checked out of one warm pool (Monty's
isolation between programs), or why Monty could not run it (it runs a subset of Python).
Also times each program inside this process's own CPython (`exec`, no process start), the
native figure the python tool's loop is held against."""

import json
import os
import sys
import time
from importlib.metadata import version

import pydantic_monty


def timed(action):
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1e3


def cold_start():
    with pydantic_monty.Monty() as pool, pool.checkout() as session:
        session.feed_run("print(1)")


def fresh_session(pool, code):
    with pool.checkout() as session:
        session.feed_run(code)


def native(code):
    exec(compile(code, "<program>", "exec"), {"__name__": "__main__"})


def main():
    request = json.load(sys.stdin)
    # Everything the programs print (Monty's workers share this stdout) goes nowhere; the
    # JSON goes to the real stdout, kept aside.
    out = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sys.stdout = open(1, "w", closefd=False)
    result = {
        "version": version("pydantic-monty"),
        "cold_start_ms": [timed(cold_start) for _ in range(request["cold"])],
        "fresh_session": {},
        "unsupported": {},
        "native": {"version": sys.version.split()[0], "in_process_ms": {}},
    }
    with pydantic_monty.Monty() as pool:
        for name, code in request["programs"].items():
            try:
                fresh_session(pool, code)  # the first run warms the pool up
            except pydantic_monty.MontyError as err:
                result["unsupported"][name] = str(err).splitlines()[0][:200]
                continue
            result["fresh_session"][name] = [timed(lambda: fresh_session(pool, code)) for _ in range(request["calls"])]
    for name, code in request["programs"].items():
        native(code)
        result["native"]["in_process_ms"][name] = [timed(lambda: native(code)) for _ in range(request["calls"])]
    sys.stdout.flush()
    json.dump(result, out)
    out.flush()


if __name__ == "__main__":
    main()
