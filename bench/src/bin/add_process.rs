//! `add` as a process: reads `{"a": .., "b": ..}` on stdin, writes the sum as JSON on stdout.
//! The process-per-call baseline: what a subprocess sandbox costs at the least.

use std::io::{Read as _, Write as _};

#[derive(serde::Deserialize)]
struct Arguments {
    a: f64,
    b: f64,
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("read stdin");
    let Arguments { a, b } = serde_json::from_str(&input).expect("arguments are {\"a\": number, \"b\": number}");
    let output = serde_json::to_string(&(a + b)).expect("a number serializes");
    std::io::stdout().write_all(output.as_bytes()).expect("write stdout");
}
