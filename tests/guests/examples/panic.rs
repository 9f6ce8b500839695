//! Panics with a message that must reach the operator (stderr), never the model.

use toolcell_guest::tool;

/// Panics.
#[tool]
fn panic() -> u32 {
    panic!("secret operator detail: index out of range")
}
