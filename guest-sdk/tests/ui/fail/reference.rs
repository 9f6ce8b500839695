use toolcell_guest::tool;

/// Borrows.
#[tool]
fn shout(
    /// Text.
    text: &str,
) -> String {
    text.to_uppercase()
}

fn main() {}
