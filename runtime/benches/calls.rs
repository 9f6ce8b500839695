//! What a call costs: the median and p99 latency of one call (fresh instance, validation and
//! all) for each standard tool, the cost of a call the host refuses before the guest runs,
//! and throughput with concurrent calls; with wasmtime's on-demand instance allocator (the
//! default) and with the pooling allocator (`RuntimeBuilder::pooling`).
//!
//! Run with `cargo bench -p toolcell-runtime --bench calls` (release build). Figures vary
//! with the machine and its load: compare runs on the same machine.

use std::time::{Duration, Instant};

use serde_json::json;
use toolcell_runtime::{Runtime, ToolCall};

const WARMUP: usize = 50;
const SAMPLES: usize = 1000;

fn main() {
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    tokio.block_on(async {
        let started = Instant::now();
        let runtime = Runtime::builder().tools_dir(toolcell_tools::DIR).build().await.expect("runtime");
        println!("load 7 tools (compile + metadata): {:.0} ms", started.elapsed().as_secs_f64() * 1000.0);
        assert!(runtime.diagnostics().is_empty(), "{:?}", runtime.diagnostics());

        let cache = std::env::temp_dir().join(format!("toolcell-bench-cache-{}", std::process::id()));
        let _warm =
            Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(&cache).build().await.expect("runtime");
        let started = Instant::now();
        let cached =
            Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(&cache).build().await.expect("runtime");
        println!("load 7 tools from the compile cache: {:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(cached.definitions().len(), 5);

        measure("on-demand allocator (default)", &runtime).await;
        let pooled = Runtime::builder()
            .tools_dir(toolcell_tools::DIR)
            .compile_cache(&cache)
            .pooling(16)
            .build()
            .await
            .expect("runtime");
        measure("pooling allocator, 16 slots", &pooled).await;
        let _ = std::fs::remove_dir_all(&cache);
    });
}

async fn measure(allocator: &str, runtime: &Runtime) {
    println!("\n== {allocator}");
    let cases = [
        ("calculator", json!({"expression": "2 * (3 + sqrt(16)) ^ 2"})),
        ("json_query", json!({"document": {"a": [1, 2, 3]}, "query": "$.a[?@ > 1]"})),
        ("regex", json!({"pattern": "\\d+", "text": "a1b22c333", "operation": "find"})),
        (
            "datetime",
            json!({"operation": "add", "instant": "2024-03-10T01:30:00-05:00", "duration": "PT2H", "time_zone": "America/New_York"}),
        ),
        ("unit_convert", json!({"value": 1.0, "from": "mile", "to": "kilometer"})),
        ("calculator (invalid arguments, refused by the host)", json!({"expresion": "1"})),
    ];
    println!(
        "\n{:<55} {:>10} {:>10} {:>10} {:>12}",
        "call (fresh instance each)", "median", "p99", "fuel", "peak memory"
    );
    for (label, arguments) in cases {
        let tool = label.split(' ').next().unwrap_or(label);
        let mut durations = Vec::with_capacity(SAMPLES);
        let (mut fuel, mut memory) = (0, 0);
        for i in 0..WARMUP + SAMPLES {
            let call = ToolCall::new("bench", tool, arguments.clone());
            let started = Instant::now();
            let output = runtime.call(call).await;
            let elapsed = started.elapsed();
            assert_eq!(output.is_error, label.contains("invalid"), "{label}: {}", output.content);
            fuel = output.usage.fuel_consumed;
            memory = output.usage.peak_memory_bytes;
            if i >= WARMUP {
                durations.push(elapsed);
            }
        }
        durations.sort();
        println!(
            "{label:<55} {:>7.1} µs {:>7.1} µs {fuel:>10} {:>8.2} MiB",
            micros(durations[SAMPLES / 2]),
            micros(durations[SAMPLES * 99 / 100]),
            memory as f64 / f64::from(1 << 20)
        );
    }

    println!("\nthroughput, calculator, 20,000 calls:");
    for concurrency in [1, 2, 4] {
        let started = Instant::now();
        let per_task = 20_000 / concurrency;
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                let runtime = runtime.clone();
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        let call = ToolCall::new("bench", "calculator", json!({"expression": "1 + 2 * 3"}));
                        assert!(!runtime.call(call).await.is_error);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("bench task");
        }
        let rate = (per_task * concurrency) as f64 / started.elapsed().as_secs_f64();
        println!("  {concurrency} concurrent: {rate:>8.0} calls/s");
    }
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
