//! Calls `wasi:cli/exit` with success in the middle of a call: no result was returned, so
//! the call did not succeed.

use toolcell_guest::tool;

/// Exits with code 0.
#[tool]
fn exit_zero() -> u32 {
    std::process::exit(0)
}
