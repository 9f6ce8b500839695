//! Asks for more memory than its limit, handles the refusal (legal: `try_reserve`), then
//! fails for an unrelated reason. The failure must be reported as itself, not as the
//! memory limit.

use toolcell_guest::{ToolError, tool};

/// Fails after a handled allocation failure.
#[tool]
fn refused_then_fails(
    /// How to fail afterwards: `panic`, `exit` or `error`.
    mode: String,
) -> Result<(), ToolError> {
    let mut huge: Vec<u8> = Vec::new();
    let refused = huge.try_reserve(1 << 30).is_err();
    match mode.as_str() {
        "panic" => panic!("an unrelated bug (the allocation was refused: {refused})"),
        "exit" => std::process::exit(3),
        _ => Err(ToolError::failed(format!("an unrelated failure (the allocation was refused: {refused})"))),
    }
}
