//! How values, names, sizes and counts are written in messages for a model: `the string "5"`,
//! `` `expr` ``, `3 entries`, `a, b or c`, `64 MiB`. The one place for these words: the
//! explainer's sentences use them, and so do the runtime's errors and provider formats.

mod suggest;
mod truncate;

use jsonschema::JsonType;
use serde_json::Value;

pub use suggest::{closest, nearest, symbol_owner, symbol_owner_ignoring_case};
pub use truncate::truncated;

/// A value, name or pattern quoted in a message is cut to this many bytes.
const MAX_QUOTED_BYTES: usize = 60;
/// An allowed value shown in a list is cut to this many bytes.
const MAX_LISTED_BYTES: usize = 40;

/// "a, b or c".
pub fn join_or(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// "1 character", "3 entries".
pub fn count_of(count: u64, unit: &str) -> String {
    match (count, unit) {
        (1, _) => format!("1 {unit}"),
        (_, "entry") => format!("{count} entries"),
        _ => format!("{count} {unit}s"),
    }
}

/// "`a`, `b`, `c`": names as code, in order.
pub fn code_list(names: &[String]) -> String {
    names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}

/// `64 MiB`, `1.5 KiB`, `10 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64;
    let mut unit = "bytes";
    for next in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    if value.fract() == 0.0 { format!("{value:.0} {unit}") } else { format!("{value:.1} {unit}") }
}

/// "it" or "them", for `count` things.
pub(crate) fn them(count: usize) -> &'static str {
    if count == 1 { "it" } else { "them" }
}

/// A type's values in the plural: "strings".
pub(crate) fn plural(ty: JsonType) -> &'static str {
    match ty {
        JsonType::Integer => "integers",
        JsonType::Number => "numbers",
        JsonType::String => "strings",
        JsonType::Array => "arrays",
        JsonType::Object => "objects",
        JsonType::Boolean => "booleans",
        JsonType::Null => "nulls",
    }
}

/// A value as the subject of a sentence: a string in backticks, else described.
pub(crate) fn subject(value: &Value) -> String {
    match value.as_str() {
        Some(text) => code(text),
        None => described(value),
    }
}

/// A value with what it is: `the string "5"`, `the number 5`, `an array of 3 items`.
pub(crate) fn described(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", quoted(text)),
        Value::Array(items) if items.is_empty() => "an empty array".to_owned(),
        Value::Array(items) => format!("an array of {}", count_of(items.len() as u64, "item")),
        Value::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// A value after "got": numbers and strings as written, containers summarised.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::Number(number) => number.to_string(),
        Value::String(text) => quoted(text),
        _ => described(value),
    }
}

/// An allowed value in a list: plain names bare, anything else as JSON, cut short.
pub(crate) fn listed(value: &Value) -> String {
    match value.as_str() {
        Some(text) if is_plain_name(text) => truncated(text, MAX_LISTED_BYTES),
        Some(text) => Value::from(truncated(text, MAX_LISTED_BYTES)).to_string(),
        None => truncated(&value.to_string(), MAX_LISTED_BYTES),
    }
}

fn is_plain_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || "_-.:/+@#".contains(c))
}

/// A name in backticks, or as a JSON string when backticks would not delimit it.
pub(crate) fn code(text: &str) -> String {
    if text.is_empty() || text.contains('`') || text.chars().any(char::is_control) {
        quoted(text)
    } else {
        format!("`{}`", truncated(text, MAX_QUOTED_BYTES))
    }
}

/// A string as JSON, cut short.
fn quoted(text: &str) -> String {
    Value::from(truncated(text, MAX_QUOTED_BYTES)).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn human_bytes_picks_the_largest_whole_unit() {
        assert_eq!(human_bytes(10), "10 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
    }

    #[test]
    fn code_lists_quote_each_name() {
        assert_eq!(code_list(&["a".into(), "b".into()]), "`a`, `b`");
        assert_eq!(code_list(&[]), "");
    }

    #[test]
    fn lists_read_as_sentences() {
        assert_eq!(join_or(&[]), "");
        assert_eq!(join_or(&["a".to_owned()]), "a");
        assert_eq!(join_or(&["a".to_owned(), "b".to_owned(), "c".to_owned()]), "a, b or c");
        assert_eq!(count_of(1, "entry"), "1 entry");
        assert_eq!(count_of(3, "entry"), "3 entries");
        assert_eq!(count_of(0, "item"), "0 items");
        assert_eq!((them(1), them(2)), ("it", "them"));
    }

    #[test]
    fn values_are_shown_with_what_they_are() {
        assert_eq!(described(&json!("5")), "the string \"5\"");
        assert_eq!(described(&json!([1, 2])), "an array of 2 items");
        assert_eq!(described(&json!({})), "an empty object");
        assert_eq!(shown(&json!(1.5)), "1.5");
        assert_eq!(shown(&json!([])), "an empty array");
        assert_eq!(subject(&json!("x")), "`x`");
        assert_eq!(subject(&json!(null)), "null");
    }

    #[test]
    fn names_are_quoted_when_backticks_would_not_delimit_them() {
        assert_eq!(code("name"), "`name`");
        assert_eq!(code(""), "\"\"");
        assert_eq!(code("a`b"), "\"a`b\"");
        assert_eq!(code("a\nb"), "\"a\\nb\"");
        assert_eq!(listed(&json!("plain-name")), "plain-name");
        assert_eq!(listed(&json!("two words")), "\"two words\"");
        assert_eq!(listed(&json!(true)), "true");
        assert!(listed(&json!("x".repeat(100))).len() <= MAX_LISTED_BYTES + 2);
    }
}
