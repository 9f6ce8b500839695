//! Reads a whole HTTP response however large it is: the host must stop the body at its cap,
//! and the call must end in `http_response_too_large`.

use toolcell_guest::{ToolError, tool};

/// Downloads a URL completely.
#[tool(http = ["127.0.0.1"])]
fn http_huge_response(
    /// The URL.
    url: String,
) -> Result<u64, ToolError> {
    toolcell_test_guests::http_get(&url, true).map(|(_, read)| read).map_err(ToolError::failed)
}
