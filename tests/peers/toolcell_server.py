"""Starting `toolcell serve` for the peer tests: the binary from `TOOLCELL_BIN`, HTTP servers on a
free loopback port whose URL is read from the server's own stderr, and bounded waits and a kill
for every process started here."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

# The line `toolcell serve --transport http` prints on stderr once it listens (the tools may
# still be loading: requests that need them wait).
SERVING = re.compile(r"serving MCP at (http://\S+/mcp)")

# A cold compile of the eight built-in tools takes about 30 s on a 2-core machine.
WARM_TIMEOUT_S = 300
START_TIMEOUT_S = 60


def toolcell_bin() -> str:
    """The binary under test: `TOOLCELL_BIN`, which must name an executable file."""
    path = os.environ.get("TOOLCELL_BIN")
    if not path:
        raise SystemExit(
            "TOOLCELL_BIN is not set: point it at the toolcell binary to test, "
            "e.g. TOOLCELL_BIN=target/debug/toolcell (tests/peers/run sets it)"
        )
    path = str(Path(path).resolve())
    if not os.access(path, os.X_OK):
        raise SystemExit(f"TOOLCELL_BIN={path} is not an executable file; build it with `cargo build -p toolcell-cli`")
    return path


def warm_cache(binary: str, env: dict[str, str]) -> None:
    """Compiles the built-in tools into the cache once (`toolcell list`), so that every server
    started afterwards answers within milliseconds instead of compiling first."""
    subprocess.run([binary, "list"], env=env, check=True, stdout=subprocess.DEVNULL, timeout=WARM_TIMEOUT_S)


class HttpServer:
    """`toolcell serve --transport http --listen 127.0.0.1:0 ARGS...` (or another `listen`), started on entry and
    killed on exit. `url` is the endpoint the server printed; `stderr()` is everything it logged."""

    def __init__(
        self, binary: str, *args: str, env: dict[str, str] | None = None, listen: str = "127.0.0.1:0"
    ) -> None:
        self.command = [binary, "serve", "--transport", "http", "--listen", listen, *args]
        self.env = env
        self.url = ""
        self._lines: list[str] = []
        self._found = threading.Event()
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> HttpServer:
        self._process = subprocess.Popen(
            self.command, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._found.wait(0.05):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(
                    f"`{' '.join(self.command)}` did not print its URL within {START_TIMEOUT_S} s "
                    f"(exit status {self._process.returncode}); stderr:\n{self.stderr()}"
                )
        return self

    def _drain(self) -> None:
        # Keeps reading so that the server never blocks on a full pipe.
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            self._lines.append(line)
            if not self._found.is_set() and (found := SERVING.search(line)):
                self.url = found.group(1)
                self._found.set()

    def stderr(self) -> str:
        return "".join(self._lines)

    def __exit__(self, *_exc: object) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
