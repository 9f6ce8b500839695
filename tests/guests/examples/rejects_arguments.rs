//! Finds the (schema-valid) arguments unusable: the model must fix them.

use toolcell_guest::{ToolError, tool};

/// Rejects every number but 42.
#[tool]
fn rejects_arguments(
    /// A number.
    number: i64,
) -> Result<i64, ToolError> {
    if number == 42 {
        Ok(number)
    } else {
        Err(ToolError::invalid_arguments(format!("`number` must be 42, not {number}")))
    }
}
