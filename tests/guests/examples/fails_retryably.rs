//! Fails with a transient error, and with a terminal one.

use toolcell_guest::{ToolError, tool};

/// Fails.
#[tool]
fn fails_retryably(
    /// Whether the failure is transient.
    transient: bool,
) -> Result<(), ToolError> {
    if transient {
        Err(ToolError::retryable("the upstream service is busy"))
    } else {
        let number: u32 = "not a number".parse()?;
        Err(ToolError::failed(format!("unreachable: {number}")))
    }
}
