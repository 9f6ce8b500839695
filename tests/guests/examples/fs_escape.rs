//! Tries to read a path outside its granted directory (`..`, an absolute path, a symlink that
//! points out): every read must fail inside the guest.

use toolcell_guest::{ToolError, tool};

/// Reads a file.
#[tool(dirs = ["/data"])]
fn fs_escape(
    /// The path to read.
    path: String,
) -> Result<String, ToolError> {
    std::fs::read_to_string(&path).map_err(|err| ToolError::failed(format!("{:?}: {err}", err.kind())))
}
