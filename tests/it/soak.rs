//! The soak: a million mixed benign and hostile calls from concurrent tasks against one
//! runtime. Every call must get exactly the output expected of it (benign results checked
//! value by value, hostile calls by error kind), and the host's resident memory must not
//! drift. Ignored by default; `just soak` runs it in release (see
//! docs/src/soak-and-fuzzing.md for its run time). `TOOLCELL_SOAK_CALLS` and
//! `TOOLCELL_SOAK_TASKS` change its size.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;
use toolcell_runtime::{LimitOverrides, Runtime, ToolCall, ToolOutput};

use crate::common::{CALLABLE_GUESTS, COMPILE_CACHE};

/// Resident memory may grow by at most this fraction between the start (after warm-up) and
/// the end.
const MAX_RSS_DRIFT: f64 = 0.05;

/// Both instance allocators, one after the other: resident memory is the whole process's,
/// so two soaks must not overlap.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a million calls per allocator: run with `just soak`"]
async fn soak() {
    pin_mmap_threshold();
    soak_with("on-demand", None).await;
    soak_with("pooling (16 slots)", Some(16)).await;
}

async fn soak_with(allocator: &str, pooling: Option<u32>) {
    let calls = env_number("TOOLCELL_SOAK_CALLS", 1_000_000);
    let tasks = env_number("TOOLCELL_SOAK_TASKS", 8);
    let runtime = soak_runtime(pooling).await;

    // Warm up until resident memory settles: two chunks in a row that grow it by under
    // 0.5%, or at most half as many calls as the soak. Pooled slots keep up to 2 MiB of
    // each memory and table resident once used, so a pooled runtime grows (to a bound set
    // by its slot count) until every slot has held the larger calls.
    let started = Instant::now();
    let mut report = Report::default();
    let chunk = (calls / 20).max(1_000);
    let (mut warm_up, mut settled, mut rss_start) = (0, 0, resident_bytes());
    while settled < 2 && warm_up < calls / 2 {
        run_calls(&runtime, warm_up..warm_up + chunk, tasks, &mut report).await;
        warm_up += chunk;
        let rss = resident_bytes();
        settled = if (rss as f64) < rss_start as f64 * 1.005 { settled + 1 } else { 0 };
        rss_start = rss;
    }
    let measured = Instant::now();
    let half = warm_up + calls / 2;
    run_calls(&runtime, warm_up..half, tasks, &mut report).await;
    let rss_middle = resident_bytes();
    run_calls(&runtime, half..warm_up + calls, tasks, &mut report).await;
    let rss_end = resident_bytes();
    let elapsed = measured.elapsed();

    let drift = (rss_end as f64 - rss_start as f64) / rss_start as f64;
    println!(
        "soak, {allocator}: {calls} calls (+{warm_up} warm-up) from {tasks} tasks in {:.1} s: {:.0} calls/s; \
         {} benign results correct, {} hostile calls ended in the expected error; \
         host RSS start {:.1} MiB, middle {:.1} MiB, end {:.1} MiB (drift {:+.2}%); total {:.1} s",
        elapsed.as_secs_f64(),
        calls as f64 / elapsed.as_secs_f64(),
        report.benign,
        report.hostile,
        mib(rss_start),
        mib(rss_middle),
        mib(rss_end),
        drift * 100.0,
        started.elapsed().as_secs_f64(),
    );
    assert_eq!(report.failures, Vec::<String>::new(), "{} calls did not end as expected", report.failed);
    assert_eq!(report.benign + report.hostile, warm_up + calls, "every call got its output");
    assert!(drift < MAX_RSS_DRIFT, "resident memory grew {:.2}% (limit {MAX_RSS_DRIFT})", drift * 100.0);
}

async fn soak_runtime(pooling: Option<u32>) -> Runtime {
    let builder = Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(COMPILE_CACHE);
    let builder = CALLABLE_GUESTS.iter().fold(builder, |builder, path| builder.component_file(path));
    let builder = match pooling {
        Some(slots) => builder.pooling(slots),
        None => builder.on_demand(),
    };
    let runtime = builder.build().await.expect("runtime builds");
    assert_eq!(runtime.diagnostics(), &[], "every guest loads");
    runtime
}

#[derive(Debug, Default)]
struct Report {
    benign: u64,
    hostile: u64,
    failed: u64,
    /// The first few calls that did not end as expected.
    failures: Vec<String>,
}

/// Runs calls `range` from `tasks` concurrent tasks, each taking the next index until none
/// is left, and checks every output.
async fn run_calls(runtime: &Runtime, range: std::ops::Range<u64>, tasks: u64, report: &mut Report) {
    let next = Arc::new(AtomicU64::new(range.start));
    let shared = Arc::new(Mutex::new(std::mem::take(report)));
    let workers: Vec<_> = (0..tasks)
        .map(|_| {
            let (runtime, next, shared, end) = (runtime.clone(), next.clone(), shared.clone(), range.end);
            tokio::spawn(async move {
                let mut local = Report::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= end {
                        break;
                    }
                    let case = Case::for_index(index);
                    let id = format!("soak-{index}");
                    let call = ToolCall::new(id.clone(), case.tool, case.arguments).with_limits(case.limits);
                    let output = runtime.call(call).await;
                    match case.expect.check(&output, &id) {
                        Ok(()) if matches!(case.expect, Expect::Kind(_)) => local.hostile += 1,
                        Ok(()) => local.benign += 1,
                        Err(problem) => {
                            local.failed += 1;
                            if local.failures.len() < 10 {
                                local.failures.push(format!("call {index} ({}): {problem}", case.tool));
                            }
                        }
                    }
                }
                let mut total = shared.lock().await;
                total.benign += local.benign;
                total.hostile += local.hostile;
                total.failed += local.failed;
                total.failures.extend(local.failures);
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a soak task panicked");
    }
    *report = Arc::try_unwrap(shared).expect("every task is done").into_inner();
}

/// One call of the mix and what it must return.
struct Case {
    tool: &'static str,
    arguments: toolcell_runtime::Arguments,
    limits: LimitOverrides,
    expect: Expect,
}

enum Expect {
    /// Success with exactly this result.
    Value(Value),
    /// Success whose result has these fields.
    Fields(Value),
    /// Failure of this kind.
    Kind(&'static str),
}

impl Expect {
    fn check(&self, output: &ToolOutput, id: &str) -> Result<(), String> {
        if output.call_id != id {
            return Err(format!("output for call {} instead of {id}", output.call_id));
        }
        match self {
            Expect::Value(expected) => match output.value() {
                Some(value) if value == *expected => Ok(()),
                _ => Err(format!("expected {expected}, got {output:?}")),
            },
            Expect::Fields(fields) => {
                let value = output.value().ok_or_else(|| format!("expected success, got {output:?}"))?;
                let fields = fields.as_object().expect("fields are an object");
                match fields.iter().find(|(key, expected)| value.get(key.as_str()) != Some(expected)) {
                    None => Ok(()),
                    Some((key, expected)) => Err(format!("expected {key} = {expected}, got {value}")),
                }
            }
            Expect::Kind(kind) => match &output.error {
                Some(error) if error.kind() == *kind && output.is_error => Ok(()),
                _ => Err(format!("expected {kind}, got {output:?}")),
            },
        }
    }
}

impl Case {
    /// The mix: 70% benign calls (calculator products, echoes, a stateless counter), 30%
    /// hostile ones, and rarer slow ones (timeouts, a stdout flood).
    fn for_index(index: u64) -> Case {
        let none = LimitOverrides::new();
        let small_memory = LimitOverrides::new().memory_bytes(8 << 20);
        let fail = |tool, arguments: Value, limits, kind| Case {
            tool,
            arguments: arguments.into(),
            limits,
            expect: Expect::Kind(kind),
        };
        if index % 10_000 == 4_999 {
            let spin = LimitOverrides::new().timeout(Duration::from_millis(50)).fuel(u64::MAX / 2);
            return fail("infinite_loop", json!({}), spin, "timeout");
        }
        if index % 10_000 == 9_999 {
            return fail("sleeper", json!({}), LimitOverrides::new().timeout(Duration::from_millis(50)), "timeout");
        }
        if index % 1_000 == 500 {
            return Case {
                tool: "chatty",
                arguments: json!({}).into(),
                limits: none,
                expect: Expect::Value(json!("done")),
            };
        }
        match index % 100 {
            0..35 | 85..100 => {
                let (a, b) = (index % 9_973, (index / 100) % 9_973 + 1);
                let expression = format!("{a} * {b}");
                Case {
                    tool: "calculator",
                    arguments: json!({ "expression": expression }).into(),
                    limits: none,
                    expect: Expect::Fields(json!({"value": (a * b) as f64})),
                }
            }
            35..50 => {
                let (text, count) = (format!("n{index}"), index % 10 + 1);
                Case {
                    tool: "echo",
                    arguments: json!({"text": text, "count": count}).into(),
                    limits: none,
                    expect: Expect::Fields(json!({"text": text, "count": count, "call_id": format!("soak-{index}")})),
                }
            }
            50..55 => Case { tool: "counter", arguments: "{}".into(), limits: none, expect: Expect::Value(json!(1)) },
            55 => fail("infinite_loop", json!({}), LimitOverrides::new().fuel(1_000_000), "fuel_exhausted"),
            56 => fail("panic", json!({}), none, "crashed"),
            57 => fail("calculator", json!({}), none, "invalid_arguments"),
            58 => Case {
                tool: "calculator",
                arguments: "{\"expression\": ".into(),
                limits: none,
                expect: Expect::Kind("malformed_arguments"),
            },
            59 => fail("no_such_tool", json!({}), none, "unknown_tool"),
            60 => fail("non_json_output", json!({}), none, "invalid_output"),
            61 => fail("big_output", json!({"bytes": 2 << 20}), none, "output_too_large"),
            62 => fail("memory_bomb", json!({}), small_memory, "memory_limit"),
            63 => fail("stack_overflow", json!({}), none, "crashed"),
            64 => fail("abort", json!({}), none, "crashed"),
            65 => fail("exit_nonzero", json!({}), none, "crashed"),
            66 => fail("exit_zero", json!({}), none, "crashed"),
            67 => fail("fails_retryably", json!({"transient": true}), none, "tool_failed"),
            68 => fail("table_bomb", json!({}), small_memory, "memory_limit"),
            69 => fail("memory_grow_bomb", json!({}), small_memory, "memory_limit"),
            70 => fail("bad_output", json!({}), none, "invalid_output"),
            71 => fail("rejects_arguments", json!({"number": 7}), none, "rejected_arguments"),
            72 => fail("echo", json!({"text": "x", "count": 11}), none, "invalid_arguments"),
            73 => fail("echo", json!({"text": "x".repeat(101), "count": 1}), none, "invalid_arguments"),
            74 => fail("calculator", json!({"expression": "1 +"}), none, "rejected_arguments"),
            75 => fail("echo", json!([1, 2]), none, "invalid_arguments"),
            76 => fail("fails_retryably", json!({"transient": false}), none, "tool_failed"),
            77 => fail("calculator", json!({"expression": "1", "extra": true}), none, "invalid_arguments"),
            78 => fail("infinite_loop", json!({}), LimitOverrides::new().fuel(100_000), "fuel_exhausted"),
            _ => fail("memory_bomb", json!({}), LimitOverrides::new().memory_bytes(4 << 20), "memory_limit"),
        }
    }
}

/// The process's resident set size, `VmRSS` from `/proc/self/status`.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("VmRSS in /proc/self/status");
    let kib: u64 = line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmRSS in kB");
    kib * 1024
}

/// Makes glibc serve every allocation over 128 KiB with its own mapping, returned to the
/// kernel when freed. By default glibc raises that threshold after the first large free, so
/// the transient buffers of hostile calls (2 MiB outputs, tables grown to 8 MiB) land in the
/// heap, and the fragmentation they leave swings resident memory by several percent between
/// two identical runs; with the threshold pinned, resident memory tracks what the host holds.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn pin_mmap_threshold() {
    const M_MMAP_THRESHOLD: i32 = -3;
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // SAFETY: mallopt only changes allocator parameters; called before the soak's threads start.
    let changed = unsafe { mallopt(M_MMAP_THRESHOLD, 128 << 10) };
    assert_eq!(changed, 1, "mallopt(M_MMAP_THRESHOLD) failed");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn pin_mmap_threshold() {}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(value) => value.parse().unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}")),
        Err(_) => default,
    }
}
