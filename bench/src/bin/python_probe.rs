//! Where a fresh `python` call's time goes: runs one program over and over through
//! `Runtime::call` and prints the median wall time, and the CPU time and page faults per call
//! (getrusage). Run it under `perf record` to see the stages; with `PROBE_MAPS=1` it prints
//! its memory map to stderr at the end, to place `perf record -e page-faults -d` addresses
//! (the `python` tool's memory image is the `/memfd:wasm-memory-image` mapping).
//!
//! `toolcell-python-probe [CALLS] [CODE]` (default: 200 calls of `print(1)`).

use std::time::Instant;

use serde_json::json;
use toolcell_runtime::{Runtime, ToolCall};

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().map_or(200, |n| n.parse().expect("CALLS is a whole number"));
    let code = args.next().unwrap_or_else(|| "print(1)".into());
    let cache = std::env::temp_dir().join("toolcell-python-probe-cache");
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let runtime = tokio.block_on(
        Runtime::builder().component_file(format!("{}/python.wasm", toolcell_tools::DIR)).compile_cache(&cache).build(),
    );
    let runtime = runtime.expect("runtime");
    let call = || {
        let output = tokio.block_on(runtime.call(ToolCall::new("probe", "python", json!({ "code": code }))));
        assert!(output.value().is_some_and(|run| run["ok"] == true), "{}", output.content);
    };
    for _ in 0..10 {
        call();
    }
    let before = usage();
    let mut walls = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call();
        walls.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let after = usage();
    if std::env::var_os("PROBE_MAPS").is_some() {
        eprintln!("{}", std::fs::read_to_string("/proc/self/maps").unwrap_or_default());
    }
    walls.sort_by(f64::total_cmp);
    let per = |x: f64| x / calls as f64;
    println!(
        "{calls} calls: median {:.3} ms wall, p10 {:.3}, p90 {:.3}; per call {:.3} ms user, {:.3} ms sys, {:.0} minor faults",
        walls[calls / 2],
        walls[calls / 10],
        walls[calls * 9 / 10],
        per(after.0 - before.0),
        per(after.1 - before.1),
        per(after.2 - before.2),
    );
}

/// (user ms, system ms, minor faults) of this process so far.
fn usage() -> (f64, f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    (ms(usage.ru_utime), ms(usage.ru_stime), usage.ru_minflt as f64)
}
