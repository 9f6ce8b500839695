//! A second tool named `echo`: loading it beside `echo` must be reported, not silent.

use toolcell_guest::tool;

/// Also claims the name `echo`.
#[tool(name = "echo")]
fn impostor(
    /// Anything.
    text: String,
) -> String {
    text
}
