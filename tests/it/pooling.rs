//! The pooling allocator: reused instance slots must behave exactly like fresh instances.

use serde_json::json;
use toolcell_runtime::{CallError, LimitOverrides, Runtime, RuntimeBuilder, ToolCall};

use crate::common::{COMPILE_CACHE, kind, value};

async fn pooled(slots: u32) -> Runtime {
    pooled_builder(slots).build().await.unwrap()
}

fn pooled_builder(slots: u32) -> toolcell_runtime::RuntimeBuilder {
    Runtime::builder()
        .component_file(toolcell_tests::COUNTER)
        .component_file(toolcell_tests::ECHO)
        .component_file(toolcell_tests::MEMORY_BOMB)
        .component_file(toolcell_tests::PANIC)
        .component_file(toolcell_tests::TABLE_BOMB)
        .component_file(toolcell_tools::CALCULATOR)
        .tool_limits("memory_bomb", LimitOverrides::new().memory_bytes(16 << 20))
        .compile_cache(COMPILE_CACHE)
        .pooling(slots)
}

#[tokio::test]
async fn calls_beyond_the_pool_queue_instead_of_failing() {
    let runtime = pooled(2).await;
    let calls = (0..12).map(|i| ToolCall::new(format!("c{i}"), "echo", json!({"text": format!("n{i}"), "count": 1})));
    let outputs = runtime.call_all(calls).await;
    for (i, output) in outputs.iter().enumerate() {
        assert_eq!(value(output)["text"], format!("n{i}"));
    }
}

#[tokio::test]
async fn a_reused_slot_starts_clean() {
    let runtime = pooled(1).await;
    for _ in 0..5 {
        assert_eq!(value(&runtime.call(ToolCall::new("1", "counter", "{}")).await), json!(1));
        assert_eq!(kind(&runtime.call(ToolCall::new("2", "panic", "{}")).await), "crashed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_state_survives_a_reused_slot_under_any_allocator() {
    type Configure = fn(RuntimeBuilder) -> RuntimeBuilder;
    let allocators: [(&str, Configure); 3] = [
        ("the default", |builder| builder),
        ("pooling with 2 slots", |builder| builder.pooling(2)),
        ("on-demand", RuntimeBuilder::on_demand),
    ];
    for (allocator, configure) in allocators {
        let builder = Runtime::builder()
            .component_file(toolcell_tests::COUNTER)
            .component_file(toolcell_tests::RESIDUE)
            .component_file(toolcell_tests::MEMORY_BOMB)
            .tool_limits("memory_bomb", LimitOverrides::new().memory_bytes(16 << 20))
            .compile_cache(COMPILE_CACHE);
        let runtime = configure(builder).build().await.unwrap();
        assert_eq!(runtime.diagnostics(), &[], "{allocator}");
        let clean = json!({"static_bytes": 0, "grown_bytes": 0});
        for round in 0..3 {
            assert_eq!(value(&runtime.call(ToolCall::new("1", "residue", "{}")).await), clean, "{allocator}, {round}");
            assert_eq!(value(&runtime.call(ToolCall::new("2", "counter", "{}")).await), json!(1), "{allocator}");
        }
        // Concurrent calls share and reuse the slots; a memory bomb dirties 16 MiB of one.
        let tools = ["residue", "counter", "memory_bomb", "residue", "counter", "residue"];
        let calls = (0..48).map(|i| ToolCall::new(format!("c{i}"), tools[i % tools.len()], "{}"));
        for output in runtime.call_all(calls).await {
            match output.tool.as_str() {
                "residue" => assert_eq!(value(&output), clean, "{allocator}"),
                "counter" => assert_eq!(value(&output), json!(1), "{allocator}"),
                _ => assert_eq!(kind(&output), "memory_limit", "{allocator}: {output:#?}"),
            }
        }
    }
}

#[tokio::test]
async fn limits_hold_in_pooled_slots() {
    let runtime = pooled(2).await;
    let output = runtime.call(ToolCall::new("1", "memory_bomb", "{}")).await;
    assert_eq!(kind(&output), "memory_limit", "{output:#?}");
    // A per-call override cannot raise the tool's own 16 MiB.
    let bigger = LimitOverrides::new().memory_bytes(1 << 30);
    let output = runtime.call(ToolCall::new("2", "memory_bomb", "{}").with_limits(bigger)).await;
    let Some(CallError::MemoryLimit { limit_bytes, .. }) = output.error else { panic!("{output:#?}") };
    assert_eq!(limit_bytes, 16 << 20);
    // Where the embedding allows raising, no call may still outgrow the pool's slots: the
    // limit is lowered to the largest configured one (the 64 MiB default here).
    let raising = pooled_builder(2).allow_raising_limits_per_call().build().await.unwrap();
    let output = raising.call(ToolCall::new("2", "memory_bomb", "{}").with_limits(bigger)).await;
    let Some(CallError::MemoryLimit { limit_bytes, .. }) = output.error else { panic!("{output:#?}") };
    assert_eq!(limit_bytes, 64 << 20);
    let sum = runtime.call(ToolCall::new("3", "calculator", json!({"expression": "40 + 2"}))).await;
    assert_eq!(value(&sum)["value"], json!(42.0));
}

#[tokio::test]
async fn a_table_bomb_in_a_pooled_slot_hits_the_memory_limit() {
    // The pool's tables are sized from the memory limit, so the limiter refuses first and
    // the call reports `memory_limit`, as it does without pooling (not an abort).
    let runtime = pooled(1).await;
    for limit in [8 << 20, 64 << 20] {
        let limits = LimitOverrides::new().memory_bytes(limit);
        let output = runtime.call(ToolCall::new("1", "table_bomb", "{}").with_limits(limits)).await;
        let Some(CallError::MemoryLimit { limit_bytes, requested_bytes }) = output.error else { panic!("{output:#?}") };
        assert_eq!(limit_bytes, limit);
        assert!(requested_bytes > limit, "{requested_bytes}");
    }
    let sum = runtime.call(ToolCall::new("2", "calculator", json!({"expression": "40 + 2"}))).await;
    assert_eq!(value(&sum)["value"], json!(42.0));
}

#[tokio::test]
async fn a_tool_needing_more_than_one_slots_share_of_the_pool_is_refused_at_load() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::MANY_MEMORIES)
        .component_file(toolcell_tools::CALCULATOR)
        .compile_cache(COMPILE_CACHE)
        .pooling(16)
        .build()
        .await
        .unwrap();
    let names: Vec<&str> = runtime.definitions().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["calculator"]);
    let diagnostic = &runtime.diagnostics()[0];
    assert!(diagnostic.source.ends_with("many_memories.wasm"), "{diagnostic:?}");
    assert!(
        diagnostic.reason.contains("pooled instance slot") && diagnostic.reason.contains("65 core module instances"),
        "{diagnostic:?}"
    );
    // The innocent calls all get their slot.
    let calls = (0..32).map(|i| ToolCall::new(format!("c{i}"), "calculator", json!({"expression": "6 * 7"})));
    for output in runtime.call_all(calls).await {
        assert_eq!(value(&output)["value"], json!(42.0));
    }
    // Without pooling there is no pool to starve: the same component loads.
    let unpooled = Runtime::builder()
        .component_file(toolcell_tests::MANY_MEMORIES)
        .compile_cache(COMPILE_CACHE)
        .on_demand()
        .build()
        .await;
    assert_eq!(unpooled.unwrap().diagnostics(), &[]);
}

#[tokio::test]
async fn a_pool_too_big_to_reserve_falls_back_to_mapping_per_call_unless_asked_for() {
    // 100,000 slots of 4 memories would reserve petabytes of address space.
    let slots = 100_000;
    let fallback = Runtime::builder()
        .component_file(toolcell_tests::COUNTER)
        .compile_cache(COMPILE_CACHE)
        .max_concurrent_calls(slots)
        .build()
        .await
        .expect("the default allocator falls back");
    assert_eq!(value(&fallback.call(ToolCall::new("1", "counter", "{}")).await), json!(1));
    assert_eq!(fallback.calls_in_flight().limit, slots as usize);
    let Err(err) = Runtime::builder().component_file(toolcell_tests::COUNTER).pooling(slots).build().await else {
        panic!("an explicit pool that cannot be reserved is an error");
    };
    let message = err.to_string();
    assert!(message.contains("pool of 100000 instance slots") && message.contains("on_demand()"), "{message}");
}
