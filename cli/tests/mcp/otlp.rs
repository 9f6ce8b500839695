//! OTLP export from `toolcell serve` and `toolcell invoke`, switched on by the standard
//! `OTEL_EXPORTER_OTLP_*` variables, into a receiver that decodes the protobuf the exporter
//! sends.

use std::time::Duration;

use rmcp::model::RequestMetaObject;
use serde_json::{Value, json};
use tokio::process::Command;
use toolcell_tests::otlp::{OtlpReceiver, ReceivedSpan};

use crate::common::{HttpServer, TOOLCELL, call, initialize, post, stdio_client_with_env};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/// How long a test waits for an export; the batch processor is told to export every 100 ms.
const EXPORTED_WITHIN: Duration = Duration::from_secs(20);

/// `toolcell invoke` exporting to the collector at `endpoint`.
fn invoke(endpoint: &str, args: &[&str]) -> Command {
    let mut command = Command::new(TOOLCELL);
    command.arg("invoke").args(args);
    command.env_remove("TOOLCELL_TOOLS_DIR").env_remove("TRACEPARENT");
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
    command
}

fn tool_span(spans: &[ReceivedSpan], call_id: &str) -> Option<ReceivedSpan> {
    spans.iter().find(|span| span.attributes.get("tool_call.id") == Some(&json!(call_id))).cloned()
}

#[tokio::test]
async fn invoke_exports_the_calls_span_with_openinference_attributes_and_its_metrics() {
    let receiver = OtlpReceiver::start().await;
    let output = invoke(&receiver.endpoint, &["calculator", r#"{"expression": "2 +"}"#, "--id", "otlp-invoke"])
        .env("TRACEPARENT", TRACEPARENT)
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k3y")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));

    // invoke exits only after its last export, so everything is here already.
    let spans = receiver.spans();
    let span = tool_span(&spans, "otlp-invoke").expect("the call's span was exported");
    let attributes = &span.attributes;
    assert_eq!(span.name, "calculator");
    assert_eq!((span.trace_id.as_str(), span.parent_span_id.as_str()), (TRACE_ID, PARENT_SPAN_ID));
    assert_eq!(attributes["openinference.span.kind"], "TOOL");
    assert_eq!(attributes["tool.name"], "calculator");
    assert!(attributes["tool.description"].as_str().unwrap().starts_with("Evaluates an arithmetic expression"));
    let parameters: Value = serde_json::from_str(attributes["tool.parameters"].as_str().unwrap()).unwrap();
    assert_eq!(parameters["required"], json!(["expression"]));
    assert_eq!(attributes["input.value"], r#"{"expression": "2 +"}"#);
    assert_eq!(attributes["input.mime_type"], "application/json");
    assert!(attributes["output.value"].as_str().unwrap().starts_with("The tool rejected the arguments"));
    assert_eq!(attributes["output.mime_type"], "text/plain");
    assert_eq!(attributes["toolcell.error.kind"], "rejected_arguments");
    assert_eq!(attributes["toolcell.error.retryable"], true);
    assert_eq!(attributes["toolcell.tool.version"], "1.0.0");
    assert_eq!(attributes["toolcell.tool.source"], "builtin:calculator.wasm");
    for count in ["toolcell.fuel_consumed", "toolcell.duration_us", "toolcell.peak_memory_bytes"] {
        assert!(attributes[count].as_i64().is_some_and(|n| n > 0), "{count} is a positive integer: {attributes:?}");
    }
    assert_eq!(span.status_code, 2, "an error status");
    assert!(span.status_message.starts_with("rejected_arguments: The tool rejected"), "{}", span.status_message);
    assert_eq!(span.resource["service.name"], "toolcell");

    let load = spans.iter().find(|span| span.name == "toolcell.load").expect("the load span was exported");
    assert_eq!(load.attributes["toolcell.tools.count"], 1, "invoke loads only the tool it calls");
    let first: Value = serde_json::from_str(load.attributes["llm.tools.0.tool.json_schema"].as_str().unwrap()).unwrap();
    assert_eq!((first["type"].as_str(), first["function"]["name"].as_str()), (Some("function"), Some("calculator")));
    assert!(!load.attributes.contains_key("llm.tools.1.tool.json_schema"));

    let calculator = [("tool.name", "calculator")];
    assert_eq!(receiver.latest_point("toolcell.tool.calls", &calculator).map(|p| p.value), Some(1.0));
    let rejected = [("tool.name", "calculator"), ("error.type", "rejected_arguments")];
    assert_eq!(receiver.latest_point("toolcell.tool.errors", &rejected).map(|p| p.value), Some(1.0));
    assert_eq!(receiver.latest_point("toolcell.tool.calls_in_flight", &calculator).map(|p| p.value), Some(0.0));
    let duration = receiver.latest_point("toolcell.tool.duration", &calculator).expect("a latency histogram");
    assert_eq!((duration.unit.as_str(), duration.count), ("s", 1));
    let fuel = receiver.latest_point("toolcell.tool.fuel", &calculator).expect("a fuel histogram");
    assert_eq!(fuel.count, 1);
    assert_eq!(Some(fuel.value), attributes["toolcell.fuel_consumed"].as_f64());

    assert!(receiver.headers().iter().all(|headers| headers["x-api-key"] == "k3y"), "OTEL_EXPORTER_OTLP_HEADERS");
}

#[tokio::test]
async fn invoke_exports_no_secret_the_tool_was_granted() {
    let receiver = OtlpReceiver::start().await;
    let secret = "otlp-secret-8d2f41";
    let output =
        invoke(&receiver.endpoint, &[toolcell_tests::ENV_READER, r#"{"name": "API_TOKEN"}"#, "--env", "API_TOKEN"])
            .args(["--id", "otlp-secret"])
            .env("API_TOKEN", secret)
            .output()
            .await
            .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let span = tool_span(&receiver.spans(), "otlp-secret").expect("the call's span was exported");
    assert_eq!(span.attributes["output.value"], r#""token=[REDACTED]""#);
    assert!(!format!("{:?}", receiver.spans()).contains(secret));
}

#[tokio::test]
async fn otel_sdk_disabled_turns_export_off_and_an_unknown_protocol_is_a_usage_error() {
    let receiver = OtlpReceiver::start().await;
    let disabled = invoke(&receiver.endpoint, &["calculator", r#"{"expression": "1"}"#])
        .env("OTEL_SDK_DISABLED", "true")
        .output()
        .await
        .unwrap();
    assert_eq!(disabled.status.code(), Some(0));
    assert_eq!((receiver.spans().len(), receiver.points().len()), (0, 0));

    let json = invoke(&receiver.endpoint, &["calculator", r#"{"expression": "1"}"#])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .output()
        .await
        .unwrap();
    assert_eq!(json.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&json.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=`http/json` is not supported: use `grpc` or `http/protobuf`"),
        "{stderr}"
    );
}

#[tokio::test]
async fn serve_over_stdio_continues_the_trace_in_a_requests_meta_traceparent() {
    let receiver = OtlpReceiver::start().await;
    let client = stdio_client_with_env(&[], &exporting_to(&receiver)).await;
    let mut meta = RequestMetaObject::new();
    meta.set_traceparent(TRACEPARENT);
    let mut params = call("calculator", json!({"expression": "6 * 7"}));
    params.meta = Some(meta);
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let unknown = client.call_tool(call("calculater", json!({}))).await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");

    let span = receiver
        .span(EXPORTED_WITHIN, |span| span.name == "calculator")
        .await
        .expect("the served call's span is exported while the server runs");
    assert_eq!((span.trace_id.as_str(), span.parent_span_id.as_str()), (TRACE_ID, PARENT_SPAN_ID));
    assert_eq!(span.attributes["output.value"], r#"{"value":42.0}"#);
    assert_eq!(span.status_code, 1, "an ok status");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn serve_over_http_takes_the_traceparent_header_when_meta_has_none() {
    let receiver = OtlpReceiver::start().await;
    let server = HttpServer::start_with_env("127.0.0.1:0", &["--stateless"], &exporting_to(&receiver)).await;
    let http = reqwest::Client::new();
    let send = |message: Value| post(&http, &server.url, &message).header("mcp-protocol-version", "2025-11-25");
    send(initialize()).send().await.unwrap().text().await.unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).send().await.unwrap();
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "calculator", "arguments": {"expression": "1 + 1"}}});
    let response = send(message).header("traceparent", TRACEPARENT).send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    assert!(response.text().await.unwrap().contains(r#"{\"value\":2.0}"#));
    let span = receiver
        .span(EXPORTED_WITHIN, |span| span.name == "calculator")
        .await
        .expect("the served call's span is exported");
    assert_eq!((span.trace_id.as_str(), span.parent_span_id.as_str()), (TRACE_ID, PARENT_SPAN_ID));
}

/// The variables that make a server export to `receiver`, every 100 ms.
fn exporting_to(receiver: &OtlpReceiver) -> [(&'static str, &str); 2] {
    [("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")]
}

#[tokio::test]
async fn a_collector_that_is_down_costs_the_call_nothing_and_is_reported() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let output =
        invoke(&format!("http://{closed}"), &["calculator", r#"{"expression": "6 * 7"}"#]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["content"], r#"{"value":42.0}"#);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("BatchSpanProcessor.ExportError"), "the failed export is logged: {stderr}");
}
