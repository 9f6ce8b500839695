"""Fixtures for the tests of the installed `toolcell` wheel (not the source tree: these tests
run against what `pip install` put in the venv)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable
from pathlib import Path

import pytest

import toolcell

ROOT = Path(__file__).resolve().parents[3]


def guest(name: str) -> Path:
    """A test guest (tests/guests/examples) as the toolcell-tests crate's build script made it
    into a component, in its OUT_DIR: the newest build's."""
    built = sorted(
        (ROOT / "target" / "debug" / "build").glob(f"toolcell-tests-*/out/guests/{name}.wasm"),
        key=lambda path: path.stat().st_mtime,
    )
    if not built:
        raise FileNotFoundError(
            f"no test guest {name}.wasm under target/debug/build/toolcell-tests-*/out/guests: "
            "run `cargo test --workspace --no-run` first, which builds them"
        )
    return built[-1]


@pytest.fixture(scope="session", autouse=True)
def _package_is_the_installed_wheel() -> None:
    # Tests of a source tree would prove nothing about the wheel.
    assert "site-packages" in toolcell.__file__, toolcell.__file__
    assert os.environ.get("TOOLCELL_CACHE_DIR"), "set TOOLCELL_CACHE_DIR (a warm compile cache) for these tests"


@pytest.fixture(scope="session")
def runtime() -> toolcell.Runtime:
    """The standard tools."""
    return toolcell.Runtime()


@pytest.fixture(scope="session")
def guests_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tools folder with the test guests `echo` (echoes its arguments and host context) and
    `sleeper` (blocks a minute in a host call), whose policy gives `sleeper` two minutes: a
    call's own limits only lower the tool's, and a sleeper stopped by the default 5 s would
    hide a cancellation that stops nothing."""
    folder = tmp_path_factory.mktemp("tools")
    for name in ("echo", "sleeper"):
        shutil.copy(guest(name), folder / f"{name}.wasm")
    (folder / "toolcell.toml").write_text("[tools.sleeper.limits]\ntimeout_ms = 120_000\n")
    return folder


@pytest.fixture(scope="session")
def guests(guests_dir: Path) -> toolcell.Runtime:
    """The test guests and the standard tools, code mode on."""
    return toolcell.Runtime(guests_dir, code_mode=True)


async def cancel_while_running(runtime: toolcell.Runtime, work: Awaitable[object], calls: int) -> None:
    """Starts `work`, waits until `calls` calls of it run, cancels the task awaiting it, and
    checks that no call is left running (the sandboxes are dropped with the calls' futures;
    the calls would otherwise run for their minute)."""
    task = asyncio.ensure_future(work)
    while runtime.calls_in_flight < calls:
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the cancelled task finished")
    for _ in range(500):
        if runtime.calls_in_flight == 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{runtime.calls_in_flight} calls still running 5 s after their task was cancelled")
