"""The `toolcell` command the wheel installs: the binary itself (as ruff and uv ship theirs,
no Python in between), of the package's version, serving MCP over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import toolcell

BINARY = Path(sys.executable).parent / "toolcell"


def test_the_wheel_installs_the_binary_of_its_version() -> None:
    assert BINARY.read_bytes()[:4] == b"\x7fELF"
    version = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith(f"toolcell {toolcell.__version__} ")


def test_the_wheels_binary_serves_mcp_over_stdio() -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "calculator", "arguments": {"expression": "6 * 7"}}},
    ]
    with subprocess.Popen([str(BINARY), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None
        for request in requests:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
        answers = {}
        while 2 not in answers:
            message = json.loads(server.stdout.readline())
            answers[message.get("id")] = message
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    assert answers[2]["result"]["structuredContent"] == {"value": 42.0}
