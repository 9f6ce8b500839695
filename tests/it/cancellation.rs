//! `Runtime::call_cancellable`: a cancelled call stops its tool, computing or blocked in a
//! host call, leaves the queue if it was waiting, and frees its slot.

use std::time::Duration;

use serde_json::json;
use toolcell_runtime::{CallError, CancellationToken, LimitOverrides, Runtime, ToolCall};

use crate::common::COMPILE_CACHE;

/// One slot, so a call that is not stopped keeps every other call waiting.
async fn one_slot_runtime() -> Runtime {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::SLEEPER)
        .component_file(toolcell_tests::INFINITE_LOOP)
        .component_file(toolcell_tests::ECHO)
        .compile_cache(COMPILE_CACHE)
        .max_concurrent_calls(1)
        .allow_raising_limits_per_call()
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.diagnostics(), &[]);
    runtime
}

/// Runs for a minute unless stopped.
fn minute_long(tool: &str) -> ToolCall {
    let limits = LimitOverrides::new().timeout(Duration::from_secs(60)).fuel(u64::MAX / 2);
    ToolCall::new(tool, tool, json!({})).with_limits(limits)
}

#[tokio::test]
async fn cancelling_stops_a_spinning_and_a_sleeping_tool_and_frees_the_slot() {
    let runtime = one_slot_runtime().await;
    for tool in ["infinite_loop", "sleeper"] {
        let cancel = CancellationToken::new();
        let running = tokio::spawn({
            let (runtime, cancel) = (runtime.clone(), cancel.clone());
            async move { runtime.call_cancellable(minute_long(tool), &cancel).await }
        });
        while runtime.calls_in_flight().running == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
        let output = tokio::time::timeout(Duration::from_secs(30), running).await.expect("stopped").unwrap();
        assert!(matches!(output.error, Some(CallError::Cancelled { .. })), "{tool}: {output:?}");
        assert!(output.error.as_ref().unwrap().retryable());
        assert!(output.content.contains("was cancelled"), "{}", output.content);
        assert_eq!(runtime.calls_in_flight().running, 0, "{tool}: the slot is free");
    }
    let echoed = runtime.call(ToolCall::new("after", "echo", json!({"text": "still serving", "count": 1}))).await;
    assert!(!echoed.is_error, "{echoed:?}");
}

#[tokio::test]
async fn a_call_cancelled_while_it_waits_for_a_slot_leaves_the_queue() {
    let runtime = one_slot_runtime().await;
    let holder = CancellationToken::new();
    let holding = tokio::spawn({
        let (runtime, holder) = (runtime.clone(), holder.clone());
        async move { runtime.call_cancellable(minute_long("infinite_loop"), &holder).await }
    });
    while runtime.calls_in_flight().running == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let waiter = CancellationToken::new();
    let waiting = tokio::spawn({
        let (runtime, waiter) = (runtime.clone(), waiter.clone());
        async move { runtime.call_cancellable(ToolCall::new("w", "echo", json!({"text": "x", "count": 1})), &waiter).await }
    });
    while runtime.calls_in_flight().waiting == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    waiter.cancel();
    let output = waiting.await.unwrap();
    assert!(matches!(output.error, Some(CallError::Cancelled { .. })), "{output:?}");
    assert_eq!(runtime.calls_in_flight().waiting, 0);
    assert_eq!(runtime.calls_in_flight().running, 1, "the call holding the slot runs on");
    holder.cancel();
    assert!(matches!(holding.await.unwrap().error, Some(CallError::Cancelled { .. })));
}

#[tokio::test]
async fn a_call_past_a_full_queue_fails_at_once_as_overloaded_and_the_queue_drains() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::SLEEPER)
        .component_file(toolcell_tests::ECHO)
        .compile_cache(COMPILE_CACHE)
        .max_concurrent_calls(1)
        .max_queued_calls(1)
        .allow_raising_limits_per_call()
        .build()
        .await
        .unwrap();
    let holder = CancellationToken::new();
    let holding = tokio::spawn({
        let (runtime, holder) = (runtime.clone(), holder.clone());
        async move { runtime.call_cancellable(minute_long("sleeper"), &holder).await }
    });
    let queued = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.call(ToolCall::new("queued", "echo", json!({"text": "waited", "count": 1}))).await }
    });
    while runtime.calls_in_flight().waiting == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let refused = runtime.call(ToolCall::new("refused", "echo", json!({"text": "no room", "count": 1}))).await;
    assert_eq!(refused.error, Some(CallError::Overloaded { running: 1, waiting: 1 }));
    assert!(
        refused.content.contains("the host is at capacity, with 1 call running and 1 waiting"),
        "{}",
        refused.content
    );
    assert!(refused.error.as_ref().unwrap().is_transient(), "a tool set may retry it after a pause");
    holder.cancel();
    holding.await.unwrap();
    assert!(!queued.await.unwrap().is_error, "the queued call ran once there was room");
}
