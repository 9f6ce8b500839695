"""What the registry peer tests share: the test guests `cargo test` built, a real OCI registry
(Debian's `docker-registry`, the CNCF distribution registry) on 127.0.0.1, and the small waits
around starting servers."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 60


def guest(name: str) -> Path:
    """A test guest as `cargo test --workspace` built it: the toolcell-tests build script copies
    each into its OUT_DIR's `guests/` (the newest build, if there are several)."""
    built = sorted(ROOT.glob(f"target/debug/build/toolcell-tests-*/out/guests/{name}"), key=lambda path: path.stat().st_mtime)
    if not built:
        raise SystemExit(f"no test guest {name} under target/debug/build: run `cargo test --workspace --no-run` first")
    return built[-1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(ready, what: str, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout} s")
        time.sleep(0.05)


def answers(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=1).status_code == 200
    except httpx2.HTTPError:
        return False


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`HOST:PORT` of a registry of this module's own, stopped after it (or after 15 minutes)."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise SystemExit("docker-registry is not installed: apt-get install docker-registry (.ci/run does)")
    folder = tmp_path_factory.mktemp("registry")
    port = free_port()
    config = folder / "config.yml"
    config.write_text(
        f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {folder / 'storage'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    process = subprocess.Popen(["timeout", "900", binary, "serve", str(config)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/v2/"), "the registry answers")
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=15)
