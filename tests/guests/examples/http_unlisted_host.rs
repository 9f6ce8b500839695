//! Tries to send data to a host its allow-list does not name (exfiltration): the request must
//! be refused before it leaves, and the call must end in `http_denied` naming the grant.

use toolcell_guest::{ToolError, tool};

/// Fetches a URL.
#[tool(http = ["example.com"])]
fn http_unlisted_host(
    /// The URL.
    url: String,
) -> Result<u16, ToolError> {
    toolcell_test_guests::http_get(&url, false).map(|(status, _)| status).map_err(ToolError::failed)
}
