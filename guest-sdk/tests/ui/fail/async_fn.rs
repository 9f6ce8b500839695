use toolcell_guest::tool;

/// Async.
#[tool]
async fn fetch(
    /// A URL.
    url: String,
) -> String {
    url
}

fn main() {}
