//! toolcell beside the alternatives, in one run on one machine: `bench/run` (or
//! `cargo run --release --manifest-path bench/Cargo.toml`). `--quick` takes fewer samples
//! (for checking that it works; its figures are noisy, and go to a temporary folder). Prints
//! every figure as Markdown tables, writes them as JSON to `bench/results.json` and draws
//! `bench/charts/latency.png` and `throughput.png`. `--throughput-only N` measures N callers
//! alone, for profiling. `--python` measures only the `python` tool beside a process and
//! Pyodide, and code mode (`bench/results-python.json`).
//!
//! (Over 500 lines: the one place that lists every measurement and prints its table.)

mod baselines;
mod charts;
mod extism;
mod python;
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
    /// `--quick`: few samples, figures for checking that it works.
    quick: bool,
    calls: usize,
    process_calls: usize,
    /// Extism plugins built from bytes, compiling every time.
    compiling_calls: usize,
    throughput_calls: usize,
    timeouts: usize,
    in_flight: usize,
}

const FULL: Size = Size {
    quick: false,
    calls: 20_000,
    process_calls: 500,
    compiling_calls: 100,
    throughput_calls: 100_000,
    timeouts: 100,
    in_flight: 1000,
};
const QUICK: Size = Size {
    quick: true,
    calls: 1000,
    process_calls: 50,
    compiling_calls: 10,
    throughput_calls: 5000,
    timeouts: 5,
    in_flight: 100,
};

fn main() {
    let size = if std::env::args().any(|arg| arg == "--quick") { QUICK } else { FULL };
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio");
    if std::env::args().any(|arg| arg == "--memory-only") {
        let memory = tokio.block_on(memory(size));
        println!("{memory}");
        return;
    }
    if std::env::args().any(|arg| arg == "--startup-only") {
        let startup = tokio.block_on(startup());
        println!("{startup}");
        return;
    }
    if std::env::args().any(|arg| arg == "--python") {
        println!("# toolcell's python tool\n\n{}\n", machine());
        let results = tokio.block_on(python::run(size));
        let file = out_dir(size).join("results-python.json");
        std::fs::write(&file, serde_json::to_string_pretty(&results).expect("JSON")).expect("write the results");
        println!("\n(all figures also in {})", file.display());
        return;
    }
    if let Some(callers) = flag_value("--throughput-only") {
        // For profiling one concurrency level (`perf record -- toolcell-bench --throughput-only 2`).
        let rate = tokio.block_on(async {
            let cache = cache_dir("profile");
            let runtime = runtime(|builder| builder.max_concurrent_calls(64), &cache).await;
            let rate = rate(&runtime, callers, size.throughput_calls * 2).await;
            remove_cache(&cache);
            rate
        });
        println!("{callers} callers: {rate:.0} calls/s");
        return;
    }
    let mut results = serde_json::Map::new();
    println!("# toolcell benchmarks\n\n{}\n", machine());

    let latencies = tokio.block_on(per_call(size));
    print_latencies(&latencies);
    results.insert("latency".into(), json!(latencies));

    let (throughput, two_vs_one) = tokio.block_on(throughput(size));
    results.insert("throughput".into(), json!({"levels": throughput, "pooling_two_vs_one_per_round": two_vs_one}));

    let startup = tokio.block_on(startup());
    results.insert("startup".into(), startup);

    let overshoot = tokio.block_on(timeout_overshoot(size));
    results.insert("timeout_overshoot".into(), overshoot);

    let memory = memory_in_a_new_process(size);
    results.insert("memory".into(), memory);

    let out_dir = out_dir(size);
    let file = out_dir.join("results.json");
    std::fs::write(&file, serde_json::to_string_pretty(&results).expect("JSON")).expect("write results.json");
    println!("\n(all figures also in {})", file.display());
    match charts::write(&latencies, &throughput, &out_dir.join("charts")) {
        Ok(files) => files.iter().for_each(|file| println!("(chart: {})", file.display())),
        Err(err) => {
            eprintln!("the charts were not drawn: {err}");
            std::process::exit(1);
        }
    }
}

/// Where the figures go. A quick run's mean little: they go to a temporary folder, not over
/// the last full run's.
fn out_dir(size: Size) -> PathBuf {
    let dir = if size.quick {
        std::env::temp_dir().join("toolcell-bench-quick")
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    };
    std::fs::create_dir_all(&dir).expect("the output folder");
    dir
}

/// The number after `flag` on the command line.
fn flag_value(flag: &str) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|arg| arg == flag)?;
    let value = args.get(at + 1).and_then(|value| value.parse().ok());
    Some(value.unwrap_or_else(|| panic!("{flag} needs a number")))
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
    latencies.push(Latency::from_samples(
        "Extism plugin reused across calls",
        extism::reused(Path::new(guests::EXTISM_ADD), size.calls),
    ));
    latencies.push(Latency::from_samples(
        "Extism, fresh plugin per call (compiled once)",
        extism::fresh(Path::new(guests::EXTISM_ADD), size.calls),
    ));
    latencies.push(Latency::from_samples(
        "Extism, fresh plugin per call (`Plugin::new`, compiles every time)",
        extism::fresh_compiling(Path::new(guests::EXTISM_ADD), size.compiling_calls),
    ));
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
    println!(
        "- {:.1}x faster than a fresh Extism plugin per call",
        ratio(find("Extism, fresh plugin per call (compiled"), add)
    );
    println!("- {:.1}x an Extism plugin reused across calls", ratio(add, find("Extism plugin reused")));
    println!("- {:.0}x faster than a process per call", ratio(find("process per call"), add));
}

/// Calls per second with some concurrent callers.
#[derive(serde::Serialize)]
struct Throughput {
    callers: usize,
    pooling: f64,
    on_demand: f64,
    /// CPU time over wall time while the pooled calls ran: how many cores they kept busy.
    pooling_cores: f64,
    /// CPU time per pooled call, all threads together.
    pooling_cpu_us_per_call: f64,
}

/// 6: calls/s with N concurrent callers, both allocators. The levels are measured in
/// rounds, one after another in each round, and each figure is the median over the rounds:
/// this machine's speed drifts from second to second, and the ratio between two levels is
/// only meaningful between measurements taken close together.
async fn throughput(size: Size) -> (Vec<Throughput>, Vec<f64>) {
    const LEVELS: [usize; 4] = [1, 2, 8, 64];
    let rounds = if size.quick { 2 } else { 5 };
    // On-demand is ~10x slower: fewer calls keep its rounds as long as pooling's.
    let on_demand_calls = size.throughput_calls / 5;
    let cache = cache_dir("throughput");
    let pooled = runtime(|builder| builder.max_concurrent_calls(64), &cache).await;
    let on_demand = runtime(|builder| builder.on_demand().max_concurrent_calls(64), &cache).await;
    let mut measured: Vec<Vec<Throughput>> = LEVELS.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for (level, callers) in LEVELS.into_iter().enumerate() {
            let cpu_before = cpu_time();
            let wall = Instant::now();
            let pooling = rate(&pooled, callers, size.throughput_calls).await;
            let (cpu, wall) = ((cpu_time() - cpu_before).as_secs_f64(), wall.elapsed().as_secs_f64());
            measured[level].push(Throughput {
                callers,
                pooling,
                on_demand: rate(&on_demand, callers, on_demand_calls).await,
                pooling_cores: cpu / wall,
                pooling_cpu_us_per_call: cpu * 1e6 / size.throughput_calls as f64,
            });
        }
    }
    remove_cache(&cache);

    println!(
        "\n## Throughput, `add`\n\n{} calls per level with pooling, {on_demand_calls} on-demand; median of {rounds} rounds.\n",
        size.throughput_calls
    );
    println!("| callers | pooling (default) | cores busy, CPU per call (pooling) | on-demand |\n|---:|---:|---:|---:|");
    let rows: Vec<Throughput> = LEVELS
        .into_iter()
        .zip(&measured)
        .map(|(callers, rounds)| {
            let median = |figure: fn(&Throughput) -> f64| stats::median(rounds.iter().map(figure).collect());
            Throughput {
                callers,
                pooling: median(|t| t.pooling),
                on_demand: median(|t| t.on_demand),
                pooling_cores: median(|t| t.pooling_cores),
                pooling_cpu_us_per_call: median(|t| t.pooling_cpu_us_per_call),
            }
        })
        .collect();
    for row in &rows {
        println!(
            "| {} | {:.0} calls/s | {:.2}, {:.1} µs | {:.0} calls/s |",
            row.callers, row.pooling, row.pooling_cores, row.pooling_cpu_us_per_call, row.on_demand
        );
    }
    let ratios: Vec<f64> = measured[1].iter().zip(&measured[0]).map(|(two, one)| two.pooling / one.pooling).collect();
    println!(
        "\nTwo callers against one, pooling, per round: {} (median {:.2}x)",
        ratios.iter().map(|ratio| format!("{ratio:.2}x")).collect::<Vec<_>>().join(", "),
        stats::median(ratios.clone())
    );
    (rows, ratios)
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

/// User and system CPU time of this process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// 7: a folder of ten tools (issue 11's: the standard tools but `python`, and three more), cold
/// and warm, and warm until a first call is answered; the same with `python`; the CLI's
/// `invoke`, cold and warm.
pub(crate) async fn startup() -> Value {
    let folder = cache_dir("folder");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("folder");
    for (file, bytes) in toolcell_tools::ALL.iter().filter(|(file, _)| *file != "python.wasm") {
        std::fs::write(folder.join(file), bytes).expect("copy a standard tool");
    }
    for guest in [guests::ADD, guests::CONCAT, guests::WORD_COUNT] {
        std::fs::copy(guest, folder.join(Path::new(guest).file_name().expect("a file"))).expect("copy a tool");
    }
    let cache = cache_dir("startup");
    remove_cache(&cache);
    let (cold, warm) = cold_and_warm_start(&folder, &cache, 10).await;
    println!("\n## Start-up\n");
    println!("- a folder of 10 tools, empty cache (compiles all): {:.0} ms", cold.as_secs_f64() * 1e3);
    println!("- the same, warm cache, in a running process (median of 10): {:.1} ms", warm.median_us / 1e3);
    let first_call = warm_start_and_first_call(&folder, &cache).await;
    println!(
        "- the same, and the first call (`calculator`) answered (median of 10): {:.1} ms",
        first_call.median_us / 1e3
    );
    let mut figures = json!({
        "folder_cold_ms": cold.as_secs_f64() * 1e3,
        "folder_warm_ms": warm.median_us / 1e3,
        "folder_warm_first_call_ms": first_call.median_us / 1e3,
    });
    let (python, bytes) = toolcell_tools::ALL.iter().find(|(file, _)| *file == "python.wasm").expect("python");
    std::fs::write(folder.join(python), bytes).expect("copy python");
    let (_, warm) = cold_and_warm_start(&folder, &cache, 11).await;
    println!("- the same and `python`, 11 tools, warm cache (median of 10): {:.1} ms", warm.median_us / 1e3);
    figures["folder_with_python_warm_ms"] = json!(warm.median_us / 1e3);
    std::fs::remove_file(folder.join(python)).expect("remove python");

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

/// The time to build a runtime over `folder` with `cache`: once (compiling what the cache
/// lacks), then ten times warm.
async fn cold_and_warm_start(folder: &Path, cache: &Path, tools: usize) -> (Duration, Latency) {
    let load = || async {
        let started = Instant::now();
        let runtime = Runtime::builder().tools_dir(folder).compile_cache(cache).build().await.expect("runtime");
        assert_eq!(runtime.definitions().count(), tools);
        started.elapsed()
    };
    let cold = load().await;
    let mut warm = Vec::new();
    for _ in 0..10 {
        warm.push(load().await);
    }
    (cold, Latency::from_samples("warm", warm))
}

/// A warm start over `folder` until a first call is answered: what a start that left work for
/// later (loading code at first call) would not hide.
async fn warm_start_and_first_call(folder: &Path, cache: &Path) -> Latency {
    let mut samples = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let runtime = Runtime::builder().tools_dir(folder).compile_cache(cache).build().await.expect("runtime");
        let output = runtime.call(ToolCall::new("bench", "calculator", json!({"expression": "1 + 2"}))).await;
        assert!(!output.is_error, "{}", output.content);
        samples.push(started.elapsed());
    }
    Latency::from_samples("warm, first call", samples)
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
    if size.quick {
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
