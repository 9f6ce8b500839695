use toolcell_guest::tool;

/// An empty title.
#[tool(title = "  ")]
fn untitled(value: u32) -> u32 {
    value
}

/// A title over 128 characters.
#[tool(title = "A title that goes on and on, well past the length any user interface would show in a tool picker, a menu or a confirmation dialog")]
fn verbose(value: u32) -> u32 {
    value
}

/// A title on two lines.
#[tool(title = "Two\nlines")]
fn broken(value: u32) -> u32 {
    value
}

fn main() {}
