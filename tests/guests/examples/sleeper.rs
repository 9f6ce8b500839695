//! Blocks in a host call (a WASI clock poll) for a minute: epoch interruption cannot fire
//! while the guest waits in the host, so only the wall-clock timeout stops it.

use toolcell_guest::tool;

/// Sleeps for a minute.
#[tool]
fn sleeper() -> &'static str {
    std::thread::sleep(std::time::Duration::from_secs(60));
    "woke up"
}
