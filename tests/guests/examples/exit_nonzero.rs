//! Calls `wasi:cli/exit` with failure in the middle of a call.

use toolcell_guest::tool;

/// Exits with a failure code.
#[tool]
fn exit_nonzero() -> u32 {
    std::process::exit(3)
}
