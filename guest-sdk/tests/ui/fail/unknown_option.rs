use toolcell_guest::tool;

/// Unknown option.
#[tool(timeout = 5)]
fn slow(value: u32) -> u32 {
    value
}

fn main() {}
