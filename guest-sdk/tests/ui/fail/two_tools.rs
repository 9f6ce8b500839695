use toolcell_guest::tool;

/// The first tool.
#[tool]
fn first() -> u32 {
    1
}

/// The second tool, in the same crate.
#[tool]
fn second() -> u32 {
    2
}

fn main() {}
