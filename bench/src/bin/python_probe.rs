//! Where a fresh `python` call's time goes: runs one program over and over through
//! `Runtime::call` and prints the median wall time, and the CPU time and page faults per call
//! (getrusage). Run it under `perf record` to see the stages; with `PROBE_MAPS=1` it prints
//! its memory map to stderr at the end, to place `perf record -e page-faults -d` addresses
//! (the `python` tool's memory image is the `/memfd:wasm-memory-image` mapping).
//!
//! `toolcell-python-probe [CALLS] [CODE]` (default: 200 calls of `print(1)`); `PROBE_READY=0`
//! makes no instance ready before its call (`RuntimeBuilder::ready_instances`). Another standard
//! tool with `PROBE_TOOL=calculator PROBE_ARGS='{"expression": "1 + 2"}'`. It ends with the
//! process's peak and current resident memory, to see whether calls leave anything behind.
//! Code mode with `PROBE_CALL_TOOLS=calculator,regex`: the runtime holds every standard tool
//! and grants `python` calls to those (`PROBE_ARGS` then names the program and its inputs).

use std::time::Instant;

use serde_json::json;
use toolcell_runtime::policy::Grants;
use toolcell_runtime::{Runtime, ToolCall};

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().map_or(200, |n| n.parse().expect("CALLS is a whole number"));
    let code = args.next().unwrap_or_else(|| "print(1)".into());
    let cache = std::env::temp_dir().join("toolcell-python-probe-cache");
    // As `toolcell serve` runs; PROBE_CURRENT_THREAD=1 for one thread.
    let tokio = if std::env::var_os("PROBE_CURRENT_THREAD").is_some() {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    let tokio = tokio.expect("tokio");
    let tool = std::env::var("PROBE_TOOL").unwrap_or_else(|_| "python".into());
    let arguments = match std::env::var("PROBE_ARGS") {
        Ok(arguments) => serde_json::from_str(&arguments).expect("PROBE_ARGS is JSON"),
        Err(_) => json!({ "code": code }),
    };
    // PROBE_READY=0: no instance made ready before its call.
    let ready = std::env::var("PROBE_READY").map_or(true, |on| on != "0");
    let builder = match std::env::var("PROBE_CALL_TOOLS") {
        Ok(callees) => {
            let grants = callees.split(',').fold(Grants::new(), |grants, callee| grants.call_tool(callee.trim()));
            Runtime::builder().tools_dir(toolcell_tools::DIR).grant(tool.clone(), grants)
        }
        Err(_) => Runtime::builder().component_file(format!("{}/{tool}.wasm", toolcell_tools::DIR)),
    };
    let runtime = tokio.block_on(builder.compile_cache(&cache).ready_instances(ready).build());
    let runtime = runtime.expect("runtime");
    let call = || {
        let output = tokio.block_on(runtime.call(ToolCall::new("probe", tool.clone(), arguments.clone())));
        let ran = output.value().is_some_and(|run| tool != "python" || run["ok"] == true);
        assert!(!output.is_error && ran, "{}", output.content);
    };
    for _ in 0..10 {
        call();
    }
    // A pause between calls (PROBE_GAP_MS), as an agent's calls have: a model's turn.
    let gap = std::time::Duration::from_micros(
        std::env::var("PROBE_GAP_MS").ok().and_then(|ms| ms.parse::<f64>().ok()).map_or(0, |ms| (ms * 1e3) as u64),
    );
    let ready_before = ready_calls(&runtime, &tool);
    let before = usage();
    let mut walls = Vec::with_capacity(calls);
    for _ in 0..calls {
        std::thread::sleep(gap);
        let started = Instant::now();
        call();
        walls.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let ready = ready_calls(&runtime, &tool) - ready_before;
    let after = usage();
    if std::env::var_os("PROBE_MAPS").is_some() {
        eprintln!("{}", std::fs::read_to_string("/proc/self/maps").unwrap_or_default());
    }
    walls.sort_by(f64::total_cmp);
    let per = |x: f64| x / calls as f64;
    println!(
        "{calls} calls ({ready} in an instance made ready before them): median {:.3} ms wall, p10 {:.3}, p90 {:.3}; \
         per call {:.3} ms user, {:.3} ms sys, {:.0} minor faults (CPU and faults include the work between calls)",
        walls[calls / 2],
        walls[calls / 10],
        walls[calls * 9 / 10],
        per(after.0 - before.0),
        per(after.1 - before.1),
        per(after.2 - before.2),
    );
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field =
        |name: &str| status.lines().find(|line| line.starts_with(name)).map_or("?", |line| line[name.len()..].trim());
    println!("resident memory: peak {}, now {}", field("VmHWM:"), field("VmRSS:"));
}

/// Calls of `tool` so far that ran in an instance made ready before them.
fn ready_calls(runtime: &Runtime, tool: &str) -> u64 {
    runtime.metrics().tools.get(tool).map_or(0, |tool| tool.ready_instance_calls)
}

/// (user ms, system ms, minor faults) of this process so far.
fn usage() -> (f64, f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    (ms(usage.ru_utime), ms(usage.ru_stime), usage.ru_minflt as f64)
}
