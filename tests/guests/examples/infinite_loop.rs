//! Spins forever without calling the host: stopped by the epoch deadline or by fuel.

use toolcell_guest::tool;

/// Never returns.
#[tool]
fn infinite_loop() -> u64 {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}
