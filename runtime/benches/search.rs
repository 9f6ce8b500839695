//! What code mode's `search` costs over a hundred tools: building [`CodeModeTools`] (the
//! BM25 index and the two tools' definitions) over the 100 operations of
//! `tests/guests/api/api.json` plus the eight standard tools (python runs the programs, the
//! other 107 are callable), and one `search` for each of a handful of requests. Medians of
//! many runs. Definitions only: no component is compiled or called.
//!
//! Run with `cargo bench -p toolcell-runtime --bench search` (release build). `cargo test`
//! runs it as a smoke test (a few runs; its figures then mean nothing).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolcell_runtime::ToolDefinition;
use toolcell_runtime::code_mode::CodeModeTools;
use toolcell_runtime::policy::CodeModePolicy;

/// The requests searched for, as a model would word them.
const QUERIES: [&str; 6] = [
    "refund a payment",
    "cancel an order",
    "list a customer's invoices",
    "move stock from one warehouse to another",
    "best-selling products last month",
    "convert miles to kilometers",
];
const API: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/guests/api/api.json");
const STANDARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/definitions.json");

fn main() {
    let runs = if std::env::args().any(|arg| arg == "--bench") {
        1000
    } else {
        println!("smoke test (figures are meaningless): run `cargo bench -p toolcell-runtime --bench search`");
        3
    };
    let definitions: Vec<ToolDefinition> = api_definitions().into_iter().chain(standard_definitions()).collect();
    let settings = CodeModePolicy::new();
    let build = || CodeModeTools::new(&settings, &definitions).expect("python is among the definitions");
    let tools = build();
    println!("{} tools, {} callable from programs", definitions.len(), tools.callable().len());
    println!("\n{:<72} {:>12}", format!("median of {runs} runs"), "time");
    println!("{:<72} {:>9.1} µs", "CodeModeTools::new (index + definitions)", micros(median(runs, || drop(build()))));
    for query in QUERIES {
        let hits = tools.search(query, 5);
        assert!(!hits.is_empty(), "`{query}` finds something");
        let label = format!("search {query:?} -> {}", hits[0].name);
        println!("{label:<72} {:>9.1} µs", micros(median(runs, || drop(tools.search(query, 5)))));
    }
}

/// The operations of api.json as the tools tests/build.rs makes of them.
fn api_definitions() -> Vec<ToolDefinition> {
    let api: Value = serde_json::from_str(&std::fs::read_to_string(API).expect("read api.json")).expect("api.json");
    let operations = api["operations"].as_array().expect("api.json has `operations`");
    operations
        .iter()
        .map(|operation| {
            definition(json!({
                "name": operation["operationId"],
                "description": operation["summary"],
                "version": "1.0.0",
                "parameters": operation["parameters"],
            }))
        })
        .collect()
}

/// The standard tools, from what their components announce (tools/definitions.json).
fn standard_definitions() -> Vec<ToolDefinition> {
    let text = std::fs::read_to_string(STANDARD).expect("read tools/definitions.json");
    let announced: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("definitions.json");
    announced
        .values()
        .map(|tool| {
            definition(json!({
                "name": tool["name"],
                "description": tool["description"],
                "version": tool["version"],
                "parameters": tool["parameters_schema"],
            }))
        })
        .collect()
}

fn definition(value: Value) -> ToolDefinition {
    serde_json::from_value(value).expect("a tool definition")
}

/// The median time of `runs` runs of `work`, after as many unmeasured ones.
fn median(runs: usize, mut work: impl FnMut()) -> Duration {
    (0..runs).for_each(|_| work());
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
