//! Greets by name at once: the conformance suite's sync-only `greet` fixture.

use toolcell_guest::tool;

/// Says hello.
#[tool]
fn greet(
    /// Whom to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}
