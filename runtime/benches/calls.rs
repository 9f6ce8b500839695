//! What a call costs: the median and p99 latency of one call (fresh instance, validation and
//! all) for each standard tool, the cost of a call the host refuses before the guest runs,
//! and throughput with concurrent calls; with wasmtime's pooling instance allocator (the
//! default) and with the on-demand one (`RuntimeBuilder::on_demand`).
//!
//! Run with `cargo bench -p toolcell-runtime --bench calls` (release build). Figures vary
//! with the machine and its load: compare runs on the same machine.
//!
//! `cargo test` runs it too (it has `test = true`), as a smoke test: a few samples of each
//! measurement, so that the benchmark keeps working; its figures then mean nothing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use toolcell_runtime::{Runtime, ToolCall};

/// How much to measure: the real thing under `cargo bench`, a smoke test under `cargo test`.
#[derive(Clone, Copy)]
struct Size {
    smoke: bool,
    warmup: usize,
    samples: usize,
    throughput_calls: usize,
}

impl Size {
    /// `cargo bench` passes `--bench` to a `harness = false` benchmark; `cargo test` does not.
    fn from_args() -> Self {
        if std::env::args().any(|arg| arg == "--bench") {
            Self { smoke: false, warmup: 50, samples: 1000, throughput_calls: 20_000 }
        } else {
            println!("smoke test (figures are meaningless): run `cargo bench -p toolcell-runtime --bench calls`");
            Self { smoke: true, warmup: 2, samples: 10, throughput_calls: 40 }
        }
    }
}

fn main() {
    let size = Size::from_args();
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    tokio.block_on(async {
        // A benchmark measures compiling, then loading from a cache of its own. The smoke test
        // shares the test suite's cache, so CI compiles each tool once.
        let cache = if size.smoke {
            PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
        } else {
            std::env::temp_dir().join(format!("toolcell-bench-cache-{}", std::process::id()))
        };
        let started = Instant::now();
        let compiled = Runtime::builder().tools_dir(toolcell_tools::DIR);
        let compiled = if size.smoke { compiled.compile_cache(&cache) } else { compiled };
        let runtime = compiled.build().await.expect("runtime");
        let tools = toolcell_tools::ALL.len();
        println!("load {tools} tools (compile + metadata): {:.0} ms", started.elapsed().as_secs_f64() * 1000.0);
        assert!(runtime.diagnostics().is_empty(), "{:?}", runtime.diagnostics());
        assert_eq!(runtime.definitions().len(), tools);

        let _warm =
            Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(&cache).build().await.expect("runtime");
        let started = Instant::now();
        let cached =
            Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(&cache).build().await.expect("runtime");
        println!("load {tools} tools from the compile cache: {:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(cached.definitions().len(), tools);

        measure("pooling allocator (the default)", &runtime, size).await;
        let on_demand = Runtime::builder()
            .tools_dir(toolcell_tools::DIR)
            .compile_cache(&cache)
            .on_demand()
            .build()
            .await
            .expect("runtime");
        measure("on-demand allocator", &on_demand, size).await;
        if !size.smoke {
            let _ = std::fs::remove_dir_all(&cache);
            let _ = std::fs::remove_file(cache.with_extension("key"));
        }
    });
}

async fn measure(allocator: &str, runtime: &Runtime, size: Size) {
    let Size { warmup, samples, throughput_calls, .. } = size;
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
        let mut durations = Vec::with_capacity(samples);
        let (mut fuel, mut memory) = (0, 0);
        for i in 0..warmup + samples {
            let call = ToolCall::new("bench", tool, arguments.clone());
            let started = Instant::now();
            let output = runtime.call(call).await;
            let elapsed = started.elapsed();
            assert_eq!(output.is_error, label.contains("invalid"), "{label}: {}", output.content);
            fuel = output.usage.fuel_consumed;
            memory = output.usage.peak_memory_bytes;
            if i >= warmup {
                durations.push(elapsed);
            }
        }
        durations.sort();
        println!(
            "{label:<55} {:>7.1} µs {:>7.1} µs {fuel:>10} {:>8.2} MiB",
            micros(durations[samples / 2]),
            micros(durations[samples * 99 / 100]),
            memory as f64 / f64::from(1 << 20)
        );
    }

    println!("\nthroughput, calculator, {throughput_calls} calls:");
    for concurrency in [1, 2, 4] {
        let started = Instant::now();
        let per_task = throughput_calls / concurrency;
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
