"""The cost of a tool call from Python: in process (the `toolcell` wheel) against the same call
through `toolcell serve` over stdio with the official MCP Python SDK, the way a Python agent
reaches toolcell without the package. Both sides use the same compile cache and the binary the
wheel installed, after warm-up calls; medians of N calls of `calculator` one after another, and
of 8 at once.

Run with the Python of a venv where the wheel and `mcp` are installed (bench/run --python-package
makes one). Not a test: the machine's load moves every figure. Prints Markdown and writes JSON
(--json PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import toolcell

ARGUMENTS = {"expression": "2 * (3 + 4)"}


def per_call_sync(runtime: toolcell.Runtime, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        out = runtime.call_sync("calculator", ARGUMENTS)
        times.append(time.perf_counter() - start)
        assert out.value == {"value": 14.0}, out
    return times


async def per_call_async(runtime: toolcell.Runtime, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        out = await runtime.call("calculator", ARGUMENTS)
        times.append(time.perf_counter() - start)
        assert out.value == {"value": 14.0}, out
    return times


async def batches_async(runtime: toolcell.Runtime, n: int, width: int = 8) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        outs = await asyncio.gather(*(runtime.call("calculator", ARGUMENTS) for _ in range(width)))
        times.append(time.perf_counter() - start)
        assert all(out.value == {"value": 14.0} for out in outs)
    return times


async def over_mcp(binary: str, n: int, width: int = 8) -> tuple[list[float], list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=binary, args=["serve"], env=dict(os.environ))
    async with Client(server, mode="legacy", read_timeout_seconds=60) as client:
        for _ in range(5):
            await client.call_tool("calculator", ARGUMENTS)
        one = []
        for _ in range(n):
            start = time.perf_counter()
            result = await client.call_tool("calculator", ARGUMENTS)
            one.append(time.perf_counter() - start)
            assert not result.is_error and result.structured_content == {"value": 14.0}, result
        many = []
        for _ in range(max(n // 8, 5)):
            start = time.perf_counter()
            results = await asyncio.gather(*(client.call_tool("calculator", ARGUMENTS) for _ in range(width)))
            many.append(time.perf_counter() - start)
            assert all(not r.is_error for r in results)
    return one, many


def median_us(times: list[float]) -> float:
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500, help="calls per measurement (default 500)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    n = args.samples
    binary = str(Path(sys.executable).parent / "toolcell")

    toolcell.Runtime()  # compiles what the cache lacks (the extension's engine has entries of its own)
    start = time.perf_counter()
    runtime = toolcell.Runtime()
    load_ms = (time.perf_counter() - start) * 1e3
    per_call_sync(runtime, 20)

    rows: dict[str, float] = {
        "in process, call_sync": median_us(per_call_sync(runtime, n)),
        "in process, await call": median_us(asyncio.run(per_call_async(runtime, n))),
        "in process, 8 at once (asyncio.gather), per batch": median_us(
            asyncio.run(batches_async(runtime, max(n // 8, 5)))
        ),
    }
    one, many = asyncio.run(over_mcp(binary, n))
    rows["toolcell serve over stdio (MCP SDK call_tool)"] = median_us(one)
    rows["toolcell serve over stdio, 8 at once, per batch"] = median_us(many)

    print(f"runtime of the 8 standard tools from the compile cache: {load_ms:.0f} ms\n")
    print("| a `calculator` call from Python | median |")
    print("|---|---:|")
    for name, us in rows.items():
        print(f"| {name} | {us:,.0f} µs |")
    stdio = rows["toolcell serve over stdio (MCP SDK call_tool)"]
    print(f"\nover stdio / in process: {stdio / rows['in process, call_sync']:.1f}x call_sync, "
          f"{stdio / rows['in process, await call']:.1f}x await call")
    if args.json:
        args.json.write_text(json.dumps({"samples": n, "load_ms": load_ms, "median_us": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
