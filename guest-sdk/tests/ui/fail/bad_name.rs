use toolcell_guest::tool;

/// Badly named.
#[tool(name = "has space")]
fn named(value: u32) -> u32 {
    value
}

fn main() {}
