//! Declares a title and every behaviour hint, and requests an HTTP host while declaring a
//! closed world: what a tool declares wins over what the host would derive.

use toolcell_guest::tool;

/// Returns its argument.
#[tool(
    title = "  Annotated tool  ",
    read_only = false,
    destructive = false,
    idempotent,
    open_world = false,
    http = ["example.com"]
)]
fn annotated(
    /// Any number.
    value: f64,
) -> f64 {
    value
}
