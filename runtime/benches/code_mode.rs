//! What code mode costs beyond the tools' own work: a program in `execute` that makes N
//! nested `calculator` calls, against the same program making none (the overhead of one
//! nested call is the difference over N, beside one direct `calculator` call); and a
//! recorded call of such a program replayed from its record, against running it. Medians.
//!
//! Run with `cargo bench -p toolcell-runtime --bench code_mode` (release build), or with
//! `--profile dev` for the test profile (dependencies optimized, toolcell's own code not).
//! `cargo test` runs it as a smoke test (a few runs; its figures then mean nothing).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use toolcell_runtime::code_mode::{CodeMode, EXECUTE};
use toolcell_runtime::policy::{CodeModePolicy, Grants};
use toolcell_runtime::{Runtime, ToolCall};

/// How many nested calls the measured program makes (a smoke test makes 2).
const NESTED: usize = 20;

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    let (runs, nested) = if bench { (40, NESTED) } else { (1, 2) };
    if !bench {
        println!("smoke test (figures are meaningless): run `cargo bench -p toolcell-runtime --bench code_mode`");
    }
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    tokio.block_on(async {
        // The test suite's compile cache: compiling the python tool takes a minute.
        let cache = PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
        let runtime = Runtime::builder()
            .tools_dir(toolcell_tools::DIR)
            .compile_cache(&cache)
            .code_mode(CodeModePolicy::new().tools(["calculator"]))
            .grant("python", Grants::new().call_tool("calculator"))
            .build()
            .await
            .expect("runtime");
        let code_mode = runtime.code_mode().expect("code mode");
        println!("{:<64} {:>12}", format!("median of {runs} runs"), "time");

        let direct = median(runs, || async {
            let output = runtime.call(ToolCall::new("d", "calculator", json!({"expression": "6 * 7"}))).await;
            assert!(!output.is_error, "{}", output.content);
        })
        .await;
        report("calculator, called directly", direct);
        let none = median(runs, || execute(&code_mode, 0)).await;
        report("execute, a program making no nested call", none);
        let some = median(runs, || execute(&code_mode, nested)).await;
        report(&format!("execute, a program making {nested} calculator calls"), some);
        let per_call = some.saturating_sub(none) / u32::try_from(nested).unwrap_or(1);
        report("  each nested call (difference / calls)", per_call);
        report("  of which beyond a direct calculator call", per_call.saturating_sub(direct));

        let program = program(nested);
        let recorded = median(runs, || async {
            let (output, record) = runtime.call_recorded(ToolCall::new("r", "python", json!({"code": program}))).await;
            assert!(!output.is_error && record.is_ok(), "{}", output.content);
        })
        .await;
        report(&format!("python with {nested} nested calls, recorded"), recorded);
        let (_, record) = runtime.call_recorded(ToolCall::new("r", "python", json!({"code": program}))).await;
        let record = record.expect("recorded");
        let replayed = median(runs, || async {
            let replayed = runtime.replay(&record).await.expect("replays");
            assert!(replayed.same_fuel, "{:?}", replayed.output);
        })
        .await;
        report(&format!("  replayed from its record ({nested} answers, no tool run)"), replayed);
    });
}

/// A program making `calls` nested calls of `calculator`.
fn program(calls: usize) -> String {
    format!(
        "total = 0\nfor i in range({calls}):\n    total += tools.calculator(expression=f'{{i}} * 2')['value']\ntotal"
    )
}

async fn execute(code_mode: &CodeMode, calls: usize) {
    let output = code_mode.call(ToolCall::new("e", EXECUTE, json!({"code": program(calls)}))).await;
    assert!(!output.is_error, "{}", output.content);
}

async fn median<F: Future<Output = ()>>(runs: usize, mut run: impl FnMut() -> F) -> Duration {
    run().await;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        run().await;
        times.push(started.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn report(label: &str, time: Duration) {
    println!("{label:<64} {:>9.1} µs", time.as_secs_f64() * 1e6);
}
