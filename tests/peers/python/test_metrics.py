"""`GET /metrics` of `toolcell serve --transport http`, read by Prometheus' own tooling:
`promtool check metrics` (from Debian's `prometheus` package, which `tests/peers/run` unpacks
and names in `PROMTOOL`) parses the text format and lints it against Prometheus' naming rules.
It must pass with no warning at all."""

from __future__ import annotations

import os
import subprocess
import urllib.error
import urllib.request

import pytest
from mcp.shared.exceptions import MCPError

from conftest import TOKEN, bearer_client
from toolcell_server import HttpServer

pytestmark = pytest.mark.anyio

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def promtool() -> str:
    path = os.environ.get("PROMTOOL")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(
            "PROMTOOL does not name Prometheus' promtool: run tests/peers/run, which unpacks it from Debian's "
            "`prometheus` package into target/peers/promtool, or set PROMTOOL=/path/to/promtool"
        )
    return path


def scrape(base: str, token: str | None) -> tuple[int, str, str]:
    """`GET {base}/metrics`: the status, the content type and the body."""
    request = urllib.request.Request(f"{base}/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers["content-type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read().decode()


async def test_promtool_reads_and_lints_the_metrics_with_no_warning(toolcell):
    # A server of its own, so that the counts are this test's.
    with HttpServer(toolcell.binary, env={**toolcell.env, "TOOLCELL_TOKEN": TOKEN}) as server:
        # Calls of every outcome first, so that every family has samples: a success, a
        # failure with an error kind, and a tool that does not exist.
        async with bearer_client(server.url, TOKEN, "legacy") as client:
            assert not (await client.call_tool("calculator", {"expression": "6 * 7"})).is_error
            assert (await client.call_tool("calculator", {"expression": "6 *"})).is_error
            with pytest.raises(MCPError):
                await client.call_tool("calculater", {"expression": "1"})
        base = server.url.removesuffix("/mcp")
        assert scrape(base, None)[0] == 401, "the token protects /metrics as it does /mcp"
        status, content_type, body = scrape(base, TOKEN)
    assert status == 200
    assert content_type == PROMETHEUS_TEXT
    assert 'toolcell_tool_errors_total{tool_name="calculator",error_type="rejected_arguments"} 1' in body
    assert 'toolcell_tool_duration_seconds_bucket{tool_name="calculator",le="+Inf"} 2' in body

    checked = subprocess.run(
        [promtool(), "check", "metrics"], input=body, capture_output=True, text=True, timeout=60
    )
    said = (checked.stdout + checked.stderr).strip()
    assert checked.returncode == 0 and not said, f"promtool (exit {checked.returncode}) said:\n{said}\n\n{body}"
