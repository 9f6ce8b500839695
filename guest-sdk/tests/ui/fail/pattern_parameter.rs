use toolcell_guest::tool;

/// A tuple pattern.
#[tool]
fn pair((a, b): (u32, u32)) -> u32 {
    a + b
}

fn main() {}
