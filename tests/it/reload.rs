//! `Runtime::reload`: a new version of the tools from the same sources, compiling only
//! what changed, keeping what breaks, and leaving calls in flight on their version.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolcell_runtime::{CallError, LimitOverrides, Runtime, RuntimeError, ToolCall};

use crate::common::{COMPILE_CACHE, Folder};

fn names(runtime: &Runtime) -> Vec<String> {
    runtime.definitions().map(|tool| tool.name.clone()).collect()
}

#[tokio::test]
async fn a_reload_compiles_only_the_files_that_changed() {
    let folder = Folder::new("changed");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    folder.put("counter.wasm", toolcell_tests::COUNTER);
    let first = folder.runtime().await;

    let (same, compiled) = first.reload().await.unwrap();
    assert_eq!(compiled, Vec::<String>::new(), "nothing changed, nothing compiled");
    assert_eq!(names(&same), ["counter", "echo"]);

    folder.put("panic.wasm", toolcell_tests::PANIC);
    folder.put("echo.wasm", toolcell_tests::ECHO_DUPLICATE);
    std::fs::remove_file(folder.0.join("counter.wasm")).unwrap();
    let (next, mut compiled) = same.reload().await.unwrap();
    compiled.sort();
    assert_eq!(compiled, [folder.source("echo.wasm"), folder.source("panic.wasm")]);
    assert_eq!(names(&next), ["echo", "panic"]);
    assert!(next.definition("echo").unwrap().description.contains("Also claims"), "the replaced echo");
    assert_eq!(next.diagnostics(), &[]);
}

#[tokio::test]
async fn a_broken_replacement_keeps_the_previous_version_serving() {
    let folder = Folder::new("broken");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    let first = folder.runtime().await;
    folder.write("echo.wasm", "not a component");
    folder.write("new.wasm", "not one either");

    let (next, _) = first.reload().await.unwrap();
    assert_eq!(names(&next), ["echo"]);
    let output = next.call(ToolCall::new("c", "echo", json!({"text": "still here", "count": 1}))).await;
    assert!(!output.is_error, "{output:?}");
    let reasons: Vec<(String, String)> =
        next.diagnostics().iter().map(|d| (d.source.clone(), d.reason.clone())).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons[0].0, folder.source("echo.wasm"));
    assert!(reasons[0].1.contains("stays at the version loaded before"), "{reasons:?}");
    assert_eq!(reasons[1].0, folder.source("new.wasm"));
}

#[tokio::test]
async fn a_broken_policy_fails_the_reload_and_a_fixed_one_applies() {
    let folder = Folder::new("policy");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    let first = folder.runtime().await;
    folder.write("toolcell.toml", "[tools.echo]\nlimits = { timeout_ms = \"soon\" }\n");
    assert!(matches!(first.reload().await, Err(RuntimeError::Policy(_))));

    folder.write("toolcell.toml", "[tools.echo]\nlimits = { timeout_ms = 1234 }\n");
    let (next, compiled) = first.reload().await.unwrap();
    assert!(compiled.is_empty(), "a policy change recompiles nothing");
    assert_eq!(next.limits("echo").unwrap().timeout, Duration::from_millis(1234));
    assert_eq!(first.limits("echo").unwrap().timeout, Duration::from_secs(5), "the old version is unchanged");
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_version_it_started_with() {
    let folder = Folder::new("in-flight");
    folder.put("sleeper.wasm", toolcell_tests::SLEEPER);
    let first = folder.runtime().await;
    let limits = LimitOverrides::new().timeout(Duration::from_millis(400));
    let running = tokio::spawn({
        let first = first.clone();
        async move { first.call(ToolCall::new("c", "sleeper", json!({})).with_limits(limits)).await }
    });
    while first.calls_in_flight().running == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    std::fs::remove_file(Path::new(&folder.source("sleeper.wasm"))).unwrap();
    let (next, _) = first.reload().await.unwrap();
    assert_eq!(names(&next), Vec::<String>::new());
    assert_eq!(next.calls_in_flight().running, 1, "versions share one concurrency limit");
    let output = running.await.unwrap();
    assert_eq!(output.error, Some(CallError::Timeout { limit_ms: 400 }), "it ran to its own end");
}

#[tokio::test]
async fn with_pooling_a_memory_limit_above_the_slots_fails_the_reload() {
    let folder = Folder::new("pool");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    folder.write("toolcell.toml", "[tools.echo]\nlimits = { memory_bytes = 33554432 }\n");
    let first = Runtime::builder().tools_dir(&folder.0).compile_cache(COMPILE_CACHE).pooling(2).build().await.unwrap();

    folder.write("toolcell.toml", "[tools.echo]\nlimits = { memory_bytes = 134217728 }\n");
    let refused = first.reload().await.map(|_| ()).unwrap_err();
    assert!(
        matches!(&refused, RuntimeError::MemoryAbovePoolSlot { tool, limit_bytes: 134_217_728, .. } if tool == "echo"),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("restart"), "{refused}");

    folder.write("toolcell.toml", "[tools.echo]\nlimits = { memory_bytes = 16777216 }\n");
    let (next, _) = first.reload().await.unwrap();
    assert_eq!(next.limits("echo").unwrap().memory_bytes, 16_777_216, "a limit the slots hold applies");
}

#[tokio::test]
async fn a_reload_that_reads_what_this_version_was_built_from_is_this_version() {
    let folder = Folder::new("unchanged");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    folder.write("broken.wasm", "not a component");
    folder.write("toolcell.toml", "[tools.echo]\nlimits = { timeout_ms = 1234 }\n");
    let first = folder.runtime().await;

    let (same, compiled) = first.reload().await.unwrap();
    assert!(same.same_version(&first), "nothing changed: nothing is built, logged or compiled");
    assert!(compiled.is_empty());
    // The same bytes written again: read again, found the same.
    folder.put("echo.wasm", toolcell_tests::ECHO);
    folder.write("broken.wasm", "not a component");
    folder.write("toolcell.toml", "[tools.echo]\nlimits = { timeout_ms = 1234 }\n");
    let (same, _) = first.reload().await.unwrap();
    assert!(same.same_version(&first), "the same bytes again are no change");

    folder.write("toolcell.toml", "[tools.echo]\nlimits = { timeout_ms = 4321 }\n");
    let (next, compiled) = first.reload().await.unwrap();
    assert!(!next.same_version(&first), "a changed policy is a new version");
    assert_eq!(compiled, [folder.source("broken.wasm")], "echo is reused; only what never loaded is tried again");
    assert_eq!(next.limits("echo").unwrap().timeout, Duration::from_millis(4321));
    assert_eq!(next.diagnostics(), first.diagnostics(), "broken.wasm is still reported");
}

#[tokio::test]
async fn a_broken_replacement_is_not_kept_at_its_old_version_under_grants_that_changed() {
    let folder = Folder::new("regrant");
    folder.put("echo.wasm", toolcell_tests::ECHO);
    folder.put("counter.wasm", toolcell_tests::COUNTER);
    let first = folder.runtime().await;
    // The operator replaces echo and grants the replacement a host in the same edit; the
    // replacement does not load. The old echo must not run under grants written for another.
    folder.write("echo.wasm", "not a component");
    folder.write("counter.wasm", "not a component either");
    folder.write("toolcell.toml", "[tools.echo]\nallow_hosts = [\"example.com\"]\n");

    let (next, _) = first.reload().await.unwrap();
    assert_eq!(names(&next), ["counter"], "counter's grants did not change: its previous version keeps serving");
    assert!(next.grants("echo").is_none(), "echo is not served");
    let echo = next.diagnostics().iter().find(|d| d.source == folder.source("echo.wasm")).unwrap();
    assert!(echo.reason.contains("not served") && echo.reason.contains("grants"), "{echo:?}");
    let counter = next.diagnostics().iter().find(|d| d.source == folder.source("counter.wasm")).unwrap();
    assert!(counter.reason.contains("stays at the version loaded before"), "{counter:?}");

    folder.put("echo.wasm", toolcell_tests::ECHO);
    let (fixed, _) = next.reload().await.unwrap();
    assert_eq!(names(&fixed), ["counter", "echo"], "the replacement loads under the grants written for it");
    assert_eq!(fixed.grants("echo").unwrap().allow_hosts.len(), 1);
}

#[tokio::test]
async fn with_every_slot_busy_a_new_component_still_loads() {
    let folder = Folder::new("busy");
    folder.put("sleeper.wasm", toolcell_tests::SLEEPER);
    folder.write("toolcell.toml", "[tools.sleeper]\nlimits = { timeout_ms = 60000 }\n");
    let first = Runtime::builder().tools_dir(&folder.0).compile_cache(COMPILE_CACHE).pooling(1).build().await.unwrap();
    let running = tokio::spawn({
        let first = first.clone();
        async move { first.call(ToolCall::new("c", "sleeper", json!({}))).await }
    });
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    while first.calls_in_flight().running == 0 {
        assert!(tokio::time::Instant::now() < until, "the sleeper starts");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    folder.put("counter.wasm", toolcell_tests::COUNTER);
    let (next, compiled) = first.reload().await.unwrap();
    assert_eq!(compiled, [folder.source("counter.wasm")]);
    assert_eq!(next.diagnostics(), &[], "loading does not compete with the call for the pool's slot");
    assert_eq!(names(&next), ["counter", "sleeper"]);
    assert_eq!(first.calls_in_flight().running, 1, "the sleeper still holds the only call slot");
    running.abort();
}
