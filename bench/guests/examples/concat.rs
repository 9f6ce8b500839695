//! A string tool, to make a folder of ten.

use toolcell_guest::tool;

/// Joins two strings with a separator.
#[tool]
fn concat(
    /// The first string.
    left: String,
    /// The second string.
    right: String,
    /// What goes between them; nothing when omitted.
    separator: Option<String>,
) -> String {
    format!("{left}{}{right}", separator.unwrap_or_default())
}
