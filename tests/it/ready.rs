//! Instances made ready before their call: each serves one call and starts clean, runs under
//! the call's own deadline, stdout sink, nested calls and limits, and is never called by
//! another version of the tools than the one it was made for.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolcell_runtime::policy::Grants;
use toolcell_runtime::{LimitOverrides, Limits, Runtime, ToolCall, ToolOutput};

use crate::common::{COMPILE_CACHE, Folder, kind, value};

/// Calls of `tool` so far that ran in an instance made ready before them.
fn ready_calls(runtime: &Runtime, tool: &str) -> u64 {
    runtime.metrics().tools.get(tool).map_or(0, |tool| tool.ready_instance_calls)
}

/// A call of `tool` that ran in an instance made ready before it. The runtime makes one once
/// it has had no call running for a moment, so this pauses before each call, for at most 4 s
/// in all (a tool's first call always makes its own instance).
async fn ready_call(runtime: &Runtime, call: ToolCall) -> ToolOutput {
    ready_call_of(runtime, || call.clone()).await
}

/// [`ready_call`] of the call `make` makes, a new one for each attempt.
async fn ready_call_of(runtime: &Runtime, make: impl Fn() -> ToolCall) -> ToolOutput {
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let call = make();
        let tool = call.name.clone();
        let before = ready_calls(runtime, &tool);
        let output = runtime.call(call).await;
        if ready_calls(runtime, &tool) > before {
            return output;
        }
    }
    panic!("no call ran in an instance made ready before it within 4 s");
}

fn guests(paths: &[&str]) -> toolcell_runtime::RuntimeBuilder {
    paths.iter().fold(Runtime::builder().compile_cache(COMPILE_CACHE), |builder, path| builder.component_file(path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_instance_serves_one_call_and_starts_clean() {
    let runtime = guests(&[toolcell_tests::COUNTER, toolcell_tests::RESIDUE]).build().await.unwrap();
    let clean = json!({"static_bytes": 0, "grown_bytes": 0});
    for round in 0..4 {
        let counted = ready_call(&runtime, ToolCall::new("c", "counter", "{}")).await;
        assert_eq!(value(&counted), json!(1), "round {round}: an instance is called once");
        let residue = ready_call(&runtime, ToolCall::new("r", "residue", "{}")).await;
        assert_eq!(value(&residue), clean, "round {round}: nothing an earlier call wrote");
    }
    // Back to back, whichever instance each call gets.
    for _ in 0..10 {
        assert_eq!(value(&runtime.call(ToolCall::new("c", "counter", "{}")).await), json!(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_instance_runs_under_the_calls_deadline() {
    let timeout = LimitOverrides::new().timeout(Duration::from_millis(600));
    let runtime = crate::common::standard_tools()
        .component_file(toolcell_tests::SLEEPER)
        .tool_limits("python", timeout)
        .tool_limits("sleeper", timeout)
        .build()
        .await
        .unwrap();
    // Made ready long before the call, past its tool's timeout: a program that computes
    // across many epoch ticks still has all of its call's time.
    let busy = json!({"code": "t = 0\nfor i in range(300_000):\n    t += i\nt"});
    value(&runtime.call(ToolCall::new("p", "python", busy.clone())).await);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let late = ready_call(&runtime, ToolCall::new("p", "python", busy)).await;
    assert_eq!(value(&late)["value"], json!(44_999_850_000_u64), "{late:#?}");
    // And a guest that blocks is stopped by it, not earlier and not never.
    let stopped = ready_call(&runtime, ToolCall::new("s", "sleeper", "{}")).await;
    assert_eq!(kind(&stopped), "timeout", "{stopped:#?}");
    assert!(stopped.usage.duration >= Duration::from_millis(500), "stopped after {:?}", stopped.usage.duration);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_limits_of_its_own_makes_its_own_instance() {
    let runtime = guests(&[toolcell_tests::MEMORY_BOMB, toolcell_tests::COUNTER])
        .tool_limits("memory_bomb", LimitOverrides::new().memory_bytes(16 << 20))
        .build()
        .await
        .unwrap();
    ready_call(&runtime, ToolCall::new("c", "counter", "{}")).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let before = ready_calls(&runtime, "counter");
    let fuel = LimitOverrides::new().fuel(1_000_000);
    let own = runtime.call(ToolCall::new("c", "counter", "{}").with_limits(fuel)).await;
    assert_eq!(value(&own), json!(1));
    assert_eq!(ready_calls(&runtime, "counter"), before, "made under other limits: not taken");
    // A ready instance's memory limit is the call's: the bomb is stopped at 16 MiB.
    let bomb = ready_call(&runtime, ToolCall::new("b", "memory_bomb", "{}")).await;
    assert_eq!(kind(&bomb), "memory_limit", "{bomb:#?}");
    let smaller = LimitOverrides::new().memory_bytes(4 << 20);
    let bomb = runtime.call(ToolCall::new("b", "memory_bomb", "{}").with_limits(smaller)).await;
    assert_eq!(kind(&bomb), "memory_limit");
    assert!(bomb.usage.peak_memory_bytes <= 4 << 20, "{bomb:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_instances_start_big_never_has_one_kept_ready() {
    // 132 MiB from its start: kept ready, two of it would make the host hold 264 MiB between
    // calls, past what all ready instances together may hold (256 MiB).
    let roomy = Limits::default().with(&LimitOverrides::new().memory_bytes(256 << 20));
    let runtime = guests(&[toolcell_tests::BIG_START, toolcell_tests::COUNTER]).limits(roomy).build().await.unwrap();
    assert_eq!(runtime.diagnostics(), &[]);
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let output = runtime.call(ToolCall::new("b", "big_start", "{}")).await;
        assert_eq!(value(&output), json!(1));
        assert!(output.usage.peak_memory_bytes >= 132 << 20, "{output:#?}");
    }
    assert_eq!(ready_calls(&runtime, "big_start"), 0, "every call made its own instance");
    // Other tools still have theirs.
    ready_call(&runtime, ToolCall::new("c", "counter", "{}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_never_calls_an_instance_made_for_the_version_before() {
    let folder = Folder::new("ready-reload");
    folder.put("env_reader.wasm", toolcell_tests::ENV_READER);
    let grant = |value: &str| format!("[tools.env_reader]\nenv = {{ API_TOKEN = \"{value}\" }}\n");
    folder.write("toolcell.toml", &grant("first"));
    let first = folder.runtime().await;
    let read = || ToolCall::new("e", "env_reader", json!({"name": "API_TOKEN"}));
    assert_eq!(value(&ready_call(&first, read()).await), json!("token=first"));
    // One is ready for the first version now; the next version must not get it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    folder.write("toolcell.toml", &grant("second"));
    let (next, _) = first.reload().await.unwrap();
    assert_eq!(value(&next.call(read()).await), json!("token=second"));
    assert_eq!(value(&ready_call(&next, read()).await), json!("token=second"));
    assert_eq!(value(&first.call(read()).await), json!("token=first"), "the old version keeps its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_instance_streams_stdout_to_the_calls_sink() {
    type Lines = Arc<Mutex<Vec<String>>>;
    let runtime = guests(&[toolcell_tests::CHATTY]).build().await.unwrap();
    // Each attempt its own sink: the lines below are the ready call's alone.
    let latest: Arc<Mutex<Lines>> = Arc::default();
    let output = ready_call_of(&runtime, || {
        let lines = Lines::default();
        *latest.lock().unwrap() = lines.clone();
        ToolCall::new("c", "chatty", json!({})).on_stdout_line(move |line| lines.lock().unwrap().push(line.to_owned()))
    })
    .await;
    assert_eq!(value(&output), json!("done"));
    let lines = latest.lock().unwrap().clone();
    let lines = lines.lock().unwrap();
    assert_eq!(lines.first().map(String::as_str), Some("stdout line 0"), "the call's own sink, from its start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_python_instance_calls_the_tools_its_call_may_call() {
    let grants = Grants::new().call_tool("calculator");
    let runtime = crate::common::standard_tools().grant("python", grants).build().await.unwrap();
    let program = json!({"code": "tools.calculator(expression='2 + 3')"});
    let output = ready_call(&runtime, ToolCall::new("p", "python", program)).await;
    assert_eq!(value(&output)["value"], json!({"value": 5.0}), "{output:#?}");
    assert_eq!(output.usage.nested_calls, 1);
}

/// What a python program finds of an earlier program's changes, as JSON.
const LOOK_FOR_RESIDUE: &str = r#"
import builtins, json, sys, random
found = {
    "builtin": hasattr(builtins, "left_behind"),
    "module_attribute": hasattr(json, "left_behind"),
    "module": "left_behind" in sys.modules,
    "recursion_limit": sys.getrecursionlimit(),
    "random": random.random(),
}
builtins.left_behind = 1
json.left_behind = 2
sys.modules["left_behind"] = json
sys.setrecursionlimit(123)
random.seed(99)
found
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_program_leaves_nothing_for_the_next_in_a_ready_instance() {
    let runtime = crate::common::standard_tools().build().await.unwrap();
    let program = json!({"code": LOOK_FOR_RESIDUE});
    let first = value(&runtime.call(ToolCall::new("p", "python", program.clone())).await);
    for round in 0..3 {
        let next = value(&ready_call(&runtime, ToolCall::new("p", "python", program.clone())).await);
        assert_eq!(next["value"], first["value"], "round {round}: {next:#}");
    }
    let found: &Value = &first["value"];
    assert_eq!((&found["builtin"], &found["module"]), (&json!(false), &json!(false)), "{found:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_told_not_to_makes_no_instance_ready() {
    let runtime = guests(&[toolcell_tests::COUNTER]).ready_instances(false).build().await.unwrap();
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(value(&runtime.call(ToolCall::new("c", "counter", "{}")).await), json!(1));
    }
    assert_eq!(ready_calls(&runtime, "counter"), 0, "every call made its own instance");
    // The default makes them, in the same pauses.
    let runtime = guests(&[toolcell_tests::COUNTER]).build().await.unwrap();
    ready_call(&runtime, ToolCall::new("c", "counter", "{}")).await;
}
