use toolcell_guest::tool;

/// Generic.
#[tool]
fn generic<T: Clone>(value: T) -> T {
    value
}

fn main() {}
