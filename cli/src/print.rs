//! Writing to stdout: JSON, and text cut to fit a terminal line.

pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    out!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

pub(crate) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

/// The widest title `list` shows; a longer one is cut.
pub(crate) const MAX_TITLE_COLUMN: usize = 32;

/// The first sentence of a description, cut to fit a table row.
pub(crate) fn summary(description: &str) -> String {
    const MAX_CHARS: usize = 80;
    let line = first_line(description);
    let sentence = line.find(". ").map_or(line.as_str(), |end| &line[..=end]);
    cut(sentence, MAX_CHARS)
}

/// `text`, or its first `max_chars - 1` characters and `…` when it is longer.
pub(crate) fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max_chars - 1).collect();
        format!("{}…", cut.trim_end())
    }
}
