//! Where a call's time goes: one tool called over and over in a single thread, so that
//! callgrind can count the instructions of each stage of a call. `runtime/benches/stages.sh`
//! runs it under callgrind and prints the breakdown; on its own it prints wall-clock time.
//!
//! `cargo bench -p toolcell-runtime --bench stages -- [--on-demand] [TOOL] [CALLS]`
//! (default: `calculator`, 1000 calls). `cargo test` runs it as a smoke test of 20 calls.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};
use toolcell_runtime::{Runtime, ToolCall};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|arg| arg != "--bench").collect();
    let on_demand = args.iter().any(|arg| arg == "--on-demand");
    let mut positional = args.iter().filter(|arg| !arg.starts_with("--"));
    let tool = positional.next().map_or("calculator", String::as_str).to_owned();
    let default_calls = if std::env::args().any(|arg| arg == "--bench") { 1000 } else { 20 };
    let calls: usize = positional.next().map_or(Ok(default_calls), |n| n.parse()).expect("CALLS is a whole number");
    let arguments = arguments_for(&tool);

    // One thread: every stage runs where callgrind can see it, in order.
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let runtime = tokio.block_on(async {
        let mut builder = Runtime::builder()
            // Only the measured tool: start-up under valgrind is slow.
            .component_file(format!("{}/{tool}.wasm", toolcell_tools::DIR))
            .compile_cache(PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache")));
        if on_demand {
            builder = builder.on_demand();
        }
        builder.build().await.expect("runtime")
    });
    for _ in 0..10 {
        assert!(!tokio.block_on(call(&runtime, &tool, &arguments)), "warm-up calls succeed");
    }
    let (started, cpu_before) = (Instant::now(), cpu_time());
    measured_calls(&tokio, &runtime, &tool, &arguments, calls);
    let (elapsed, cpu) = (started.elapsed(), cpu_time() - cpu_before);
    let per_call = |seconds: f64| seconds * 1e6 / calls as f64;
    let allocator = if on_demand { "on-demand" } else { "pooling" };
    println!(
        "{calls} calls of {tool} ({allocator}), one thread, per call: {:.1} µs wall, {:.1} µs user, {:.1} µs kernel",
        per_call(elapsed.as_secs_f64()),
        per_call(cpu.user),
        per_call(cpu.kernel),
    );
}

/// The calls callgrind measures (its `--toggle-collect` names this function). Not async:
/// the body of an async fn is inlined into whatever polls it, and callgrind needs a symbol.
#[inline(never)]
fn measured_calls(tokio: &tokio::runtime::Runtime, runtime: &Runtime, tool: &str, arguments: &Value, calls: usize) {
    for _ in 0..calls {
        assert!(!tokio.block_on(call(runtime, tool, arguments)), "calls succeed");
    }
}

async fn call(runtime: &Runtime, tool: &str, arguments: &Value) -> bool {
    runtime.call(ToolCall::new("stage", tool, arguments.clone())).await.is_error
}

/// CPU time this process has spent so far, in user space and in the kernel (page faults,
/// mapping and unmapping memory), in seconds.
fn cpu_time() -> CpuTime {
    // SAFETY: getrusage writes only into the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &raw mut usage), 0, "getrusage");
        usage
    };
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    CpuTime { user: seconds(usage.ru_utime), kernel: seconds(usage.ru_stime) }
}

#[derive(Clone, Copy)]
struct CpuTime {
    user: f64,
    kernel: f64,
}

impl std::ops::Sub for CpuTime {
    type Output = Self;
    fn sub(self, earlier: Self) -> Self {
        Self { user: self.user - earlier.user, kernel: self.kernel - earlier.kernel }
    }
}

fn arguments_for(tool: &str) -> Value {
    match tool {
        "calculator" => json!({"expression": "2 * (3 + sqrt(16)) ^ 2"}),
        "unit_convert" => json!({"value": 1, "from": "mile", "to": "kilometer"}),
        "json_query" => json!({"document": {"a": [1, 2, 3]}, "query": "$.a[?@ > 1]"}),
        "regex" => json!({"pattern": "\\d+", "text": "a1b22c333", "operation": "find"}),
        "datetime" => {
            json!({"operation": "add", "instant": "2024-03-10 01:30", "time_zone": "America/New_York", "duration": "2 hours"})
        }
        other => {
            panic!("no arguments known for `{other}`: use calculator, unit_convert, json_query, regex or datetime")
        }
    }
}
