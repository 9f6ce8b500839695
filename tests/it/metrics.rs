//! `Runtime::metrics`: calls, errors by kind, latency and fuel per tool, and calls in flight,
//! as an embedding reads them.

use std::time::Duration;

use serde_json::json;
use toolcell_runtime::{CancellationToken, LimitOverrides, Runtime, ToolCall};

use crate::common::COMPILE_CACHE;

async fn runtime() -> Runtime {
    Runtime::builder()
        .component_file(toolcell_tests::ECHO)
        .component_file(toolcell_tests::SLEEPER)
        .component_file(toolcell_tests::INFINITE_LOOP)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn each_tool_counts_its_calls_errors_by_kind_latency_and_fuel() {
    let runtime = runtime().await;
    let echo = |id: &str, arguments| runtime.call(ToolCall::new(id, "echo", arguments));
    let ok = echo("ok-1", json!({"text": "a", "count": 2})).await;
    echo("ok-2", json!({"text": "b", "count": 1})).await;
    echo("bad", json!({"text": 5})).await;
    runtime
        .call(ToolCall::new("spin", "infinite_loop", json!({})).with_limits(LimitOverrides::new().fuel(50_000)))
        .await;
    runtime.call(ToolCall::new("typo", "ecko", json!({}))).await;

    let metrics = runtime.metrics();
    let echo = &metrics.tools["echo"];
    assert_eq!(echo.calls, 3);
    assert_eq!(echo.errors.iter().collect::<Vec<_>>(), [(&"invalid_arguments".to_owned(), &1)]);
    assert_eq!((echo.duration_seconds.count, echo.fuel.count), (3, 3));
    assert!(echo.duration_seconds.sum > 0.0);
    assert!(echo.fuel.sum >= ok.usage.fuel_consumed as f64, "{echo:?}");
    assert_eq!(echo.duration_seconds.counts.len(), echo.duration_seconds.bounds.len() + 1);

    let spin = &metrics.tools["infinite_loop"];
    assert_eq!((spin.calls, spin.errors.get("fuel_exhausted")), (1, Some(&1)));
    assert_eq!(spin.fuel.quantile_bound(1.0), Some(1e5), "50,000 fuel lands in the bucket up to 100,000");
    assert_eq!(metrics.tools["sleeper"].calls, 0);
    assert_eq!(metrics.unknown_tool_calls, 1);
    assert_eq!((metrics.in_flight.running, metrics.in_flight.waiting), (0, 0));
}

#[tokio::test]
async fn a_call_is_in_flight_until_it_ends_even_when_its_caller_gives_up() {
    let runtime = runtime().await;
    let minute = LimitOverrides::new().timeout(Duration::from_secs(60));
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let (runtime, cancel) = (runtime.clone(), cancel.clone());
        let call = ToolCall::new("slow", "sleeper", json!({})).with_limits(minute);
        async move { runtime.call_cancellable(call, &cancel).await }
    });
    let abandoned = tokio::spawn({
        let runtime = runtime.clone();
        let call = ToolCall::new("abandoned", "sleeper", json!({})).with_limits(minute);
        async move { runtime.call(call).await }
    });
    while runtime.metrics().tools["sleeper"].in_flight < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    abandoned.abort();
    let _ = abandoned.await;
    assert_eq!(runtime.metrics().tools["sleeper"].in_flight, 1, "a dropped call leaves the count");
    cancel.cancel();
    running.await.unwrap();
    let sleeper = &runtime.metrics().tools["sleeper"];
    assert_eq!((sleeper.in_flight, sleeper.calls), (0, 1), "only the call that ended is counted as a call");
    assert_eq!(sleeper.errors.get("cancelled"), Some(&1));
}

#[tokio::test]
async fn counts_survive_a_reload() {
    let runtime = runtime().await;
    runtime.call(ToolCall::new("before", "echo", json!({"text": "a", "count": 1}))).await;
    let (reloaded, _) = runtime.reload().await.unwrap();
    reloaded.call(ToolCall::new("after", "echo", json!({"text": "a", "count": 1}))).await;
    assert_eq!(reloaded.metrics().tools["echo"].calls, 2);
    assert_eq!(runtime.metrics().tools["echo"].calls, 2, "every version reads the same counts");
}

#[tokio::test]
async fn a_tool_a_reload_removes_keeps_its_counts_if_it_was_called() {
    let dir = std::env::temp_dir().join(format!("toolcell-metrics-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(toolcell_tests::ECHO, dir.join("echo.wasm")).unwrap();
    std::fs::copy(toolcell_tests::SLEEPER, dir.join("sleeper.wasm")).unwrap();
    let runtime = Runtime::builder().tools_dir(&dir).compile_cache(COMPILE_CACHE).build().await.unwrap();
    runtime.call(ToolCall::new("once", "echo", json!({"text": "a", "count": 1}))).await;
    std::fs::remove_file(dir.join("echo.wasm")).unwrap();
    std::fs::remove_file(dir.join("sleeper.wasm")).unwrap();
    let (reloaded, _) = runtime.reload().await.unwrap();
    drop(runtime);
    let metrics = reloaded.metrics();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(reloaded.definitions().len(), 0);
    assert_eq!(metrics.tools.keys().collect::<Vec<_>>(), ["echo"], "the uncalled sleeper is gone");
    assert_eq!(metrics.tools["echo"].calls, 1);
}
