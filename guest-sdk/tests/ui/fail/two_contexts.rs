use toolcell_guest::{Context, tool};

/// Two contexts.
#[tool]
fn twice(first: Context, second: Context) -> u32 {
    let _ = (first, second);
    1
}

fn main() {}
