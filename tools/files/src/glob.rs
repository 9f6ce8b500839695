//! `glob`: shell-style name patterns, translated to a regular expression.

use regex::{Regex, RegexBuilder};
use toolcell_guest::ToolError;

/// Heap a compiled glob may use; real globs need a few KiB.
const SIZE_LIMIT_BYTES: usize = 1 << 20;

/// A compiled `glob`.
#[derive(Debug)]
pub(crate) struct Glob {
    regex: Regex,
    /// A glob with a `/` is matched against the whole relative path, otherwise against the
    /// last component (the entry's own name).
    whole_path: bool,
}

impl Glob {
    /// Compiles `glob`: `*` is any run of characters but `/`, `?` one character but `/`,
    /// `**` any run including `/` (`**/` also none), `[abc]`, `[a-z]` and `[!abc]` a class,
    /// `{a,b}` alternatives, and `\` makes the next character literal.
    pub(crate) fn new(glob: &str) -> Result<Self, ToolError> {
        if glob.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`glob` is empty: give a name pattern such as `*.rs`, or omit it to keep every entry",
            ));
        }
        if glob.starts_with('/') {
            return Err(ToolError::invalid_arguments(format!(
                "`glob` is matched against paths relative to `path`, so it cannot start with `/`: set `path` to the \
                 directory and `glob` to the rest (`src/*.rs` rather than `/workspace/src/*.rs`); got `{glob}`"
            )));
        }
        let chars: Vec<char> = glob.chars().collect();
        let mut pattern = String::from("^");
        let mut open_braces = 0_usize;
        let mut index = 0;
        while let Some(&character) = chars.get(index) {
            index += 1;
            match character {
                '*' if chars.get(index) == Some(&'*') => {
                    index += 1;
                    if chars.get(index) == Some(&'/') {
                        index += 1;
                        pattern.push_str("(?:[^/]*/)*");
                    } else {
                        pattern.push_str(".*");
                    }
                }
                '*' => pattern.push_str("[^/]*"),
                '?' => pattern.push_str("[^/]"),
                '{' => {
                    open_braces += 1;
                    pattern.push_str("(?:");
                }
                '}' if open_braces > 0 => {
                    open_braces -= 1;
                    pattern.push(')');
                }
                ',' if open_braces > 0 => pattern.push('|'),
                '[' => match class(&chars[index..]) {
                    Some((class, used)) => {
                        pattern.push_str(&class);
                        index += used;
                    }
                    None => pattern.push_str(r"\["),
                },
                '\\' => {
                    let literal = chars.get(index).copied().unwrap_or('\\');
                    index += 1;
                    push_literal(&mut pattern, literal);
                }
                other => push_literal(&mut pattern, other),
            }
        }
        if open_braces > 0 {
            return Err(ToolError::invalid_arguments(format!(
                "`glob` `{glob}` has a `{{` without its `}}`: close it, as in `*.{{ts,tsx}}`, or write `\\{{` for a \
                 literal brace"
            )));
        }
        pattern.push('$');
        let regex = RegexBuilder::new(&pattern)
            .size_limit(SIZE_LIMIT_BYTES)
            .dfa_size_limit(SIZE_LIMIT_BYTES)
            .build()
            .map_err(|error| match error {
            regex::Error::Syntax(_) => ToolError::invalid_arguments(format!(
                "`glob` `{glob}` is not a valid pattern (check its `[...]` classes: ranges such as `[a-z]` must \
                     go from low to high); use `*`, `?`, `[abc]`, `[a-z]` and `{{a,b}}`"
            )),
            other => ToolError::invalid_arguments(format!("`glob` `{glob}` cannot be used: {other}; simplify it")),
        })?;
        Ok(Self { regex, whole_path: glob.contains('/') })
    }

    /// Whether the entry at `relative` (its `/`-separated path below the searched directory)
    /// matches.
    pub(crate) fn matches(&self, relative: &str) -> bool {
        let subject = if self.whole_path { relative } else { relative.rsplit('/').next().unwrap_or(relative) };
        self.regex.is_match(subject)
    }
}

/// Translates the class whose `[` was just read; `rest` follows it. Returns the regex class and
/// how many characters of `rest` it used, or `None` when no `]` closes it (then `[` is literal).
/// A `]` right after `[` or `[!` is a member, as in shells.
fn class(rest: &[char]) -> Option<(String, usize)> {
    let negated = matches!(rest.first(), Some('!' | '^'));
    let first = usize::from(negated);
    let close = first + 1 + rest.get(first + 1..)?.iter().position(|&character| character == ']')?;
    let members = rest.get(first..close)?;
    // A negated class must not match `/` either: it stands for part of one name.
    let mut class = String::from(if negated { "[^/" } else { "[" });
    for &member in members {
        if member != '-' && member.is_ascii_punctuation() {
            class.push('\\');
        }
        class.push(member);
    }
    class.push(']');
    Some((class, close + 1))
}

fn push_literal(pattern: &mut String, literal: char) {
    pattern.push_str(&regex::escape(literal.encode_utf8(&mut [0; 4])));
}
