//! The `json_query` tool: runs a JSONPath query (RFC 9535) over a JSON document.
//!
//! Parsing and evaluation are `serde_json_path`'s. This crate adds what a model needs around
//! them: limits that keep a hostile query from overflowing the guest's stack or parsing for
//! minutes, error messages that point at the offending column, and normalized paths written
//! exactly as RFC 9535 section 2.7 prescribes.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use serde_json::Value;
use serde_json_path::{JsonPath, NormalizedPath, ParseError, PathElement};
use toolcell_guest::{ToolError, json, tool};

#[cfg(test)]
mod tests;

/// The longest `query` accepted, in characters. Real queries are a few dozen characters;
/// the cap bounds parsing time (see [`MAX_NESTING`]).
const MAX_QUERY_CHARS: usize = 4096;

/// How deeply brackets and parentheses may nest in a query. The parser recurses once per
/// level, and a wasm guest has a small fixed stack. It also re-parses a nested filter once
/// per alternative it tries, which doubles the work per level of `[?...[?...]]`: at 8 levels
/// the worst query of [`MAX_QUERY_CHARS`] takes about 0.2 s and under half the host's
/// default fuel budget (measured in wasm), at 10 levels it exhausts that budget.
const MAX_NESTING: usize = 8;

/// The largest `limit` accepted.
const MAX_LIMIT: usize = 10_000;

/// How many characters of the query an error message shows around the problem.
const EXCERPT_CHARS: usize = 72;

/// What a query selected.
#[json]
pub struct QueryResult {
    /// How many nodes the query selected in total, including any left out of `matches`.
    pub count: usize,
    /// The selected nodes in the order the query produced them, at most `limit` of them.
    pub matches: Vec<Match>,
    /// Whether `matches` was cut short by `limit`.
    pub truncated: bool,
}

/// One node the query selected.
#[json]
pub struct Match {
    /// Where the node is: its normalized path (RFC 9535 section 2.7), e.g. `$['store']['book'][0]['title']`.
    pub path: String,
    /// The node's value.
    pub value: Value,
}

/// Runs a JSONPath query (RFC 9535) over a JSON document and returns each selected value
/// with its normalized path. Use it to pick values out of a large JSON document, filter array
/// items by a condition, or find a key at any depth, instead of reading the whole document.
///
/// Syntax: `$` root, `.name` or `['name']` member, `[0]` and `[-1]` index, `[1:5:2]` slice,
/// `*` all children, `..name` descendants at any depth, `[a,b]` several selectors,
/// `[?@.price < 10]` filter (`@` is the current node; `==` `!=` `<` `<=` `>` `>=` `&&` `||`
/// `!`, parentheses, and the functions length(), count(), match(), search(), value()).
/// Object members come in no particular order. An invalid query's error names the column.
///
/// Example: {"document": {"store": {"book": [{"title": "Moby Dick", "price": 8.99}]}},
/// "query": "$.store.book[?@.price < 10].title"}
#[tool(title = "JSON Query", output_schema, read_only, idempotent, open_world = false)]
pub fn json_query(
    /// The JSON document to query: any value (object, array, string, number, boolean, null).
    /// A string holding the JSON text of an object or array is parsed and queried as JSON.
    document: Value,
    /// The JSONPath query, starting with `$`, e.g. `$.store.book[?@.price < 10].title` or
    /// `$..author`. Use `['my-key']` for member names that are not letters, digits and `_`;
    /// string literals take single or double quotes.
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    query: String,
    /// At most this many matches to return (default: all); `count` still reports the total.
    /// 0 returns only the count.
    #[schemars(range(max = MAX_LIMIT))]
    limit: Option<usize>,
) -> Result<QueryResult, ToolError> {
    if let Some(limit) = limit.filter(|&limit| limit > MAX_LIMIT) {
        return Err(ToolError::invalid_arguments(format!(
            "`limit` is {limit}; at most {MAX_LIMIT} matches can be returned (`count` always reports the total)"
        )));
    }
    let path = parse_query(&query)?;
    let document = parse_json_text(document);

    let nodes = path.query_located(&document);
    let count = nodes.len();
    let matches: Vec<Match> = nodes
        .into_iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|node| Match { path: normalized_path(node.location()), value: node.node().clone() })
        .collect();
    Ok(QueryResult { count, truncated: matches.len() < count, matches })
}

/// Checks `query` against the limits, then parses it.
fn parse_query(query: &str) -> Result<JsonPath, ToolError> {
    if query.is_empty() {
        return Err(ToolError::invalid_arguments(format!("`query` is empty. {SYNTAX_REMINDER}")));
    }
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(ToolError::invalid_arguments(format!(
            "`query` is {chars} characters long; at most {MAX_QUERY_CHARS} are allowed"
        )));
    }
    if let Some(offset) = nesting_exceeded_at(query, MAX_NESTING) {
        return Err(ToolError::invalid_arguments(format!(
            "`query` nests brackets and parentheses more than {MAX_NESTING} levels deep at {}; simplify it",
            describe_position(query, offset)
        )));
    }
    JsonPath::parse(query).map_err(|err| syntax_error(query, &err))
}

/// Reminds the model of the basics after a syntax error.
const SYNTAX_REMINDER: &str = "A JSONPath query starts with `$` (the root), e.g. `$.store.book[?@.price < 10].title`; \
     use `['name']` for member names with characters other than letters, digits and `_`.";

/// Turns a parse error into a message that quotes the parser, names the column and shows the
/// query with a caret under it.
fn syntax_error(query: &str, err: &ParseError) -> ToolError {
    // `position` is a byte offset into the query (the crate documents it as 1-indexed, but it
    // is the 0-based offset of the input the parser stopped at). Clamp it so that a change in
    // that convention cannot make slicing panic.
    let mut offset = err.position().min(query.len());
    while !query.is_char_boundary(offset) {
        offset -= 1;
    }
    let mut reason = err.message().to_owned();
    // The parser's catch-all says nothing about what it found: say it.
    if let Some(context) = reason.strip_suffix("parser error") {
        let found = match query[offset..].chars().next() {
            Some(c) => format!("unexpected {}", quote_char(c)),
            None => "unexpected end of query".to_owned(),
        };
        reason = format!("{context}{found}");
    }
    ToolError::invalid_arguments(format!(
        "`query` is not valid JSONPath: {reason} at {}:\n{}\n{SYNTAX_REMINDER}",
        describe_position(query, offset),
        caret_excerpt(query, offset),
    ))
}

/// A character as an error message shows it: in backticks, or named when invisible.
fn quote_char(c: char) -> String {
    match c {
        ' ' => "space".to_owned(),
        '\t' => "tab".to_owned(),
        '\n' => "line break".to_owned(),
        '\r' => "carriage return".to_owned(),
        '`' => "backtick (`)".to_owned(),
        c if c.is_control() => format!("control character U+{:04X}", u32::from(c)),
        c => format!("`{c}`"),
    }
}

/// The line containing byte `offset` of `query`, its 1-based number and the 1-based column
/// (in characters) of `offset` within it.
fn line_of(query: &str, offset: usize) -> (&str, usize, usize) {
    let before = &query[..offset];
    let start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let end = query[offset..].find('\n').map_or(query.len(), |newline| offset + newline);
    let line = query[start..end].strip_suffix('\r').unwrap_or(&query[start..end]);
    let number = before.matches('\n').count() + 1;
    let column = query[start..offset].chars().count() + 1;
    (line, number, column)
}

/// "column 7", or "line 2, column 3" when the query spans several lines.
fn describe_position(query: &str, offset: usize) -> String {
    let (_, line, column) = line_of(query, offset);
    if query.contains('\n') { format!("line {line}, column {column}") } else { format!("column {column}") }
}

/// The line of `query` holding `offset`, indented, with a caret under `offset` on the next
/// line; long lines are cut to [`EXCERPT_CHARS`] around the caret.
fn caret_excerpt(query: &str, offset: usize) -> String {
    let (line, _, column) = line_of(query, offset);
    let chars: Vec<char> = line.chars().collect();
    let caret = column - 1;
    let start = caret.saturating_sub(EXCERPT_CHARS / 2).min(chars.len().saturating_sub(EXCERPT_CHARS));
    let end = (start + EXCERPT_CHARS).min(chars.len());

    let mut text = String::from("  ");
    let mut marker = String::from("  ");
    if start > 0 {
        text.push('…');
        marker.push(' ');
    }
    for &c in &chars[start..end] {
        // Keep tabs on both lines so the caret lines up; other control characters would
        // disturb the layout, so they show as spaces.
        text.push(if c.is_control() && c != '\t' { ' ' } else { c });
    }
    if end < chars.len() {
        text.push('…');
    }
    for &c in &chars[start..caret.min(end)] {
        marker.push(if c == '\t' { '\t' } else { ' ' });
    }
    marker.push('^');
    format!("{text}\n{marker}")
}

/// The byte offset of the first `[` or `(` that opens a level deeper than `max`, ignoring
/// string literals, or `None` when the query stays within `max`. Only exact for valid
/// queries, which is enough: the parser stops at the first error, before any deeper level.
fn nesting_exceeded_at(query: &str, max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    for (offset, c) in query.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => {
                depth += 1;
                if depth > max {
                    return Some(offset);
                }
            }
            ']' | ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// `document` itself, or the JSON it holds when it is a string containing the JSON text of an
/// object or array: models sometimes serialize the document twice, and a query into such a
/// string could never match anything but `$`.
fn parse_json_text(document: Value) -> Value {
    if let Value::String(text) = &document
        && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(text)
    {
        return parsed;
    }
    document
}

/// `location` as a normalized path (RFC 9535 section 2.7), e.g. `$['a'][0]['it\'s']`.
///
/// Written here rather than with `NormalizedPath`'s `Display`, which (in serde_json_path_core
/// 0.2.2) leaves quotes, backslashes and control characters in member names unescaped.
fn normalized_path(location: &NormalizedPath<'_>) -> String {
    let mut path = String::from("$");
    for element in location.iter() {
        match element {
            PathElement::Index(index) => {
                let _ = write!(path, "[{index}]");
            }
            PathElement::Name(name) => {
                path.push_str("['");
                push_escaped_name(&mut path, name);
                path.push_str("']");
            }
        }
    }
    path
}

/// Appends `name` escaped as a normalized path's member name: the ABNF rules `normal-escapable`
/// and `normal-hexchar` of RFC 9535 section 2.7.
fn push_escaped_name(path: &mut String, name: &str) {
    for c in name.chars() {
        match c {
            '\u{8}' => path.push_str("\\b"),
            '\u{c}' => path.push_str("\\f"),
            '\n' => path.push_str("\\n"),
            '\r' => path.push_str("\\r"),
            '\t' => path.push_str("\\t"),
            '\'' => path.push_str("\\'"),
            '\\' => path.push_str("\\\\"),
            '\u{0}'..='\u{1f}' => {
                let _ = write!(path, "\\u{:04x}", u32::from(c));
            }
            c => path.push(c),
        }
    }
}
