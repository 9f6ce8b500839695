//! Writes far more to stdout and stderr than the host keeps, then succeeds.

use toolcell_guest::tool;

/// Prints a lot, returns "done".
#[tool]
fn chatty() -> &'static str {
    for i in 0..10_000 {
        println!("stdout line {i}");
        eprintln!("stderr line {i}");
    }
    "done"
}
