//! Secrets across call chains: a caller's secret, passed to the tools it calls, is as secret
//! in their spans, log lines, diagnostics and outputs as in the caller's own; and a secret
//! spelled with JSON escapes in arguments is redacted as the value it stands for.

use std::io::Write as _;

use serde_json::{Value, json};
use toolcell_runtime::{
    Runtime, ToolCall, ToolOutput,
    policy::{EnvGrant, Grants, RedactingWriter},
};

use crate::common::{COMPILE_CACHE, value};
use crate::spans::{Fields, tool_call_spans_and_events};

/// The caller's secret; no other tool is granted it.
const SECRET: &str = "chain-secret-4b9e2c";

/// A runtime where `caller`, granted [`SECRET`], may call `echo`, `calculator`, `panic` and
/// `http_fetch` (which may reach example.com only).
async fn runtime() -> Runtime {
    let builder = Runtime::builder().compile_cache(COMPILE_CACHE);
    let builder = [
        toolcell_tests::CALLER,
        toolcell_tests::ECHO,
        toolcell_tests::PANIC,
        toolcell_tools::CALCULATOR,
        toolcell_tools::HTTP_FETCH,
    ]
    .iter()
    .fold(builder, |builder, component| builder.component_file(component));
    let caller = ["echo", "calculator", "panic", "http_fetch"]
        .iter()
        .fold(Grants::new(), |grants, tool| grants.call_tool(*tool));
    let caller = caller.env(EnvGrant::secret("API_TOKEN", SECRET));
    builder
        .grant("caller", caller)
        .grant("http_fetch", Grants::new().allow_host("example.com".parse().expect("a host pattern")))
        .build()
        .await
        .expect("runtime builds")
}

fn caller_call(id: &str, calls: &[(&str, Value)]) -> ToolCall {
    let calls: Vec<Value> =
        calls.iter().map(|(tool, arguments)| json!({"tool": tool, "arguments": arguments})).collect();
    ToolCall::new(id, "caller", json!({ "calls": calls }))
}

/// Every span, every event of the runtime's own and the output as text, to search for the
/// secret; and every event of any library (wasmtime traces host calls' arguments) as a log
/// line written through [`RedactingWriter`], as the CLI writes them.
pub fn everything(spans: &[Fields], events: &[Fields], output: &ToolOutput) -> String {
    let own: Vec<&Fields> = events.iter().filter(|event| event["target"].starts_with("toolcell")).collect();
    let mut logged = Vec::new();
    for event in events {
        let mut line = RedactingWriter::new(&mut logged);
        writeln!(line, "{event:?}").expect("written to memory");
    }
    format!("{spans:?}\n{own:?}\n{output:?}\n{}", String::from_utf8_lossy(&logged))
}

#[tokio::test]
async fn a_callers_secret_reaches_no_span_or_log_line_of_the_tools_it_calls() {
    let runtime = runtime().await;
    let url = format!("https://{SECRET}.example.org/?key={SECRET}");
    let call = caller_call(
        "chain-secret",
        &[
            ("echo", json!({"text": SECRET, "count": 1})),
            ("calculator", json!({"expression": format!("{SECRET} +")})),
            ("http_fetch", json!({ "url": url })),
            (SECRET, json!({})),
            ("panic", json!({"message": format!("the key was {SECRET}")})),
        ],
    );
    let (output, spans, events) = tool_call_spans_and_events("chain-secret", runtime.call(call)).await;
    let outcomes = value(&output)["outcomes"].clone();
    let kinds: Vec<&str> = (0..5).map(|i| outcomes[i]["error"]["kind"].as_str().unwrap_or("ok")).collect();
    assert_eq!(kinds, ["ok", "rejected_arguments", "http_denied", "not_allowed", "crashed"], "{outcomes:#}");
    assert_eq!(spans.len(), 6, "the caller's span and one per nested call: {spans:#?}");
    // Not vacuous: the nested calls logged what they would have leaked.
    let logged = |level: &str, message: &str| {
        events.iter().any(|event| event["level"] == level && event.get("message").is_some_and(|m| m == message))
    };
    assert!(logged("WARN", "tool call failed"), "{events:#?}");
    assert!(logged("WARN", "HTTP request denied"), "{events:#?}");
    assert!(events.iter().any(|event| event["level"] == "DEBUG"), "every level is recorded: {events:#?}");

    let everything = everything(&spans, &events, &output);
    assert!(!everything.contains(SECRET), "{everything}");
    assert!(everything.contains("[REDACTED]"), "{everything}");
    let echo = spans.iter().find(|span| span["tool.name"] == "echo").expect("echo's span");
    assert!(echo["input.value"].contains("[REDACTED]") && echo["output.value"].contains("[REDACTED]"), "{echo:?}");
}

#[tokio::test]
async fn a_callee_that_panics_with_its_callers_secret_leaves_it_out_of_the_warn_log() {
    let runtime = runtime().await;
    let call = caller_call("chain-panic", &[("panic", json!({"message": format!("the key was {SECRET}")}))]);
    let (output, spans, events) = tool_call_spans_and_events("chain-panic", runtime.call(call)).await;
    assert_eq!(value(&output)["outcomes"][0]["error"]["kind"], "crashed", "{output:#?}");
    let warning = events
        .iter()
        .find(|event| event["level"] == "WARN" && event["tool_call.id"] == "chain-panic.1")
        .unwrap_or_else(|| panic!("the callee's failure is logged at WARN: {events:#?}"));
    assert!(warning["stderr"].contains("the key was [REDACTED]"), "{warning:?}");
    let everything = everything(&spans, &events, &output);
    assert!(!everything.contains(SECRET), "{everything}");
}

#[tokio::test]
async fn a_secret_spelled_with_json_escapes_is_redacted_in_input_value() {
    let runtime = runtime().await;
    // `\u0063` is `c`: the arguments carry the secret, though not its text.
    let escaped = format!("\\u0063{}", &SECRET[1..]);
    let arguments = format!(r#"{{"calls": [{{"tool": "echo", "arguments": {{"text": "{escaped}", "count": 1}}}}]}}"#);
    let malformed = format!(r#"{{"calls": [], "note": "{escaped}""#);
    let calls = async {
        let parsed = runtime.call(ToolCall::new("escaped-1", "caller", arguments.as_str())).await;
        let malformed = runtime.call(ToolCall::new("escaped-2", "caller", malformed.as_str())).await;
        (parsed, malformed)
    };
    let ((parsed, malformed), spans, _) = tool_call_spans_and_events("escaped-", calls).await;
    value(&parsed);
    assert_eq!(malformed.error.as_ref().map(|error| error.kind()), Some("malformed_arguments"), "{malformed:#?}");
    let span = |id: &str| spans.iter().find(|span| span["tool_call.id"] == id).expect("the call's span").clone();

    let recorded: Value = serde_json::from_str(&span("escaped-1")["input.value"]).expect("JSON");
    assert_eq!(recorded["calls"][0]["arguments"]["text"], "[REDACTED]", "{recorded}");
    let input = span("escaped-2")["input.value"].clone();
    assert!(!input.contains(&SECRET[1..]), "{input}");
    assert!(input.contains("[REDACTED]"), "{input}");
}
