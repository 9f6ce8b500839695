//! Panics with a message that must reach the operator (stderr), never the model; given
//! `message` (a caller's secret, in the redaction tests), panics with that instead.

use toolcell_guest::tool;

/// Panics.
#[tool]
fn panic(
    /// What to panic with instead of the default message.
    message: Option<String>,
) -> u32 {
    match message {
        Some(message) => panic!("{message}"),
        None => panic!("secret operator detail: index out of range"),
    }
}
