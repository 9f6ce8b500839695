//! Arbitrary bytes as the arguments of the standard tools, through `Runtime::call`: whatever
//! the input, the call must end in one well-formed output, the host must not panic, and no
//! standard tool may crash or break its output contract.
//!
//! The first byte picks what the rest becomes. Below 128: the whole arguments text of one of
//! the seven Rust tools, sent as JSON text and, when it parses, as an already-parsed value too
//! (the two ways a model's arguments arrive). From 128: the value of one string field in
//! otherwise valid arguments (a calculator expression, a regex pattern, a date), so that
//! most inputs get past validation and run inside the tool. `files` may read the seed folder
//! `seeds/wat` as `/workspace`; `http_fetch` is granted no host. `python` is left out: what
//! a program does is the program's (a deeply nested one may overflow the stack), and its
//! interpreter is CPython's, fuzzed upstream.

#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolcell_runtime::{
    LimitOverrides, Runtime, ToolCall, ToolOutput,
    policy::{DirGrant, Grants},
};

const TOOLS: [&str; 7] = ["calculator", "json_query", "regex", "datetime", "unit_convert", "files", "http_fetch"];

/// A tool and its arguments with one string field left to the fuzzer (`FUZZ`).
const FIELD: &str = "FUZZ";
static TEMPLATES: LazyLock<Vec<(&str, Value)>> = LazyLock::new(|| {
    vec![
        ("calculator", json!({"expression": FIELD})),
        ("calculator", json!({"expression": "x * y + 1", "variables": {"x": 2.5, FIELD: 3}})),
        ("json_query", json!({"document": {"a": [1, 2, {"b": "c"}], "d": null}, "query": FIELD})),
        ("json_query", json!({"document": FIELD, "query": "$..*"})),
        ("regex", json!({"pattern": FIELD, "text": "mail ann@example.com on 2024-03-10 ünï", "operation": "find"})),
        ("regex", json!({"pattern": "(?<w>\\w+)", "text": "one two", "operation": "replace", "replacement": FIELD})),
        ("regex", json!({"pattern": "\\s*,\\s*", "text": FIELD, "operation": "split", "limit": 3})),
        ("datetime", json!({"operation": "parse", "instant": FIELD})),
        (
            "datetime",
            json!({"operation": "add", "instant": "2024-03-10T01:30:00", "time_zone": "America/New_York", "duration": FIELD}),
        ),
        ("datetime", json!({"operation": "format", "instant": "2024-03-10T01:30:00Z", "format": FIELD})),
        ("datetime", json!({"operation": "convert", "instant": "2024-03-10T01:30:00Z", "to_time_zone": FIELD})),
        ("files", json!({"operation": "read", "path": FIELD})),
        ("files", json!({"operation": "search", "path": "/workspace", "pattern": FIELD, "regex": true})),
        ("files", json!({"operation": "list", "path": "/workspace", "glob": FIELD, "recursive": true})),
        ("http_fetch", json!({"url": FIELD})),
    ]
});

struct Fixture {
    tokio: tokio::runtime::Runtime,
    runtime: Runtime,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    // Tighter than the defaults, so a slow input costs the fuzzer a second, not five.
    let limits = LimitOverrides::new().fuel(200_000_000).timeout(Duration::from_secs(1));
    // The test suite's compile cache: the same engine settings compile the same code whoever
    // compiles it, so after `cargo test` the tools come from there rather than from the
    // instrumented, debug-asserting Cranelift of this build (about 40 s).
    let cache = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/compile-cache");
    let builder = TOOLS.iter().fold(Runtime::builder().compile_cache(cache), |builder, tool| {
        builder.component_file(format!("{}/{tool}.wasm", toolcell_tools::DIR))
    });
    let builder = TOOLS.iter().fold(builder, |builder, tool| builder.tool_limits(*tool, limits));
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/wat");
    let builder = builder.grant("files", Grants::new().dir(DirGrant::read_only(workspace, "/workspace")));
    let runtime = tokio.block_on(builder.build()).expect("the standard tools load");
    assert_eq!(runtime.diagnostics(), &[], "every standard tool loads");
    Fixture { tokio, runtime }
});

fuzz_target!(init: { LazyLock::force(&FIXTURE); }, |data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest).into_owned();
    let Fixture { tokio, runtime } = &*FIXTURE;

    if selector < 128 {
        let tool = TOOLS[usize::from(selector) % TOOLS.len()];
        let output = tokio.block_on(runtime.call(ToolCall::new("fuzz", tool, text.clone())));
        check(&output, tool);
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            let parsed = tokio.block_on(runtime.call(ToolCall::new("fuzz", tool, value)));
            check(&parsed, tool);
            // The same arguments give the same kind of outcome either way they arrive.
            assert_eq!(output.error.as_ref().map(|e| e.kind()), parsed.error.as_ref().map(|e| e.kind()));
        }
    } else {
        let (tool, template) = &TEMPLATES[usize::from(selector - 128) % TEMPLATES.len()];
        let arguments = fill(template, &text);
        let output = tokio.block_on(runtime.call(ToolCall::new("fuzz", *tool, arguments)));
        check(&output, tool);
        let kind = output.error.as_ref().map(|error| error.kind());
        assert_ne!(kind, Some("malformed_arguments"), "the arguments are valid JSON: {output:#?}");
    }
});

/// `template` with every `FUZZ` string (value or key) replaced by `text`.
fn fill(template: &Value, text: &str) -> Value {
    match template {
        Value::String(field) if field == FIELD => Value::String(text.to_owned()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (if key == FIELD { text.to_owned() } else { key.clone() }, fill(value, text)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What every output promises, whatever the call.
fn check(output: &ToolOutput, tool: &str) {
    assert_eq!(output.tool, tool);
    assert_eq!(output.is_error, output.error.is_some(), "{output:#?}");
    assert!(!output.content.is_empty(), "{output:#?}");
    match &output.error {
        Some(error) => {
            assert_eq!(output.content, error.to_string());
            // A standard tool must turn every input into a result or a tool error: a crash,
            // an output that breaks its contract, or a host fault is a bug.
            assert!(!matches!(error.kind(), "crashed" | "invalid_output" | "internal"), "{output:#?}");
        }
        None => assert!(output.value().is_some(), "a result is JSON: {output:#?}"),
    }
}
