//! A second version of `echo`: the same name and parameters, another answer (`echo 2: TEXT`),
//! so that a response tells which version served it (the replica tests' rolling update from
//! one digest of a tool to another).

use toolcell_guest::tool;

/// Echo the text back, as version 2 does.
#[tool(name = "echo")]
fn echo_v2(
    /// The text to echo.
    text: String,
    /// How many times.
    count: u32,
) -> String {
    format!("echo 2: {}", text.repeat(count as usize))
}
