//! Each hostile guest ends in its typed error, and the very next benign call still returns
//! the right result.

use std::time::Duration;

use serde_json::{Value, json};
use toolcell_runtime::{CallError, LimitOverrides, Runtime, ToolCall, policy::Grants, tool::CrashReason};

use crate::common::{COMPILE_CACHE, call, kind, runtime, value};

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

/// Runs `calculator 6 * 7` and checks the answer.
pub async fn benign_call_is_correct(runtime: &Runtime) {
    let benign = runtime.call(ToolCall::new("benign", "calculator", json!({"expression": "6 * 7"}))).await;
    assert_eq!(value(&benign)["value"], json!(42.0));
}

#[tokio::test]
async fn a_tool_without_an_http_grant_cannot_make_the_host_hold_header_memory() {
    // No grant: the first wasi:http call stops the tool, before the host holds anything.
    let output =
        contain("http_fields_bomb", json!({"count": 10_000, "value_bytes": 100_000}), LimitOverrides::new()).await;
    match &output.error {
        Some(error @ CallError::HttpDenied { request: None, allowed, .. }) => {
            assert!(allowed.is_empty());
            assert!(!error.retryable(), "the model cannot fix a missing grant");
        }
        other => panic!("expected http_denied without a request, got {other:?}"),
    }
    assert!(output.content.contains("not something your arguments can change"), "{}", output.content);
}

#[tokio::test]
async fn header_fields_are_bounded_per_set_and_per_call() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::HTTP_FIELDS_BOMB)
        .component_file(toolcell_tools::CALCULATOR)
        .grant("http_fields_bomb", Grants::new().allow_host("example.com".parse().unwrap()))
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    // One 100 KB header value is over the size of a field set.
    let big = runtime.call(ToolCall::new("1", "http_fields_bomb", json!({"count": 10_000, "value_bytes": 100_000})));
    let output = big.await;
    let Some(CallError::ResourceLimit { resource, limit: 16384 }) = &output.error else { panic!("{output:#?}") };
    assert!(resource.contains("header fields"), "{resource}");
    benign_call_is_correct(&runtime).await;

    // Values under that size: the call may hold only so many host resources.
    let sampler = PeakResident::start();
    let small = runtime.call(ToolCall::new("2", "http_fields_bomb", json!({"count": 10_000, "value_bytes": 15_000})));
    let output = small.await;
    let grown = sampler.stop();
    let Some(CallError::ResourceLimit { resource, limit: 1024 }) = &output.error else { panic!("{output:#?}") };
    assert!(resource.contains("open handles"), "{resource}");
    assert!(grown < 256 << 20, "the host grew by {grown} bytes during the call");
    benign_call_is_correct(&runtime).await;
}

/// Samples this process's resident memory on a thread of its own until stopped.
struct PeakResident {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl PeakResident {
    fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let before = resident_bytes();
        let thread = std::thread::spawn(move || {
            let mut peak = before;
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(resident_bytes());
                std::thread::sleep(Duration::from_millis(2));
            }
            peak.saturating_sub(before)
        });
        Self { stop, thread }
    }

    /// How much resident memory grew at its peak.
    fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// This process's resident memory, from /proc.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) * 1024
}

#[tokio::test]
async fn a_handled_allocation_failure_does_not_turn_a_later_failure_into_memory_limit() {
    let output = contain("refused_then_fails", json!({"mode": "panic"}), LimitOverrides::new()).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: CrashReason::Panic }), "{output:#?}");
    let output = contain("refused_then_fails", json!({"mode": "exit"}), LimitOverrides::new()).await;
    assert_eq!(output.error, Some(CallError::Crashed { reason: CrashReason::Exit }), "{output:#?}");
    let output = contain("refused_then_fails", json!({"mode": "error"}), LimitOverrides::new()).await;
    assert_eq!(kind(&output), "tool_failed", "{output:#?}");
    assert!(output.content.contains("the allocation was refused: true"), "{}", output.content);
}

#[tokio::test]
async fn an_enormous_timeout_does_not_overflow() {
    // Per-call overrides cannot raise the operator's limits: lowered to the default.
    let limits = LimitOverrides::new().timeout(Duration::MAX);
    let output =
        runtime().call(ToolCall::new("1", "calculator", json!({"expression": "6 * 7"})).with_limits(limits)).await;
    assert_eq!(value(&output)["value"], json!(42.0));
    // An operator's own enormous timeout is saturated, not added to the clock.
    let runtime = Runtime::builder()
        .component_file(toolcell_tools::CALCULATOR)
        .tool_limits("calculator", LimitOverrides::new().timeout(Duration::MAX))
        .allow_raising_limits_per_call()
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    benign_call_is_correct(&runtime).await;
    let output =
        runtime.call(ToolCall::new("2", "calculator", json!({"expression": "1 + 1"})).with_limits(limits)).await;
    assert_eq!(value(&output)["value"], json!(2.0));
}

#[tokio::test]
async fn per_call_overrides_cannot_raise_the_operators_limits() {
    let build = |raising: bool| {
        let builder = Runtime::builder()
            .component_file(toolcell_tests::INFINITE_LOOP)
            .tool_limits("infinite_loop", LimitOverrides::new().fuel(1_000_000))
            .compile_cache(COMPILE_CACHE);
        if raising { builder.allow_raising_limits_per_call() } else { builder }.build()
    };
    let asked = LimitOverrides::new().fuel(u64::MAX / 2).timeout(Duration::from_millis(200));
    let call = || ToolCall::new("1", "infinite_loop", json!({})).with_limits(asked);
    let ceiling = build(false).await.unwrap();
    let output = ceiling.call(call()).await;
    assert_eq!(output.error, Some(CallError::FuelExhausted { limit: 1_000_000 }), "the ceiling holds: {output:#?}");
    // Lowering works either way; raising only when the embedding opted in.
    let lowered = ceiling
        .call(ToolCall::new("2", "infinite_loop", json!({})).with_limits(LimitOverrides::new().fuel(1000)))
        .await;
    assert_eq!(lowered.error, Some(CallError::FuelExhausted { limit: 1000 }));
    let raised = build(true).await.unwrap().call(call()).await;
    assert_eq!(kind(&raised), "timeout", "{raised:#?}");
}

#[tokio::test]
async fn concurrent_calls_beyond_the_limit_wait_their_turn() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::SLEEPER)
        .max_concurrent_calls(2)
        .on_demand()
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    let limits = LimitOverrides::new().timeout(Duration::from_millis(300));
    let calls: Vec<_> =
        (0..6).map(|i| ToolCall::new(format!("c{i}"), "sleeper", json!({})).with_limits(limits)).collect();
    let all = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.call_all(calls).await }
    });
    let mut seen_waiting = false;
    for _ in 0..2000 {
        let now = runtime.calls_in_flight();
        assert!(now.running <= 2, "{now:?}");
        seen_waiting |= now.running == 2 && now.waiting > 0;
        if all.is_finished() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let outputs = all.await.unwrap();
    assert!(seen_waiting, "calls beyond the limit were queued");
    assert!(outputs.iter().all(|output| kind(output) == "timeout"), "{outputs:#?}");
    assert_eq!(runtime.calls_in_flight().running, 0);
}

/// A runtime where one call runs at once and `sleeper` can hold that place until cancelled.
async fn one_place(max_queued_bytes: Option<u64>) -> (Runtime, toolcell_runtime::CancellationToken) {
    let mut builder = Runtime::builder()
        .component_file(toolcell_tests::SLEEPER)
        .component_file(toolcell_tests::ECHO)
        .max_concurrent_calls(1)
        .on_demand()
        .allow_raising_limits_per_call()
        .compile_cache(COMPILE_CACHE);
    if let Some(bytes) = max_queued_bytes {
        builder = builder.max_queued_bytes(bytes);
    }
    let runtime = builder.build().await.unwrap();
    let busy = toolcell_runtime::CancellationToken::new();
    tokio::spawn({
        let (runtime, busy) = (runtime.clone(), busy.clone());
        let call = ToolCall::new("busy", "sleeper", json!({}))
            .with_limits(LimitOverrides::new().timeout(Duration::from_secs(120)));
        async move { runtime.call_cancellable(call, &busy).await }
    });
    wait_for(&runtime, |calls| calls.running == 1).await;
    (runtime, busy)
}

async fn wait_for(runtime: &Runtime, until: impl Fn(toolcell_runtime::metrics::CallsInFlight) -> bool) {
    for _ in 0..12_000 {
        if until(runtime.calls_in_flight()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("never reached: {:?}", runtime.calls_in_flight());
}

/// Starts `echo` calls with `arguments` on tasks of their own.
fn echo_calls(
    runtime: &Runtime,
    count: usize,
    arguments: &Value,
) -> Vec<tokio::task::JoinHandle<toolcell_runtime::ToolOutput>> {
    (0..count)
        .map(|i| {
            let (runtime, arguments) = (runtime.clone(), arguments.clone());
            tokio::spawn(async move { runtime.call(ToolCall::new(format!("q{i}"), "echo", arguments)).await })
        })
        .collect()
}

#[tokio::test]
async fn waiting_calls_are_bounded_by_the_bytes_of_their_arguments() {
    let (runtime, busy) = one_place(Some(3 << 19)).await;
    // About 650 KB of valid arguments: two fit in 1.5 MiB, three do not.
    let tags: Vec<String> = (0..50_000).map(|i| format!("tag-{i:06}")).collect();
    let big = json!({ "text": "hi", "count": 1, "tags": tags });
    let waiting = echo_calls(&runtime, 2, &big);
    wait_for(&runtime, |calls| calls.waiting == 2).await;

    let refused = runtime.call(ToolCall::new("third", "echo", big.clone())).await;
    let error = refused.error.as_ref().map(CallError::kind);
    assert_eq!(error, Some("overloaded"), "1.5 MiB hold two such calls, not three");
    // Not a count: small calls still queue.
    let small = echo_calls(&runtime, 3, &json!({ "text": "hi", "count": 1 }));
    wait_for(&runtime, |calls| calls.waiting == 5).await;

    busy.cancel();
    for output in futures_outputs(waiting.into_iter().chain(small)).await {
        assert!(!output.is_error, "{:?}", output.error);
        assert_eq!(value(&output)["text"], json!("hi"));
    }
}

#[tokio::test]
async fn the_default_queue_is_sized_to_the_places_that_run_calls() {
    let (runtime, busy) = one_place(None).await;
    let queued = toolcell_runtime::limits::default_max_queued_calls(1) as usize;
    let waiting = echo_calls(&runtime, queued, &json!({ "text": "hi", "count": 1 }));
    wait_for(&runtime, |calls| calls.waiting == queued).await;
    let refused = runtime.call(ToolCall::new("one more", "echo", json!({ "text": "hi", "count": 1 }))).await;
    assert_eq!(kind(&refused), "overloaded", "{refused:#?}");
    busy.cancel();
    let outputs = futures_outputs(waiting).await;
    assert!(outputs.iter().all(|output| !output.is_error), "every queued call ran");
}

async fn futures_outputs(
    tasks: impl IntoIterator<Item = tokio::task::JoinHandle<toolcell_runtime::ToolOutput>>,
) -> Vec<toolcell_runtime::ToolOutput> {
    let mut outputs = Vec::new();
    for task in tasks {
        outputs.push(task.await.unwrap());
    }
    outputs
}

/// A runtime granting `fd_hog` a folder holding `file.txt`.
async fn fd_hog_runtime(name: &str) -> (Runtime, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("toolcell-fd-hog-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("file.txt"), "open me").unwrap();
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::FD_HOG)
        .grant("fd_hog", Grants::new().dir(toolcell_runtime::policy::DirGrant::read_only(&dir, "/data")))
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    (runtime, dir)
}

fn hog(count: u32, mode: &str, hold_ms: u64) -> ToolCall {
    ToolCall::new("hog", "fd_hog", json!({ "count": count, "mode": mode, "hold_ms": hold_ms }))
}

#[tokio::test]
async fn open_files_are_bounded_per_call_and_per_runtime() {
    let (runtime, dir) = fd_hog_runtime("bounds").await;
    // One call keeping 200 files open (or 200 streams, each keeping its file open).
    for mode in ["keep", "stream"] {
        let output = runtime.call(hog(200, mode, 0)).await;
        assert_eq!(
            output.error,
            Some(CallError::ResourceLimit { resource: "open files and directories of one call".into(), limit: 64 }),
            "{mode}: {output:#?}"
        );
        let detail = output.diagnostics.detail.as_deref().unwrap_or_default();
        assert!(detail.contains("open number 65 failed"), "the 65th open failed inside the tool: {detail}");
    }
    // Files closed again do not count, and the bound is given back when a call ends.
    assert_eq!(value(&runtime.call(hog(2_000, "close", 0)).await), json!(2_000));
    assert_eq!(value(&runtime.call(hog(64, "keep", 0)).await), json!(64));

    // Six calls holding 60 each at once: 360 > 256 for the runtime.
    let outputs = runtime.call_all((0..6).map(|_| hog(60, "keep", 1_500))).await;
    let refused: Vec<_> = outputs.iter().filter(|output| output.is_error).collect();
    assert!(!refused.is_empty() && refused.len() < 6, "{outputs:#?}");
    for output in refused {
        assert!(
            matches!(&output.error, Some(CallError::ResourceLimit { resource, limit: 256 }) if resource.contains("all calls")),
            "{output:#?}"
        );
    }
    assert_eq!(value(&runtime.call(hog(60, "keep", 0)).await), json!(60), "every call gave its files back");
    let _ = std::fs::remove_dir_all(dir);
}
