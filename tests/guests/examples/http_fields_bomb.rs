//! Makes the host hold memory for it: creates header-field sets, each with one large value,
//! and keeps them all. The host must bound both each set and how many a call may hold, and
//! a tool without an HTTP grant must not be able to create any.

use toolcell_guest::{ToolError, tool};

/// Creates header fields until refused.
#[tool(http = ["example.com"])]
fn http_fields_bomb(
    /// How many field sets to create.
    count: u32,
    /// The size of the one header value in each.
    value_bytes: u32,
) -> Result<usize, ToolError> {
    #[cfg(target_arch = "wasm32")]
    {
        use wasip2::http::types::Fields;
        let value = vec![b'x'; value_bytes as usize];
        let mut kept = Vec::new();
        for _ in 0..count {
            match Fields::from_list(&[("x-bomb".to_owned(), value.clone())]) {
                Ok(fields) => kept.push(fields),
                Err(err) => return Err(ToolError::failed(format!("refused after {}: {err:?}", kept.len()))),
            }
        }
        Ok(kept.len())
    }
    #[cfg(not(target_arch = "wasm32"))]
    Ok((count as usize).min(value_bytes as usize))
}
