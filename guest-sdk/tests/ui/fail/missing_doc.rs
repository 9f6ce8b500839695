use toolcell_guest::tool;

#[tool]
fn undocumented(value: u32) -> u32 {
    value
}

fn main() {}
