"""Arize Phoenix, the OpenInference-aware OTLP receiver, started once for these tests on
loopback ports with a throwaway data folder, and its REST API to read spans back."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).parent
# Phoenix takes 16-20 s to start on a 2-core machine (database migrations, then the app).
START_TIMEOUT_S = 180
# Phoenix answers an export before it stores the spans; they appear within about 0.2 s.
VISIBLE_TIMEOUT_S = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Phoenix:
    def __init__(self, http_port: int, grpc_port: int) -> None:
        self.base = f"http://127.0.0.1:{http_port}"
        self.grpc = f"http://127.0.0.1:{grpc_port}"

    def get(self, path: str, **query: str) -> dict:
        url = f"{self.base}{path}?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def spans(self, project: str, trace_id: str, count: int) -> list[dict]:
        """The spans of one trace in one project, once `count` of them are stored."""
        return self.find_spans(project, count, trace_id=trace_id)

    def find_spans(self, project: str, count: int, **query: str) -> list[dict]:
        """The spans of one project that match `query`, once `count` of them are stored:
        Phoenix stores what it receives a moment later, more so on a busy machine."""
        deadline = time.monotonic() + VISIBLE_TIMEOUT_S
        spans: list[dict] = []
        while time.monotonic() < deadline:
            try:
                spans = self.get(f"/v1/projects/{project}/spans", limit="100", **query)["data"]
            except urllib.error.HTTPError as error:
                if error.code != 404:  # 404 until the project's first span is stored
                    raise
            if len(spans) >= count:
                return spans
            time.sleep(0.1)
        raise AssertionError(f"Phoenix holds {len(spans)} of {count} spans matching {query} in {project}: {spans}")


@pytest.fixture(scope="session")
def phoenix():
    http_port, grpc_port = free_port(), free_port()
    with tempfile.TemporaryDirectory(prefix="phoenix-") as work:
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": work,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(http_port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        }
        log = open(Path(work) / "phoenix.log", "wb")
        server = subprocess.Popen([sys.executable, str(HERE / "serve_phoenix.py")], env=env, stdout=log, stderr=log)
        try:
            phoenix = Phoenix(http_port, grpc_port)
            wait_until_healthy(phoenix, server, Path(work) / "phoenix.log")
            yield phoenix
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=20)
            log.close()


def wait_until_healthy(phoenix: Phoenix, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"Phoenix exited with {server.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{phoenix.base}/healthz", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise AssertionError(f"Phoenix did not answer /healthz within {START_TIMEOUT_S} s:\n{log.read_text()[-4000:]}")
