"""OpenInference spans from toolcell, read back from Arize Phoenix: `toolcell invoke` over
OTLP/HTTP, `toolcell serve` over OTLP/gRPC, each continuing the caller's W3C trace."""

from __future__ import annotations

import json
import os
import secrets
import subprocess

from toolcell_server import toolcell_bin

CALL_TIMEOUT_S = 120


def toolcell_env(**otel: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("OTEL_", "TRACE"))}
    return {**env, **otel}


def trace_context() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def invoke(env: dict[str, str], call_id: str, arguments: dict) -> subprocess.CompletedProcess:
    command = [toolcell_bin(), "invoke", "calculator", json.dumps(arguments), "--id", call_id]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT_S)


def test_invoke_sends_openinference_tool_spans_over_http(phoenix):
    project = "toolcell-invoke"
    trace_id, parent_id, traceparent = trace_context()
    env = toolcell_env(
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{phoenix.base}/v1/traces",
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
        TRACEPARENT=traceparent,
    )
    assert invoke(env, "phoenix-ok", {"expression": "6 * 7"}).returncode == 0
    assert invoke(env, "phoenix-bad", {"expression": "6 *"}).returncode == 1

    spans = {span["attributes"]["tool_call.id"]: span for span in phoenix.spans(project, trace_id, 2)}
    ok, bad = spans["phoenix-ok"], spans["phoenix-bad"]
    for span in (ok, bad):
        assert (span["name"], span["span_kind"], span["parent_id"]) == ("calculator", "TOOL", parent_id), span
        attributes = span["attributes"]
        assert attributes["tool.name"] == "calculator"
        assert attributes["tool.description"].startswith("Evaluates an arithmetic expression")
        # Phoenix reads `tool.parameters` as the JSON it is, and its REST view flattens it.
        assert attributes["tool.parameters.required"] == ["expression"], attributes
        assert attributes["tool.parameters.properties.expression.type"] == "string", attributes
        assert attributes["input.mime_type"] == "application/json"
        assert attributes["toolcell.tool.version"] == "1.0.0"
        assert attributes["toolcell.tool.source"] == "builtin:calculator.wasm"
        for count in ("toolcell.fuel_consumed", "toolcell.duration_us", "toolcell.peak_memory_bytes"):
            assert isinstance(attributes[count], int) and attributes[count] > 0, (count, attributes)

    assert ok["status_code"] == "OK"
    assert json.loads(ok["attributes"]["input.value"]) == {"expression": "6 * 7"}
    assert json.loads(ok["attributes"]["output.value"]) == {"value": 42.0}
    assert ok["attributes"]["output.mime_type"] == "application/json"

    assert bad["status_code"] == "ERROR"
    assert bad["status_message"].startswith("rejected_arguments: The tool rejected the arguments"), bad
    assert bad["attributes"]["toolcell.error.kind"] == "rejected_arguments"
    assert bad["attributes"]["toolcell.error.retryable"] is True
    assert bad["attributes"]["output.mime_type"] == "text/plain"

    loads = phoenix.get(f"/v1/projects/{project}/spans", name="toolcell.load", limit="10")["data"]
    assert loads, "each invoke's load is a span"
    attributes = loads[0]["attributes"]
    assert attributes["toolcell.tools.count"] == 7, json.dumps(attributes, indent=1)[:3000]
    tools = [json.loads(attributes[f"llm.tools.{index}.tool.json_schema"]) for index in range(7)]
    assert [tool["function"]["name"] for tool in tools][:2] == ["calculator", "datetime"]


def test_serve_sends_spans_over_grpc_continuing_the_requests_meta_traceparent(phoenix):
    project = "toolcell-serve"
    trace_id, parent_id, traceparent = trace_context()
    env = toolcell_env(
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.grpc,
        OTEL_METRICS_EXPORTER="none",  # Phoenix takes traces only
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
    )
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "phoenix-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "calculator", "arguments": {"expression": "2 ^ 10"}, "_meta": {"traceparent": traceparent}}},
    ]
    # The server answers every request, then exits when stdin closes, exporting what is left.
    served = subprocess.run(
        [toolcell_bin(), "serve"],
        input="".join(json.dumps(request) + "\n" for request in requests),
        env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT_S,
    )
    assert served.returncode == 0, served.stderr
    answer = json.loads(served.stdout.splitlines()[-1])
    assert answer["result"]["structuredContent"] == {"value": 1024.0}, answer

    [span] = phoenix.spans(project, trace_id, 1)
    assert (span["name"], span["span_kind"], span["parent_id"]) == ("calculator", "TOOL", parent_id), span
    assert span["status_code"] == "OK"
    assert span["attributes"]["tool_call.id"] == "2"
    assert json.loads(span["attributes"]["output.value"]) == {"value": 1024.0}
