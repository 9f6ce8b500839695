use toolcell_guest::tool;

/// Read-only and destructive at once.
#[tool(read_only, destructive = true)]
fn confused(value: u32) -> u32 {
    value
}

/// A hint that is not a boolean.
#[tool(idempotent = "yes")]
fn unsure(value: u32) -> u32 {
    value
}

fn main() {}
