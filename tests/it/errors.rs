//! Every failure a model can cause, and how the host reports it.

use serde_json::json;
use toolcell_runtime::{CallError, LimitOverrides, Runtime, ToolCall};

use crate::common::{COMPILE_CACHE, call, call_with, kind, runtime, value};

#[tokio::test]
async fn unknown_tool_suggests_the_closest_names() {
    let output = call("ecoh", json!({})).await;
    assert_eq!(kind(&output), "unknown_tool");
    let Some(CallError::UnknownTool { name, closest, available }) = &output.error else { unreachable!() };
    assert_eq!(name, "ecoh");
    assert_eq!(closest.first().map(String::as_str), Some("echo"));
    assert!(available.iter().any(|tool| tool == "calculator"));
    assert!(output.content.contains("Did you mean `echo`?"), "{}", output.content);
    assert!(output.error.as_ref().unwrap().retryable());
    assert_eq!(output.tool, "ecoh");
    assert_eq!(output.call_id, "call-1");
}

#[tokio::test]
async fn malformed_arguments_name_line_and_column() {
    let output = call("echo", "{\"text\": \"hi\",\n \"count\": 2,,}").await;
    assert_eq!(kind(&output), "malformed_arguments");
    let Some(CallError::MalformedArguments { line, column, .. }) = &output.error else { unreachable!() };
    assert_eq!((*line, *column), (2, 13));
    assert!(output.content.contains("line 2, column 13"), "{}", output.content);
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid() {
    let output = call("echo", "[1, 2]").await;
    assert_eq!(kind(&output), "invalid_arguments");
    assert!(output.content.contains("(top level)"), "{}", output.content);
}

#[tokio::test]
async fn every_schema_violation_is_reported_with_its_pointer() {
    let arguments = json!({"text": "", "count": 11, "volume": "deafening", "tags": ["a", 7], "colour": "red"});
    let output = call("echo", arguments).await;
    assert_eq!(kind(&output), "invalid_arguments");
    let Some(CallError::InvalidArguments { violations }) = &output.error else { unreachable!() };
    let mut pointers: Vec<&str> = violations.iter().map(|violation| violation.pointer.as_str()).collect();
    pointers.sort_unstable();
    assert_eq!(pointers, ["/colour", "/count", "/tags/1", "/text", "/volume"], "{violations:#?}");
    let unknown = violations.iter().find(|violation| violation.pointer == "/colour").unwrap();
    assert!(unknown.message.contains("not a parameter"), "{unknown:?}");
    assert!(output.content.contains("5 problems"), "{}", output.content);
    assert!(output.content.contains("- /count:"), "{}", output.content);
    assert_eq!(output.usage.fuel_consumed, 0, "the guest never ran");
}

#[tokio::test]
async fn missing_required_arguments_are_named() {
    let output = call("echo", json!({"text": "hi"})).await;
    assert_eq!(kind(&output), "invalid_arguments");
    assert!(
        output.content.contains("`count` is missing: it is required (an integer from 1 to 10"),
        "{}",
        output.content
    );
}

#[tokio::test]
async fn arguments_over_the_limit_are_refused_before_parsing() {
    let limits = LimitOverrides::new().max_argument_bytes(64);
    let output = call_with("echo", json!({"text": "x".repeat(100), "count": 1}), limits).await;
    assert_eq!(kind(&output), "arguments_too_large");
    // {"count":1,"text":"xxx…"} is 121 bytes of compact JSON.
    assert_eq!(output.error, Some(CallError::ArgumentsTooLarge { size: 121, limit: 64 }));
}

#[tokio::test]
async fn a_tool_can_reject_valid_arguments() {
    let output = call("rejects_arguments", json!({"number": 7})).await;
    assert_eq!(kind(&output), "rejected_arguments");
    assert!(output.content.contains("`number` must be 42, not 7"), "{}", output.content);
    assert!(output.error.as_ref().unwrap().retryable());
    assert_eq!(value(&call("rejects_arguments", json!({"number": 42})).await), json!(42));
}

#[tokio::test]
async fn tool_failures_carry_the_tools_retryable_flag() {
    let transient = call("fails_retryably", json!({"transient": true})).await;
    assert_eq!(
        transient.error,
        Some(CallError::ToolFailed { message: "the upstream service is busy".into(), retryable: true })
    );
    assert!(transient.content.contains("may succeed"), "{}", transient.content);

    let terminal = call("fails_retryably", json!({"transient": false})).await;
    assert_eq!(kind(&terminal), "tool_failed");
    assert!(!terminal.error.as_ref().unwrap().retryable());
    assert!(terminal.content.contains("invalid digit"), "`?` keeps the error's message: {}", terminal.content);
}

#[tokio::test]
async fn a_busy_loop_is_stopped_by_the_deadline() {
    let limits = LimitOverrides::new().timeout(std::time::Duration::from_millis(200)).fuel(u64::MAX / 2);
    let output = call_with("infinite_loop", json!({}), limits).await;
    assert_eq!(output.error, Some(CallError::Timeout { limit_ms: 200 }));
    assert!(!output.error.as_ref().unwrap().retryable());
    assert!(output.usage.fuel_consumed > 0);
}

#[tokio::test]
async fn a_guest_blocked_in_a_host_call_is_stopped_by_the_wall_clock() {
    let limits = LimitOverrides::new().timeout(std::time::Duration::from_millis(300));
    let output = call_with("sleeper", json!({}), limits).await;
    assert_eq!(output.error, Some(CallError::Timeout { limit_ms: 300 }));
}

#[tokio::test]
async fn running_out_of_fuel_is_reported_as_such() {
    let limits = LimitOverrides::new().fuel(5_000_000).timeout(std::time::Duration::from_secs(60));
    let output = call_with("infinite_loop", json!({}), limits).await;
    assert_eq!(output.error, Some(CallError::FuelExhausted { limit: 5_000_000 }));
    assert_eq!(output.usage.fuel_consumed, 5_000_000);
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let limits = LimitOverrides::new().memory_bytes(16 << 20);
    let output = call_with("memory_bomb", json!({}), limits).await;
    assert_eq!(kind(&output), "memory_limit", "{output:#?}");
    let Some(CallError::MemoryLimit { limit_bytes, requested_bytes }) = output.error else { unreachable!() };
    assert_eq!(limit_bytes, 16 << 20);
    assert!(requested_bytes > limit_bytes);
    assert!(output.usage.peak_memory_bytes <= limit_bytes);
    assert!(output.usage.peak_memory_bytes > 8 << 20, "the bomb got close to the cap first");
    assert!(output.content.contains("16 MiB"), "{}", output.content);
}

#[tokio::test]
async fn stack_overflow_is_a_crash() {
    let output = call("stack_overflow", json!({})).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: toolcell_runtime::tool::CrashReason::StackOverflow }));
}

#[tokio::test]
async fn a_memory_fault_outside_a_recursion_is_not_taken_for_a_stack_overflow() {
    // (A runaway recursion in linear memory also ends in a memory fault; only its backtrace
    // tells the two apart.)
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::MEMORY_FAULT)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    let output = runtime.call(ToolCall::new("fault", "memory_fault", json!({}))).await;
    assert_eq!(
        output.error,
        Some(CallError::Crashed { reason: toolcell_runtime::tool::CrashReason::Fault }),
        "{output:#?}"
    );
}

#[tokio::test]
async fn a_panic_is_a_crash_and_its_message_stays_with_the_operator() {
    let output = call("panic", json!({})).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: toolcell_runtime::tool::CrashReason::Panic }));
    assert!(!output.content.contains("secret operator detail"), "{}", output.content);
    assert!(output.diagnostics.stderr.contains("secret operator detail"), "{:#?}", output.diagnostics);
    assert!(output.diagnostics.detail.is_some());
}

#[tokio::test]
async fn an_abort_is_a_crash() {
    let output = call("abort", json!({})).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: toolcell_runtime::tool::CrashReason::Abort }));
}

#[tokio::test]
async fn output_over_the_limit_is_discarded() {
    let limits = LimitOverrides::new().max_output_bytes(1000);
    let output = call_with("big_output", json!({"bytes": 1001}), limits).await;
    assert_eq!(output.error, Some(CallError::OutputTooLarge { size: 1001, limit: 1000 }));
    assert!(output.error.as_ref().unwrap().retryable());
    let fits = call_with("big_output", json!({"bytes": 1000}), limits).await;
    assert_eq!(value(&fits).as_str().map(str::len), Some(998));
}

#[tokio::test]
async fn output_that_is_not_json_is_invalid() {
    let output = call("non_json_output", json!({})).await;
    assert_eq!(kind(&output), "invalid_output");
    assert!(output.content.contains("not JSON"), "{}", output.content);
}

#[tokio::test]
async fn output_that_breaks_the_output_schema_is_invalid() {
    let output = call("bad_output", json!({})).await;
    assert_eq!(kind(&output), "invalid_output");
    assert!(output.content.contains("output schema"), "{}", output.content);
    assert!(output.content.contains("/value"), "{}", output.content);
}

#[tokio::test]
async fn every_error_kind_serializes_with_kind_and_retryable() {
    let output = call("panic", json!({})).await;
    let serialized = serde_json::to_value(&output).unwrap();
    assert_eq!(serialized["error"], json!({"kind": "crashed", "reason": "panic", "retryable": false}));
    assert_eq!(serialized["is_error"], json!(true));
    let back: toolcell_runtime::ToolOutput = serde_json::from_value(serialized).unwrap();
    assert_eq!(back.error, output.error);
}

#[tokio::test]
async fn the_host_survives_every_failure_and_the_next_call_works() {
    for tool in ["panic", "abort", "stack_overflow", "non_json_output"] {
        assert!(call(tool, json!({})).await.is_error);
        let after = call("echo", json!({"text": "still here", "count": 1})).await;
        assert_eq!(value(&after)["text"], "still here", "after {tool}");
    }
}

#[tokio::test]
async fn parallel_calls_come_back_in_order() {
    let calls = (0..8).map(|i| {
        if i % 2 == 0 {
            ToolCall::new(format!("call-{i}"), "echo", json!({"text": format!("n{i}"), "count": 1}))
        } else {
            ToolCall::new(format!("call-{i}"), "panic", json!({}))
        }
    });
    let outputs = runtime().call_all(calls).await;
    for (i, output) in outputs.iter().enumerate() {
        assert_eq!(output.call_id, format!("call-{i}"));
        if i % 2 == 0 {
            assert_eq!(value(output)["text"], format!("n{i}"));
        } else {
            assert_eq!(kind(output), "crashed");
        }
    }
}
