//! toolcell beside the alternatives, in one run on one machine: `bench/run` (or
//! `cargo run --release --manifest-path bench/Cargo.toml`). `--quick` takes fewer samples
//! (for checking that it works; its figures are noisy). Prints every figure as Markdown
//! tables and writes them as JSON to `bench/results.json`.

mod baselines;
mod stats;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolcell_runtime::{LimitOverrides, Runtime, RuntimeBuilder, ToolCall};

use stats::{Latency, ratio};

/// The benchmark's own tools: `ADD`, `CONCAT`, `WORD_COUNT`, `NAP`, `SPIN` (paths).
mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

/// How much to measure.
#[derive(Clone, Copy)]
struct Size {
    calls: usize,
    process_calls: usize,
    throughput_calls: usize,
    timeouts: usize,
    in_flight: usize,
}

const FULL: Size =
    Size { calls: 20_000, process_calls: 500, throughput_calls: 100_000, timeouts: 100, in_flight: 1000 };
const QUICK: Size = Size { calls: 1000, process_calls: 50, throughput_calls: 5000, timeouts: 5, in_flight: 100 };

fn main() {
    let size = if std::env::args().any(|arg| arg == "--quick") { QUICK } else { FULL };
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio");
    if std::env::args().any(|arg| arg == "--memory-only") {
        let memory = tokio.block_on(memory(size));
        println!("{memory}");
        return;
    }
    let mut results = serde_json::Map::new();
    println!("# toolcell benchmarks\n\n{}\n", machine());

    let latencies = tokio.block_on(per_call(size));
    print_latencies(&latencies);
    results.insert("latency".into(), json!(latencies));

    let throughput = tokio.block_on(throughput(size));
    results.insert("throughput".into(), throughput);

    let startup = tokio.block_on(startup());
    results.insert("startup".into(), startup);

    let overshoot = tokio.block_on(timeout_overshoot(size));
    results.insert("timeout_overshoot".into(), overshoot);

    let memory = memory_in_a_new_process(size);
    results.insert("memory".into(), memory);

    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("results.json");
    std::fs::write(&file, serde_json::to_string_pretty(&results).expect("JSON")).expect("write results.json");
    println!("\n(all figures also in {})", file.display());
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .map(|line| line.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("Machine: {cores} cores ({cpu}), Linux {}", kernel.trim())
}

async fn runtime(configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder, cache: &Path) -> Runtime {
    let builder = Runtime::builder()
        .component_file(guests::ADD)
        .component_file(toolcell_tools::CALCULATOR)
        .component_file(guests::NAP)
        .component_file(guests::SPIN)
        .compile_cache(cache);
    let runtime = configure(builder).build().await.expect("runtime");
    assert_eq!(runtime.diagnostics(), &[], "every tool loads");
    runtime
}

fn cache_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("toolcell-bench-{name}-{}", std::process::id()))
}

fn remove_cache(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_file(dir.with_extension("key"));
}

/// 1-5: one call at a time, every approach.
async fn per_call(size: Size) -> Vec<Latency> {
    let cache = cache_dir("calls");
    let pooled = runtime(|builder| builder, &cache).await;
    let on_demand = runtime(RuntimeBuilder::on_demand, &cache).await;
    let add = json!({"a": 1.5, "b": 2.25});
    let calculator = json!({"expression": "2 * (3 + sqrt(16)) ^ 2"});
    let mut latencies = vec![
        Latency::from_samples("native Rust fn, serde_json in and out", baselines::native(size.calls)),
        Latency::from_samples(
            "call into one reused component instance (wasmtime)",
            baselines::reused_instance(Path::new(guests::ADD), size.calls),
        ),
        Latency::from_samples(
            "toolcell `add`, fresh instance, pooling (default)",
            calls(&pooled, "add", &add, size.calls).await,
        ),
        Latency::from_samples(
            "toolcell `add`, fresh instance, on-demand",
            calls(&on_demand, "add", &add, size.calls).await,
        ),
        Latency::from_samples(
            "toolcell `calculator`, fresh instance, pooling (default)",
            calls(&pooled, "calculator", &calculator, size.calls).await,
        ),
        Latency::from_samples(
            "toolcell `calculator`, fresh instance, on-demand",
            calls(&on_demand, "calculator", &calculator, size.calls).await,
        ),
    ];
    // Built beside this binary (`[[bin]] add-process`).
    let process = std::env::current_exe().expect("this binary").with_file_name("add-process");
    assert!(process.is_file(), "{} is missing: build the bench with `cargo build --release`", process.display());
    latencies.push(Latency::from_samples(
        "process per call (`add-process`, stdin/stdout)",
        baselines::process_per_call(&process, size.process_calls),
    ));
    remove_cache(&cache);
    latencies
}

async fn calls(runtime: &Runtime, tool: &str, arguments: &Value, calls: usize) -> Vec<Duration> {
    for _ in 0..calls / 20 {
        assert!(!runtime.call(ToolCall::new("warm-up", tool, arguments.clone())).await.is_error);
    }
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let call = ToolCall::new("bench", tool, arguments.clone());
        let started = Instant::now();
        let output = runtime.call(call).await;
        samples.push(started.elapsed());
        assert!(!output.is_error, "{tool}: {}", output.content);
    }
    samples
}

fn print_latencies(latencies: &[Latency]) {
    println!("## Per call, one at a time\n\n| approach | median | p99 |\n|---|---:|---:|");
    for latency in latencies {
        println!("| {} | {:.1} µs | {:.1} µs |", latency.label, latency.median_us, latency.p99_us);
    }
    let find = |prefix: &str| latencies.iter().find(|l| l.label.starts_with(prefix)).map_or(f64::NAN, |l| l.median_us);
    let add = find("toolcell `add`, fresh instance, pooling");
    println!("\nRatios of medians, against toolcell `add` (pooling):\n");
    println!("- {:.1}x the native function", ratio(add, find("native")));
    println!("- {:.1}x a call into a reused instance", ratio(add, find("call into one reused")));
    println!("- {:.0}x faster than a process per call", ratio(find("process per call"), add));
}

/// 6: calls/s with N concurrent callers, both allocators.
async fn throughput(size: Size) -> Value {
    let cache = cache_dir("throughput");
    let mut rows = Vec::new();
    println!(
        "\n## Throughput, `add`, {} calls\n\n| callers | pooling (default) | on-demand |\n|---:|---:|---:|",
        size.throughput_calls
    );
    let pooled = runtime(|builder| builder.max_concurrent_calls(64), &cache).await;
    let on_demand = runtime(|builder| builder.on_demand().max_concurrent_calls(64), &cache).await;
    for callers in [1, 2, 8, 64] {
        let rate_pooled = rate(&pooled, callers, size.throughput_calls).await;
        let rate_on_demand = rate(&on_demand, callers, size.throughput_calls).await;
        println!("| {callers} | {rate_pooled:.0} calls/s | {rate_on_demand:.0} calls/s |");
        rows.push(json!({"callers": callers, "pooling": rate_pooled, "on_demand": rate_on_demand}));
    }
    remove_cache(&cache);
    json!(rows)
}

async fn rate(runtime: &Runtime, callers: usize, total: usize) -> f64 {
    let per_caller = total / callers;
    let started = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let runtime = runtime.clone();
            tokio::spawn(async move {
                for _ in 0..per_caller {
                    let output = runtime.call(ToolCall::new("bench", "add", json!({"a": 1, "b": 2}))).await;
                    assert!(!output.is_error, "{}", output.content);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("caller");
    }
    (per_caller * callers) as f64 / started.elapsed().as_secs_f64()
}

/// 7: a folder of ten tools, cold and warm; the CLI's `invoke`, cold and warm.
async fn startup() -> Value {
    let folder = cache_dir("folder");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("folder");
    for (file, bytes) in toolcell_tools::ALL {
        std::fs::write(folder.join(file), bytes).expect("copy a standard tool");
    }
    for guest in [guests::ADD, guests::CONCAT, guests::WORD_COUNT] {
        std::fs::copy(guest, folder.join(Path::new(guest).file_name().expect("a file"))).expect("copy a tool");
    }
    let cache = cache_dir("startup");
    remove_cache(&cache);
    let load = || async {
        let started = Instant::now();
        let runtime = Runtime::builder().tools_dir(&folder).compile_cache(&cache).build().await.expect("runtime");
        assert_eq!(runtime.definitions().count(), 10);
        started.elapsed()
    };
    let cold = load().await;
    let warm: Vec<Duration> = {
        let mut warm = Vec::new();
        for _ in 0..10 {
            warm.push(load().await);
        }
        warm
    };
    let warm = Latency::from_samples("warm", warm);
    println!("\n## Start-up\n");
    println!("- a folder of 10 tools, empty cache (compiles all): {:.0} ms", cold.as_secs_f64() * 1e3);
    println!("- the same, warm cache, in a running process (median of 10): {:.1} ms", warm.median_us / 1e3);
    let mut figures = json!({"folder_cold_ms": cold.as_secs_f64() * 1e3, "folder_warm_ms": warm.median_us / 1e3});

    match toolcell_cli() {
        Some(cli) => {
            let cli_cache = cache_dir("cli");
            remove_cache(&cli_cache);
            let invoke = || {
                let started = Instant::now();
                let output = Command::new(&cli)
                    .args(["--cache-dir"])
                    .arg(&cli_cache)
                    .args(["--tools-dir"])
                    .arg(&folder)
                    .args(["invoke", "calculator", r#"{"expression": "1 + 2"}"#])
                    .output()
                    .expect("run toolcell");
                assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
                started.elapsed()
            };
            let cold = invoke();
            let warm = Latency::from_samples("warm", (0..20).map(|_| invoke()).collect());
            println!("- `toolcell invoke calculator` (a new process), empty cache: {:.0} ms", cold.as_secs_f64() * 1e3);
            println!("- the same, warm cache (median of 20): {:.1} ms", warm.median_us / 1e3);
            figures["invoke_cold_ms"] = json!(cold.as_secs_f64() * 1e3);
            figures["invoke_warm_ms"] = json!(warm.median_us / 1e3);
            remove_cache(&cli_cache);
        }
        None => {
            println!("- (the CLI's start-up was not measured: build it with `cargo build --release -p toolcell-cli`)")
        }
    }
    remove_cache(&cache);
    let _ = std::fs::remove_dir_all(&folder);
    figures
}

/// The release CLI of this repository, if built.
fn toolcell_cli() -> Option<PathBuf> {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/toolcell");
    cli.is_file().then_some(cli)
}

/// 8: how far past a 100 ms deadline a busy loop is stopped.
async fn timeout_overshoot(size: Size) -> Value {
    let cache = cache_dir("timeout");
    let runtime = runtime(|builder| builder, &cache).await;
    let deadline = Duration::from_millis(100);
    let limits = LimitOverrides::new().timeout(deadline);
    let mut overshoots = Vec::new();
    for _ in 0..size.timeouts {
        let started = Instant::now();
        let output = runtime.call(ToolCall::new("bench", "spin", "{}").with_limits(limits)).await;
        let elapsed = started.elapsed();
        assert_eq!(output.error.as_ref().map(|error| error.kind()), Some("timeout"), "{}", output.content);
        overshoots.push(elapsed.saturating_sub(deadline));
    }
    let overshoot = Latency::from_samples("overshoot", overshoots.clone());
    let worst = overshoots.iter().max().copied().unwrap_or_default();
    let within = overshoots.iter().filter(|overshoot| **overshoot <= Duration::from_millis(5)).count();
    println!("\n## Timeout precision\n");
    println!(
        "- a busy loop with a 100 ms timeout, {} calls: stopped {:.2} ms past the deadline (median), {:.2} ms at worst; {within} within 5 ms",
        size.timeouts,
        overshoot.median_us / 1e3,
        worst.as_secs_f64() * 1e3
    );
    remove_cache(&cache);
    json!({"median_ms": overshoot.median_us / 1e3, "worst_ms": worst.as_secs_f64() * 1e3, "calls": size.timeouts})
}

/// 9, in a process of its own: resident memory is the whole process's, and the earlier
/// measurements leave theirs behind.
fn memory_in_a_new_process(size: Size) -> Value {
    let mut command = Command::new(std::env::current_exe().expect("this binary"));
    command.arg("--memory-only");
    if size.in_flight == QUICK.in_flight {
        command.arg("--quick");
    }
    let output = command.output().expect("run the memory measurement");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let (report, figures) = text.trim_end().rsplit_once('\n').expect("a report, then the figures");
    println!("{report}");
    serde_json::from_str(figures).expect("the figures as JSON")
}

/// Resident memory with many calls waiting in a host call, and per warm pooled slot.
async fn memory(size: Size) -> Value {
    let cache = cache_dir("memory");
    let calls = size.in_flight;
    let napping = runtime(|builder| builder.max_concurrent_calls(u32::try_from(calls).expect("calls")), &cache).await;
    let before = rss_bytes();
    let tasks: Vec<_> = (0..calls)
        .map(|i| {
            let runtime = napping.clone();
            tokio::spawn(async move { runtime.call(ToolCall::new(format!("n{i}"), "nap", json!({"ms": 3000}))).await })
        })
        .collect();
    let mut peak_running = 0;
    let mut during = before;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = napping.calls_in_flight();
        peak_running = peak_running.max(now.running);
        during = during.max(rss_bytes());
    }
    let mut failed = 0;
    for task in tasks {
        if task.await.expect("call").is_error {
            failed += 1;
        }
    }
    let per_call = during.saturating_sub(before) as f64 / calls as f64;
    println!("\n## Memory\n");
    println!(
        "- {calls} calls of `nap` (3 s) in flight at once ({peak_running} running at the peak), {failed} failed: host RSS {:.1} MiB before, {:.1} MiB with them in flight, {:.1} KiB per call",
        mib(before),
        mib(during),
        per_call / 1024.0
    );
    drop(napping);

    let slots = 64;
    let pooled = runtime(|builder| builder.pooling(slots), &cache).await;
    let slots_before = rss_bytes();
    // Calls that overlap (each naps 200 ms) take a slot each; after them, every slot keeps
    // what its call touched, up to the 2 MiB kept resident.
    let warm_all = (0..slots).map(|i| ToolCall::new(format!("w{i}"), "nap", json!({"ms": 200})));
    for output in pooled.call_all(warm_all).await {
        assert!(!output.is_error, "{}", output.content);
    }
    let slots_after = rss_bytes();
    let per_slot = slots_after.saturating_sub(slots_before) as f64 / f64::from(slots);
    println!(
        "- {slots} pooled slots, each warmed by one `nap` call (64 at once): RSS {:.1} -> {:.1} MiB, {:.0} KiB per warm slot",
        mib(slots_before),
        mib(slots_after),
        per_slot / 1024.0
    );
    remove_cache(&cache);
    json!({
        "in_flight_calls": calls, "in_flight_failed": failed, "rss_before_mib": mib(before), "rss_in_flight_mib": mib(during),
        "rss_per_in_flight_call_kib": per_call / 1024.0, "rss_per_warm_slot_kib": per_slot / 1024.0,
    })
}

/// Resident memory, exactly (`VmRSS` in `/proc/self/status` lags behind in a threaded
/// process: the kernel batches its per-thread counters).
fn rss_bytes() -> u64 {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let kib = rollup
        .lines()
        .find(|line| line.starts_with("Rss:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<u64>().ok())
        .unwrap_or(0);
    kib * 1024
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}
