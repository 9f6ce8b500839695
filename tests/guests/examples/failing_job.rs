//! Works for a second, then fails: the conformance suite's `failing_job` fixture (a tool error,
//! so its task completes with `isError`).

use toolcell_guest::{ToolError, tool};

/// Fails after a second.
#[tool]
fn failing_job() -> Result<String, ToolError> {
    std::thread::sleep(std::time::Duration::from_secs(1));
    Err(ToolError::failed("the job failed, as it always does"))
}
