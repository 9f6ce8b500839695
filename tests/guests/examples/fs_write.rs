//! Writes, renames and deletes files in a directory: under a read-only grant every one must
//! be refused.

use toolcell_guest::{ToolError, tool};

/// Writes a file.
#[tool(writable_dirs = ["/data"])]
fn fs_write(
    /// The file to create or replace.
    path: String,
    /// What to write.
    text: String,
) -> Result<usize, ToolError> {
    let failed = |err: std::io::Error| ToolError::failed(format!("{:?}: {err}", err.kind()));
    std::fs::write(&path, &text).map_err(failed)?;
    Ok(std::fs::read_to_string(&path).map_err(failed)?.len())
}
