//! Writing to stdout: JSON, and text cut to fit a terminal line; numbers and durations as
//! people write them.

use std::time::Duration;

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

/// `10,000,000,000`.
pub(crate) fn grouped(number: u64) -> String {
    let digits = number.to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// `5 s`, `500 ms`, `1.5 s`, `2 min`.
pub(crate) fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    match millis {
        0..1000 => format!("{millis} ms"),
        _ if millis.is_multiple_of(60_000) => format!("{} min", millis / 60_000),
        _ if millis.is_multiple_of(1000) => format!("{} s", millis / 1000),
        // From whole milliseconds, not floating point (1789 ms read "1.7890000000000001 s").
        _ => format!("{}.{} s", millis / 1000, format!("{:03}", millis % 1000).trim_end_matches('0')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_durations_read_as_people_write_them() {
        assert_eq!(grouped(10_000_000_000), "10,000,000,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(human_duration(Duration::from_secs(5)), "5 s");
        assert_eq!(human_duration(Duration::from_millis(500)), "500 ms");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human_duration(Duration::from_millis(1789)), "1.789 s");
        assert_eq!(human_duration(Duration::from_millis(2050)), "2.05 s");
        assert_eq!(human_duration(Duration::from_secs(120)), "2 min");
    }
}
