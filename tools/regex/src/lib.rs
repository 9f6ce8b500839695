//! The `regex` tool: find, replace and split text with a regular expression.
//!
//! Built on the `regex` crate, whose matching time is linear in the text for every pattern, so
//! a model-written pattern cannot hang the tool; the price is no look-around and no
//! backreferences. Compiled patterns are capped in size so a pattern such as `\w{1000}{1000}`
//! is rejected instead of exhausting memory.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use regex::{Regex, RegexBuilder};
use toolcell_guest::{ToolError, json, tool};

/// The most heap a compiled pattern (and the lazy DFA's cache) may use. The crate's default
/// is 10 MiB; 1 MiB still fits any pattern a person would write (`\w{100}` with Unicode
/// classes is well under it) while keeping a tool instance small.
const SIZE_LIMIT_BYTES: usize = 1 << 20;

/// What to do with the matches.
#[json]
#[serde(rename_all = "snake_case")]
#[derive(Copy, PartialEq, Eq)]
pub enum Operation {
    /// List the matches with their offsets and capture groups.
    Find,
    /// Substitute `replacement` for each match and return the new text.
    Replace,
    /// Cut the text at each match and return the pieces between matches.
    Split,
}

/// Matching options. The same switches can be written inline in the pattern, e.g. `(?i)`.
#[json]
#[derive(PartialEq, Eq)]
pub struct Flags {
    /// `(?i)`: letters match regardless of case.
    #[serde(default)]
    pub case_insensitive: bool,
    /// `(?m)`: `^` and `$` match at the start and end of every line, not only of the whole text.
    #[serde(default)]
    pub multi_line: bool,
    /// `(?s)`: `.` also matches a line break.
    #[serde(default)]
    pub dot_matches_new_line: bool,
    /// `(?x)`: whitespace in the pattern is ignored and `#` starts a comment; write `\ ` or
    /// `[ ]` for a literal space.
    #[serde(default)]
    pub ignore_whitespace: bool,
    /// `(?u)`, on by default: `\w`, `\d`, `\s`, `\b` and case folding follow Unicode. Set
    /// false for ASCII-only classes; `.` and negated classes such as `[^a]` are then rejected
    /// because they could match half of a character.
    #[serde(default = "unicode_by_default")]
    pub unicode: bool,
}

fn unicode_by_default() -> bool {
    true
}

impl Default for Flags {
    fn default() -> Self {
        Self {
            case_insensitive: false,
            multi_line: false,
            dot_matches_new_line: false,
            ignore_whitespace: false,
            unicode: unicode_by_default(),
        }
    }
}

/// One match found by `find`.
#[json]
#[derive(PartialEq, Eq)]
pub struct Match {
    /// The matched text.
    pub text: String,
    /// Where the match starts: a 0-based offset in characters (Unicode code points, not bytes
    /// or UTF-16 units).
    pub start: usize,
    /// Where the match ends, in characters, exclusive: `end - start` is the match's length.
    pub end: usize,
    /// The numbered capture groups in order, like Python's `groups()`: the first element is
    /// group 1 (`$1`). `null` for a group that did not take part in the match. Omitted when
    /// the pattern has no groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Option<String>>,
    /// The named capture groups by name (they are also numbered in `groups`). `null` for a
    /// group that did not take part in the match. Omitted when the pattern has no named groups.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub named: BTreeMap<String, Option<String>>,
}

/// The result, tagged with the operation that produced it.
#[json]
#[serde(tag = "operation", rename_all = "snake_case")]
#[derive(PartialEq, Eq)]
pub enum RegexOutput {
    /// The matches of `find`, in order of position, non-overlapping.
    Find {
        /// How many matches are listed.
        count: usize,
        /// True when `limit` stopped the search and the text has further matches.
        truncated: bool,
        /// The matches.
        matches: Vec<Match>,
    },
    /// The text after `replace`.
    Replace {
        /// The text with the matches replaced.
        text: String,
        /// How many matches were replaced.
        replacements: usize,
    },
    /// The pieces of the text after `split`.
    Split {
        /// The text between matches, in order; empty strings where matches touch each other or
        /// the ends of the text.
        parts: Vec<String>,
    },
}

/// Find all matches of a regular expression in a text, replace them, or split the text at them.
/// Rust `regex` syntax: like PCRE/Python but with NO look-around (`(?=`, `(?<!`) and NO
/// backreferences (`\1`); in exchange matching always runs in linear time. Named groups are
/// `(?P<name>...)` or `(?<name>...)`; inline flags like `(?i)` work. Offsets in the result are
/// character offsets (Unicode code points), 0-based, end exclusive.
/// Example: {"pattern": "(?<user>\\w+)@example\\.com", "text": "mail ann@example.com", "operation": "find"}
#[tool(title = "Regular Expressions", output_schema, read_only, idempotent, open_world = false)]
pub fn regex(
    /// The regular expression. Remember that a backslash must be escaped in JSON (`"\\d+"`).
    pattern: String,
    /// The text to search.
    text: String,
    /// `find` lists the matches, `replace` substitutes `replacement` for them, `split` cuts the
    /// text at them.
    operation: Operation,
    /// Required for `replace`: what each match becomes. `$1` or `${1}` inserts group 1, `${name}`
    /// a named group, `$0` the whole match, `$$` a literal `$`. Write `${1}x`, not `$1x`, when a
    /// letter, digit or `_` follows (`$1x` would mean a group named `1x`).
    replacement: Option<String>,
    /// Matching options; all off by default except `unicode`.
    flags: Option<Flags>,
    /// Use only the first `limit` matches: `find` lists at most this many, `replace` replaces
    /// only these, `split` cuts at most this many times (so at most `limit + 1` parts, the last
    /// holding the rest of the text). Default: every match.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
) -> Result<RegexOutput, ToolError> {
    let limit = match limit {
        Some(0) => return Err(ToolError::invalid_arguments("`limit` must be at least 1; omit it to use every match")),
        Some(limit) => limit,
        None => usize::MAX,
    };
    let regex = compile(&pattern, &flags.unwrap_or_default())?;
    Ok(match operation {
        Operation::Find => find(&regex, &text, limit),
        Operation::Replace => {
            let replacement = replacement.ok_or_else(|| {
                ToolError::invalid_arguments(
                    "`replacement` is required when `operation` is `replace`: give the text each match becomes \
                     (an empty string deletes the matches)",
                )
            })?;
            check_group_references(&regex, &replacement)?;
            replace(&regex, &text, &replacement, limit)
        }
        Operation::Split => split(&regex, &text, limit),
    })
}

/// Builds the regex, turning its errors into messages that tell the model what to change.
fn compile(pattern: &str, flags: &Flags) -> Result<Regex, ToolError> {
    RegexBuilder::new(pattern)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_matches_new_line)
        .ignore_whitespace(flags.ignore_whitespace)
        .unicode(flags.unicode)
        .size_limit(SIZE_LIMIT_BYTES)
        .dfa_size_limit(SIZE_LIMIT_BYTES)
        .build()
        .map_err(|error| match error {
            // The syntax error already quotes the pattern with a caret under the problem.
            regex::Error::Syntax(message) => {
                ToolError::invalid_arguments(format!("`pattern` is not a valid regular expression:\n{message}"))
            }
            regex::Error::CompiledTooBig(limit) => ToolError::invalid_arguments(format!(
                "`pattern` is too big: compiled, it exceeds the size limit of {limit} bytes. Use smaller repetition \
                 counts (e.g. `{{1000}}`), fewer nested repetitions, or ASCII classes (`[0-9]` instead of `\\d`, \
                 `[a-zA-Z0-9_]` instead of `\\w`)"
            )),
            other => ToolError::invalid_arguments(format!("`pattern` cannot be used: {other}")),
        })
}

/// Lists up to `limit` matches with character offsets and capture groups.
fn find(regex: &Regex, text: &str, limit: usize) -> RegexOutput {
    let mut offsets = CharOffsets::new(text);
    let mut matches = Vec::new();
    let mut truncated = false;
    for captures in regex.captures_iter(text) {
        if matches.len() == limit {
            truncated = true;
            break;
        }
        let whole = captures.get_match();
        let start = offsets.at(whole.start());
        let end = offsets.at(whole.end());
        let text_of = |index: usize| captures.get(index).map(|group| group.as_str().to_owned());
        // Group 0 is the whole match, already reported as `text`.
        let groups = (1..captures.len()).map(text_of).collect();
        let named = regex
            .capture_names()
            .enumerate()
            .filter_map(|(index, name)| Some((name?.to_owned(), text_of(index))))
            .collect();
        matches.push(Match { text: whole.as_str().to_owned(), start, end, groups, named });
    }
    RegexOutput::Find { count: matches.len(), truncated, matches }
}

/// Replaces the first `limit` matches, expanding group references in `replacement`.
fn replace(regex: &Regex, text: &str, replacement: &str, limit: usize) -> RegexOutput {
    let mut result = String::with_capacity(text.len());
    let mut copied_up_to = 0;
    let mut replacements = 0;
    for captures in regex.captures_iter(text).take(limit) {
        let whole = captures.get_match();
        result.push_str(&text[copied_up_to..whole.start()]);
        captures.expand(replacement, &mut result);
        copied_up_to = whole.end();
        replacements += 1;
    }
    result.push_str(&text[copied_up_to..]);
    RegexOutput::Replace { text: result, replacements }
}

/// Splits at the first `limit` matches.
fn split(regex: &Regex, text: &str, limit: usize) -> RegexOutput {
    let parts = regex.splitn(text, limit.saturating_add(1)).map(str::to_owned).collect();
    RegexOutput::Split { parts }
}

/// Rejects references in `replacement` to groups the pattern does not have. The regex crate
/// silently expands those to nothing, which hides the common slip of writing `$1_` or `$1st`
/// (a group *named* `1_` / `1st`) for "group 1 followed by text".
///
/// Mirrors the crate's reference syntax: `$$` is a literal `$`; `${ref}` takes everything up
/// to the next `}`; `$ref` takes the longest run of `[0-9A-Za-z_]`; a `ref` that parses as a
/// number is a group index, anything else a name; a `$` that starts no reference is literal.
fn check_group_references(regex: &Regex, replacement: &str) -> Result<(), ToolError> {
    let mut rest = replacement;
    while let Some(dollar) = rest.find('$') {
        rest = &rest[dollar + 1..];
        let (reference, written, after) = if let Some(stripped) = rest.strip_prefix('$') {
            rest = stripped;
            continue;
        } else if let Some(braced) = rest.strip_prefix('{') {
            match braced.split_once('}') {
                Some((reference, after)) => (reference, &rest[..reference.len() + 2], after),
                None => continue,
            }
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            if end == 0 {
                continue;
            }
            (&rest[..end], &rest[..end], &rest[end..])
        };
        rest = after;
        let exists = match reference.parse::<usize>() {
            Ok(index) => index < regex.captures_len(),
            Err(_) => regex.capture_names().flatten().any(|name| name == reference),
        };
        if !exists {
            return Err(unknown_group_error(regex, reference, written));
        }
    }
    Ok(())
}

fn unknown_group_error(regex: &Regex, reference: &str, written: &str) -> ToolError {
    let groups = regex.captures_len() - 1;
    let names: Vec<String> = regex.capture_names().flatten().map(|name| format!("`{name}`")).collect();
    let numbered = match groups {
        0 => "no capture groups, only `$0` (the whole match)".to_owned(),
        1 => "only group `$1`".to_owned(),
        _ => format!("groups `$1` to `${groups}`"),
    };
    let available = if names.is_empty() {
        format!("the pattern has {numbered}")
    } else {
        format!("the pattern has {numbered}, named {}", names.join(", "))
    };
    let digits = reference.len() - reference.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let hint = if digits > 0 && digits < reference.len() {
        let (number, tail) = reference.split_at(digits);
        format!("; to follow group {number} by `{tail}`, write `${{{number}}}{tail}`")
    } else {
        String::new()
    };
    ToolError::invalid_arguments(format!(
        "`replacement` refers to `${written}`, a capture group the pattern does not have: {available}{hint}; \
         write `$$` for a literal `$`"
    ))
}

/// Converts increasing byte offsets of `text` into character offsets in one pass overall.
struct CharOffsets<'t> {
    text: &'t str,
    byte: usize,
    chars: usize,
}

impl<'t> CharOffsets<'t> {
    fn new(text: &'t str) -> Self {
        Self { text, byte: 0, chars: 0 }
    }

    /// The character offset of `byte`, which must not precede the previous call's. Match
    /// offsets satisfy this: matches come in order, don't overlap, and (on `&str`) always lie
    /// on character boundaries.
    fn at(&mut self, byte: usize) -> usize {
        self.chars += self.text[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars
    }
}

#[cfg(test)]
mod tests;
