//! Each hostile guest ends in its typed error, and the very next benign call still returns
//! the right result.

use std::time::Duration;

use serde_json::{Value, json};
use toolcell_runtime::{CallError, CrashReason, LimitOverrides, ToolCall};

use crate::common::{call, kind, runtime, value};

/// Runs `tool` under `limits`, then checks that a benign call right after it is correct.
async fn contain(tool: &str, arguments: Value, limits: LimitOverrides) -> toolcell_runtime::ToolOutput {
    let output = runtime().call(ToolCall::new("hostile", tool, arguments).with_limits(limits)).await;
    assert!(output.is_error, "{tool} must fail: {output:#?}");
    let benign = call("calculator", json!({"expression": "6 * 7"})).await;
    assert_eq!(value(&benign)["value"], json!(42.0), "the call after {tool}");
    output
}

#[tokio::test]
async fn exiting_with_status_zero_is_not_a_result() {
    let output = contain("exit_zero", json!({}), LimitOverrides::new()).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: CrashReason::Exit }));
    assert!(output.diagnostics.detail.as_deref().unwrap().contains("code 0"), "{:?}", output.diagnostics);
}

#[tokio::test]
async fn exiting_with_a_failure_status_is_a_crash() {
    let output = contain("exit_nonzero", json!({}), LimitOverrides::new()).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: CrashReason::Exit }));
    assert!(output.diagnostics.detail.as_deref().unwrap().contains("code 1"), "{:?}", output.diagnostics);
    assert!(output.content.contains("exited the process"), "{}", output.content);
}

#[tokio::test]
async fn growing_memory_directly_hits_the_memory_limit() {
    let output = contain("memory_grow_bomb", json!({}), LimitOverrides::new().memory_bytes(8 << 20)).await;
    assert_eq!(kind(&output), "memory_limit", "{output:#?}");
    assert!(output.usage.peak_memory_bytes <= 8 << 20);
}

#[tokio::test]
async fn growing_a_table_hits_the_memory_limit() {
    let output = contain("table_bomb", json!({}), LimitOverrides::new().memory_bytes(8 << 20)).await;
    match output.error {
        Some(CallError::MemoryLimit { limit_bytes, requested_bytes }) => {
            assert_eq!(limit_bytes, 8 << 20);
            assert!(requested_bytes > 8 << 20, "{requested_bytes}");
        }
        other => panic!("expected memory_limit, got {other:?}"),
    }
}

#[tokio::test]
async fn every_hostile_guest_leaves_the_host_serving() {
    let cases: [(&str, LimitOverrides, &str); 8] = [
        ("infinite_loop", LimitOverrides::new().timeout(Duration::from_millis(100)).fuel(u64::MAX / 2), "timeout"),
        ("sleeper", LimitOverrides::new().timeout(Duration::from_millis(100)), "timeout"),
        ("infinite_loop", LimitOverrides::new().fuel(1_000_000), "fuel_exhausted"),
        ("memory_bomb", LimitOverrides::new().memory_bytes(8 << 20), "memory_limit"),
        ("stack_overflow", LimitOverrides::new(), "crashed"),
        ("panic", LimitOverrides::new(), "crashed"),
        ("abort", LimitOverrides::new(), "crashed"),
        ("non_json_output", LimitOverrides::new(), "invalid_output"),
    ];
    for (tool, limits, expected) in cases {
        let output = contain(tool, json!({}), limits).await;
        assert_eq!(kind(&output), expected, "{tool}");
    }
}

/// Runs a call with hostile arguments, then checks that a benign call right after it is correct.
async fn contain_arguments(arguments: impl Into<toolcell_runtime::Arguments>) -> toolcell_runtime::ToolOutput {
    let output = runtime().call(ToolCall::new("hostile", "echo", arguments)).await;
    let benign = call("calculator", json!({"expression": "6 * 7"})).await;
    assert_eq!(value(&benign)["value"], json!(42.0));
    output
}

#[tokio::test]
async fn arguments_nested_ten_thousand_levels_deep_are_malformed() {
    let deep = format!("{{\"text\": {}1{}, \"count\": 1}}", "[".repeat(10_000), "]".repeat(10_000));
    let output = contain_arguments(deep).await;
    assert_eq!(kind(&output), "malformed_arguments", "{}", output.content);
}

#[tokio::test]
async fn a_hundred_megabyte_argument_is_refused_by_size() {
    let huge = format!("{{\"text\": \"{}\", \"count\": 1}}", "x".repeat(100 << 20));
    let output = contain_arguments(huge).await;
    assert_eq!(kind(&output), "arguments_too_large");
    assert_eq!(output.usage.fuel_consumed, 0, "the guest never ran");
}

#[tokio::test]
async fn lone_surrogates_in_json_escapes_are_malformed() {
    for escape in [r"\ud800", r"\udc00", r"\ud800\u0041"] {
        let output = contain_arguments(format!("{{\"text\": \"{escape}\", \"count\": 1}}")).await;
        assert_eq!(kind(&output), "malformed_arguments", "{escape}: {}", output.content);
    }
    // A correctly paired surrogate is fine.
    let output = contain_arguments(r#"{"text": "\ud83d\ude00", "count": 1}"#).await;
    assert_eq!(value(&output)["text"], "😀");
}
