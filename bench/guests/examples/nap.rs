//! Waits in a host call, as a tool waiting on the network does: for the memory of many
//! calls in flight.

use toolcell_guest::tool;

/// Sleeps for the given number of milliseconds, then says so.
#[tool]
fn nap(
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> u64 {
    std::thread::sleep(std::time::Duration::from_millis(ms));
    ms
}
