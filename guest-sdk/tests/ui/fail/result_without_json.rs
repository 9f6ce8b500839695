use toolcell_guest::{ToolError, tool};

/// A result without `#[json]`.
pub struct Summary {
    pub total: u32,
}

/// Summarize something.
#[tool]
fn summarize(
    /// How many.
    count: u32,
) -> Result<Summary, ToolError> {
    Ok(Summary { total: count })
}

fn main() {}
