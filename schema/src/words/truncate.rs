//! Cutting text to size for messages: at a character boundary, marked with `…`.

const ELLIPSIS: char = '…';

/// `text` cut to at most `max_bytes` bytes (the `…` that marks a cut included).
pub fn truncated(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut cut = max_bytes.saturating_sub(ELLIPSIS.len_utf8());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut short = String::with_capacity(cut + ELLIPSIS.len_utf8());
    short.push_str(&text[..cut]);
    short.push(ELLIPSIS);
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_character_boundary_within_the_limit() {
        assert_eq!(truncated("short", 10), "short");
        let cut = truncated("ééééé", 6); // 2 bytes each; '…' takes 3
        assert_eq!(cut, "é…");
        assert!(cut.len() <= 6);
        assert_eq!(truncated("abcdef", 4), "a…");
    }
}
