//! Computes forever: for how far past its deadline a runaway guest is stopped.

use toolcell_guest::tool;

/// Loops without end.
#[tool]
fn spin() -> u64 {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}
