//! A text tool, to make a folder of ten.

use toolcell_guest::tool;

/// Counts the words in a text (runs of non-whitespace).
#[tool]
fn word_count(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}
