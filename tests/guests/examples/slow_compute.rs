//! Sleeps for the seconds asked, then answers: the conformance suite's `slow_compute` fixture,
//! and the long call the tasks tests poll and cancel.

use toolcell_guest::tool;

/// Waits `seconds`, then says so.
#[tool]
fn slow_compute(
    /// How long to take, in seconds.
    #[schemars(range(min = 0, max = 600))]
    seconds: u32,
    /// A label to echo in the answer.
    label: Option<String>,
) -> String {
    std::thread::sleep(std::time::Duration::from_secs(u64::from(seconds)));
    format!("{} done after {seconds} s", label.unwrap_or_else(|| "slow_compute".to_owned()))
}
