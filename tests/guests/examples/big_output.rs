//! Returns a JSON string of the requested size: over the output cap it must be discarded.

use toolcell_guest::tool;

/// Returns `bytes` bytes of JSON.
#[tool]
fn big_output(
    /// Size of the result in bytes (at least 2, for the quotes).
    #[schemars(range(min = 2))]
    bytes: usize,
) -> String {
    "x".repeat(bytes - 2)
}
