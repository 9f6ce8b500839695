//! Sends a refused request again and again until it is stopped: the call must end as a
//! timeout, not as the refusal.

use toolcell_guest::{ToolError, tool};

/// Retries a request forever.
#[tool(http = ["example.com"])]
fn http_retry_loop(
    /// The URL.
    url: String,
) -> Result<(), ToolError> {
    let mut attempts = 0u64;
    loop {
        if toolcell_test_guests::http_get(&url, false).is_ok() {
            return Err(ToolError::failed(format!("{url} answered after {attempts} attempts")));
        }
        attempts += 1;
    }
}
