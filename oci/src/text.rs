//! Text from a registry, a bundle or a library, as a diagnostic may show it: none of it can
//! move a terminal's cursor, reorder what follows, or run on without end.

/// `text` with every control and invisible formatting character (bidirectional overrides,
/// zero-width characters) replaced by `?`, and cut after `max` characters (then `…`).
pub(crate) fn shown(text: &str, max: usize) -> String {
    let mut shown: String = text.chars().take(max).map(|c| if harmless(c) { c } else { '?' }).collect();
    if text.chars().nth(max).is_some() {
        shown.push('…');
    }
    shown
}

fn harmless(c: char) -> bool {
    !c.is_control()
        && !matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_move_nothing_and_long_text_is_cut() {
        assert_eq!(shown("ok\n\u{1b}[1A\u{202e}evil", 100), "ok??[1A?evil");
        assert_eq!(shown("a\u{200b}b\u{2066}c", 100), "a?b?c");
        assert_eq!(shown(&"x".repeat(500), 300).chars().count(), 301);
        assert_eq!(shown("élan", 100), "élan");
    }
}
