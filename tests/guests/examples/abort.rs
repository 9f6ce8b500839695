//! Aborts without panicking.

use toolcell_guest::tool;

/// Aborts.
#[tool]
fn abort() -> u32 {
    std::process::abort()
}
