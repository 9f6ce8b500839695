//! Opens as many outbound requests at once as it can, keeping every response: the host must
//! bound the requests (and so the sockets) one call holds, and refuse the rest.

use toolcell_guest::{ToolError, tool};

/// Starts many requests at once.
#[tool(http = ["127.0.0.1"])]
fn http_flood(
    /// The URL to request.
    url: String,
    /// How many requests to start before reading any response.
    count: u32,
) -> Result<(), ToolError> {
    #[cfg(target_arch = "wasm32")]
    {
        let mut pending = Vec::new();
        for _ in 0..count {
            pending.push(toolcell_test_guests::http_start(&url).map_err(ToolError::failed)?);
        }
        let mut responses = Vec::new();
        let mut refused = std::collections::BTreeMap::<String, u32>::new();
        for future in pending {
            future.subscribe().block();
            match future.get() {
                Some(Ok(Ok(response))) => responses.push(response),
                Some(Ok(Err(code))) => *refused.entry(format!("{code:?}")).or_default() += 1,
                _ => *refused.entry("future failed".into()).or_default() += 1,
            }
        }
        Err(ToolError::failed(format!("responses={} refused={refused:?}", responses.len())))
    }
    #[cfg(not(target_arch = "wasm32"))]
    Err(ToolError::failed(format!("{url} {count}")))
}
