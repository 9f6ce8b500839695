use toolcell_guest::tool;

/// Options without `#[json]`.
pub struct Options {
    pub verbose: bool,
}

/// Count something.
#[tool]
fn count(
    /// The options.
    options: Options,
) -> u32 {
    u32::from(options.verbose)
}

fn main() {}
