// The warning an undocumented parameter gets, made an error so that it is pinned here.
#![deny(deprecated)]

use toolcell_guest::tool;

/// Greet someone.
#[tool]
fn greet(
    /// Who to greet.
    name: String,
    times: Option<u32>,
) -> String {
    name.repeat(times.unwrap_or(1) as usize)
}

fn main() {}
