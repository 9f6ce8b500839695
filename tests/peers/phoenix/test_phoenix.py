"""OpenInference spans from toolcell, read back from Arize Phoenix: `toolcell invoke` over
OTLP/HTTP and `toolcell serve` over OTLP/gRPC, each continuing the caller's W3C trace, and
one run of the agent example (`examples/agent`, the library) as one trace."""

from __future__ import annotations

import http.server
import json
import os
import secrets
import subprocess
import threading
from pathlib import Path

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

    loads = phoenix.find_spans(project, 1, name="toolcell.load")
    attributes = loads[0]["attributes"]
    # `invoke calculator` loads only calculator.wasm.
    assert attributes["toolcell.tools.count"] == 1, json.dumps(attributes, indent=1)[:3000]
    tool = json.loads(attributes["llm.tools.0.tool.json_schema"])
    assert tool["function"]["name"] == "calculator"
    assert "llm.tools.1.tool.json_schema" not in attributes


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


class ScriptedModel(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible Chat Completions endpoint replaying a model that sends a wrong
    parameter name, reads the runtime's error, and corrects itself."""

    turns = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": '{"expr": "42.195 * 2"}'}},
            {"id": "call_2", "type": "function", "function": {
                "name": "unit_convert", "arguments": '{"value": 42.195, "from": "kilometer", "to": "mile"}'}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_3", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "42.195 * 2"}'}},
        ]},
        {"role": "assistant", "content": "A marathon is 26.22 miles; two are 84.39 km."},
    ]

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        turn = sum(1 for message in request["messages"] if message["role"] == "assistant")
        body = json.dumps({
            "id": f"chatcmpl-{turn}", "object": "chat.completion", "model": request["model"],
            "choices": [{"index": 0, "message": self.turns[turn], "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000 + 100 * turn, "completion_tokens": 20, "total_tokens": 1020 + 100 * turn},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def agent_bin() -> str:
    path = os.environ.get("AGENT_BIN") or str(Path(toolcell_bin()).parent / "agent")
    assert os.access(path, os.X_OK), f"{path}: build it with `cargo build -p toolcell-example-agent`"
    return path


def test_one_agent_run_is_one_trace_of_llm_and_tool_spans(phoenix):
    project = "toolcell-agent"
    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    try:
        env = toolcell_env(
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{phoenix.base}/v1/traces",
            OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
            OPENAI_BASE_URL=f"http://127.0.0.1:{model.server_address[1]}/v1",
            OPENAI_MODEL="scripted",
        )
        env.pop("TOOLCELL_TOOLS_DIR", None)
        run = subprocess.run([agent_bin(), "How far are two marathons?"],
                             env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
    finally:
        model.shutdown()
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "A marathon is 26.22 miles; two are 84.39 km."

    [agent] = phoenix.find_spans(project, 1, span_kind="AGENT")
    spans = phoenix.spans(project, agent["context"]["trace_id"], 7)
    children = sorted((span["span_kind"], span["name"], span["status_code"]) for span in spans
                      if span["parent_id"] == agent["context"]["span_id"])
    assert children == [
        ("LLM", "chat.completions", "OK"), ("LLM", "chat.completions", "OK"), ("LLM", "chat.completions", "OK"),
        ("TOOL", "calculator", "ERROR"), ("TOOL", "calculator", "OK"), ("TOOL", "unit_convert", "OK"),
    ], spans
    assert agent["attributes"]["input.value"] == "How far are two marathons?"
    assert agent["attributes"]["output.value"] == "A marathon is 26.22 miles; two are 84.39 km."
    [failed] = [span for span in spans if span["status_code"] == "ERROR"]
    assert "did you mean `expression`?" in failed["attributes"]["output.value"]
    llm = [span for span in spans if span["span_kind"] == "LLM"]
    assert {span["attributes"]["llm.model_name"] for span in llm} == {"scripted"}
    assert sorted(span["attributes"]["llm.token_count.prompt"] for span in llm) == [1000, 1100, 1200]
