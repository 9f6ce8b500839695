//! The minimal tool: two numbers in, their sum out.

use toolcell_guest::tool;

/// Adds two numbers.
#[tool]
fn add(
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
) -> f64 {
    a + b
}
