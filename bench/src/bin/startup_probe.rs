//! Where a warm start's time goes: builds a runtime over a tools folder again and again, from
//! a compile cache that the first build fills, and prints the median time, and the CPU time
//! and page faults per build (getrusage). Run it under `perf record` to see the stages.
//!
//! `toolcell-startup-probe FOLDER [BUILDS]` (default: 50 builds after the first).

use std::time::{Duration, Instant};

use toolcell_runtime::Runtime;

fn main() {
    let mut args = std::env::args().skip(1);
    let folder = args.next().expect("usage: toolcell-startup-probe FOLDER [BUILDS]");
    let builds: usize = args.next().map_or(50, |n| n.parse().expect("BUILDS is a whole number"));
    let cache = std::env::temp_dir().join("toolcell-startup-probe-cache");
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio");
    let build = || {
        let started = Instant::now();
        let runtime = tokio.block_on(Runtime::builder().tools_dir(&folder).compile_cache(&cache).build());
        let elapsed = started.elapsed();
        // Dropped after the clock stops: a process starting has no runtime to take down.
        let tools = runtime.expect("runtime").definitions().count();
        (elapsed, tools)
    };
    let (first, tools) = build();
    eprintln!("{tools} tools; the first build (filling the cache if empty): {:.1} ms", ms(first));
    let (cpu, faults) = usage();
    let mut times: Vec<Duration> = (0..builds).map(|_| build().0).collect();
    let (cpu_after, faults_after) = usage();
    times.sort();
    println!(
        "median {:.2} ms, min {:.2} ms; per build: CPU {:.2} ms, {} page faults",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(cpu_after - cpu) / builds as f64,
        (faults_after - faults) / builds as i64,
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// This process's CPU time and minor page faults so far.
fn usage() -> (Duration, i64) {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (time(usage.ru_utime) + time(usage.ru_stime), usage.ru_minflt)
}
