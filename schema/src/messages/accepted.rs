//! What a schema accepts, in words: "an integer from 1 to 10", "a non-empty string of at
//! most 20 characters", "one of: quiet, loud". Said when a value has the wrong type and when
//! a required property is missing.

use std::fmt::Write as _;

use jsonschema::JsonType;
use serde_json::Value;

use super::{MAX_LISTED_VALUES, NEAREST_SHOWN};
use crate::formats;
use crate::view::View;
use crate::words::{code, count_of, join_or, listed, plural, truncated};

/// How deep a missing property's schema is described (`anyOf` of `anyOf` …).
const MAX_DESCRIBE_DEPTH: usize = 4;
/// A property description quoted with a missing property is cut to this many bytes.
const MAX_DESCRIPTION_BYTES: usize = 150;

/// "a string: The text to search." for a property, from its type and description.
pub(crate) fn summary(schema: View<'_>) -> Option<String> {
    let words = accepted(schema, 0);
    // A blank description says nothing: no "(a string: )".
    let description = schema.text("description").map(first_sentence).filter(|sentence| !sentence.is_empty());
    match (words, description) {
        (Some(words), Some(description)) => Some(format!("{words}: {description}")),
        (words, description) => words.or(description),
    }
}

/// What the schema accepts, in words: "an integer from 1 to 10", "one of: a, b".
pub(crate) fn accepted(schema: View<'_>, depth: usize) -> Option<String> {
    if depth > MAX_DESCRIBE_DEPTH {
        return None;
    }
    if let Some(constant) = schema.get("const") {
        return Some(format!("exactly {}", listed(constant)));
    }
    if let Some(values) = schema.enum_values() {
        return Some(one_of_words(&values));
    }
    if let Some(alternatives) = schema.alternatives() {
        let mut words: Vec<String> = Vec::new();
        for word in alternatives.filter_map(|alternative| accepted(alternative, depth + 1)) {
            if !words.contains(&word) {
                words.push(word);
            }
        }
        return (!words.is_empty()).then(|| join_or(&words));
    }
    let words: Vec<String> = null_last(&schema.types()).map(|ty| type_words(ty, Some(schema))).collect();
    (!words.is_empty()).then(|| join_or(&words))
}

/// Types in their order, except null last: "a string or null" reads as an option.
pub(crate) fn null_last(types: &[JsonType]) -> impl Iterator<Item = JsonType> {
    let (null, others): (Vec<JsonType>, Vec<JsonType>) = types.iter().partition(|ty| **ty == JsonType::Null);
    others.into_iter().chain(null)
}

/// One type in words, with the limits the schema puts on it.
pub(crate) fn type_words(ty: JsonType, schema: Option<View<'_>>) -> String {
    match ty {
        JsonType::Integer => number_words("an integer", schema, true),
        JsonType::Number => number_words("a number", schema, false),
        JsonType::String => string_words(schema),
        JsonType::Array => array_words(schema),
        JsonType::Object => "an object".to_owned(),
        JsonType::Boolean => "a boolean (true or false)".to_owned(),
        JsonType::Null => "null".to_owned(),
    }
}

/// What a value of `format` is, in words: a standard format's words, the range of an
/// integer format (`uint8`: "an integer from 0 to 255"), or "a number" for a float format.
/// `None` for a format of the tool's own.
pub(crate) fn format_words(format: &str) -> Option<String> {
    if let Some(words) = formats::words(format) {
        return Some(words.to_owned());
    }
    match formats::integer_range(format) {
        (None, None) if formats::is_float(format) => Some("a number".to_owned()),
        (None, None) => None,
        _ => Some(Bounds::of_format(format).words("an integer", true)),
    }
}

/// "an integer from 1 to 10", "a non-negative integer", "a number (greater than 0)". An
/// integer `format` (schemars' `uint32` …) supplies the bounds the schema leaves out.
fn number_words(noun: &str, schema: Option<View<'_>>, integer: bool) -> String {
    let format = schema.and_then(|schema| schema.text("format")).filter(|_| integer);
    let implied = format.map(Bounds::of_format).unwrap_or_default();
    let bound = |keyword: &str| schema.and_then(|schema| schema.number(keyword)).map(Value::to_string);
    let bounds = Bounds {
        low: bound("minimum").or(implied.low),
        high: bound("maximum").or(implied.high),
        low_exclusive: bound("exclusiveMinimum"),
        high_exclusive: bound("exclusiveMaximum"),
    };
    bounds.words(noun, integer)
}

/// The limits on a number, as written in the schema.
#[derive(Debug, Default)]
struct Bounds {
    low: Option<String>,
    high: Option<String>,
    low_exclusive: Option<String>,
    high_exclusive: Option<String>,
}

impl Bounds {
    /// The limits of an integer `format`, such as schemars' `uint8`.
    fn of_format(format: &str) -> Self {
        let (low, high) = formats::integer_range(format);
        Self { low: low.map(|low| low.to_string()), high: high.map(|high| high.to_string()), ..Self::default() }
    }

    fn words(self, noun: &str, integer: bool) -> String {
        match (self.low, self.high, self.low_exclusive, self.high_exclusive) {
            (Some(low), Some(high), None, None) => format!("{noun} from {low} to {high}"),
            (Some(low), None, None, None) if integer && low == "0" => "a non-negative integer".to_owned(),
            (low, high, low_exclusive, high_exclusive) => {
                let parts: Vec<String> = [
                    low.map(|low| format!("at least {low}")),
                    low_exclusive.map(|low| format!("greater than {low}")),
                    high.map(|high| format!("at most {high}")),
                    high_exclusive.map(|high| format!("less than {high}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                if parts.is_empty() { noun.to_owned() } else { format!("{noun} ({})", parts.join(" and ")) }
            }
        }
    }
}

/// "a non-empty string of at most 4096 characters", "a string: a date like 2024-03-10".
fn string_words(schema: Option<View<'_>>) -> String {
    let Some(schema) = schema else { return "a string".to_owned() };
    if let Some(words) = schema.text("format").and_then(formats::words) {
        return format!("a string: {words}");
    }
    let (min, max) = (schema.count("minLength").filter(|min| *min > 0), schema.count("maxLength"));
    let mut words = match (min, max) {
        (Some(1), Some(max)) => format!("a non-empty string of at most {}", count_of(max, "character")),
        (Some(1), None) => "a non-empty string".to_owned(),
        (Some(min), Some(max)) => format!("a string of {min} to {max} characters"),
        (Some(min), None) => format!("a string of at least {}", count_of(min, "character")),
        (None, Some(max)) => format!("a string of at most {}", count_of(max, "character")),
        (None, None) => "a string".to_owned(),
    };
    if let Some(pattern) = schema.text("pattern") {
        let _ = write!(words, " matching {}", code(pattern));
    }
    words
}

/// "an array of strings" when the items have one type.
fn array_words(schema: Option<View<'_>>) -> String {
    let items = schema.and_then(|schema| schema.child("items")).map(View::types).unwrap_or_default();
    match items.as_slice() {
        [single] => format!("an array of {}", plural(*single)),
        _ => "an array".to_owned(),
    }
}

/// "one of: a, b, c", or a few of a long list.
fn one_of_words(values: &[&Value]) -> String {
    let shown: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|value| listed(value)).collect();
    if values.len() <= MAX_LISTED_VALUES {
        format!("one of: {}", shown.join(", "))
    } else {
        let few: Vec<&str> = shown.iter().take(NEAREST_SHOWN).map(String::as_str).collect();
        format!("one of {} values such as {}", values.len(), few.join(", "))
    }
}

/// The first sentence of a description if it is short, else its start.
fn first_sentence(description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat.match_indices(". ").map(|(at, _)| at + 1).find(|&at| {
        let next_is_capital = flat[at..].trim_start().starts_with(|c: char| c.is_uppercase());
        next_is_capital && !flat[..at].ends_with("e.g.") && !flat[..at].ends_with("i.e.")
    });
    match end {
        Some(end) if end <= MAX_DESCRIPTION_BYTES => flat[..end].to_owned(),
        _ => truncated(&flat, MAX_DESCRIPTION_BYTES),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn accepted_by(schema: &Value) -> Option<String> {
        accepted(View::new(schema, schema), 0)
    }

    #[test]
    fn sentences_end_at_a_capital() {
        assert_eq!(first_sentence("Read it. Then go."), "Read it.");
        assert_eq!(first_sentence("Use e.g. This. Then"), "Use e.g. This.");
        assert_eq!(first_sentence("One\n  line"), "One line");
        assert!(first_sentence(&"a".repeat(200)).len() <= MAX_DESCRIPTION_BYTES);
    }

    #[test]
    fn reference_cycles_say_nothing() {
        let root = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        assert_eq!(accepted(View::new(&root, &root["$defs"]["A"]), 0), None);
    }

    #[test]
    fn schemas_are_described_by_what_they_accept() {
        assert_eq!(accepted_by(&json!({"const": "a b"})).as_deref(), Some("exactly \"a b\""));
        assert_eq!(accepted_by(&json!({"enum": ["x", 1]})).as_deref(), Some("one of: x, 1"));
        let many: Vec<u32> = (0..13).collect();
        assert_eq!(accepted_by(&json!({"enum": many})).as_deref(), Some("one of 13 values such as 0, 1, 2, 3, 4"));
        let alternatives = json!({"anyOf": [{"type": "integer"}, {"type": "integer"}, {"type": "null"}]});
        assert_eq!(accepted_by(&alternatives).as_deref(), Some("an integer or null"));
        assert_eq!(
            accepted_by(&json!({"type": ["null", "number"], "exclusiveMinimum": 0})).as_deref(),
            Some("a number (greater than 0) or null")
        );
        assert_eq!(accepted_by(&json!({"description": "No type."})), None);
        let described = json!({"type": "string", "format": "email", "description": "Who. More."});
        assert_eq!(summary(View::new(&described, &described)).as_deref(), Some("a string: an email address: Who."));
        let blank = json!({"type": "string", "description": " \n"});
        assert_eq!(summary(View::new(&blank, &blank)).as_deref(), Some("a string"));
        let nothing = json!({"description": ""});
        assert_eq!(summary(View::new(&nothing, &nothing)), None);
    }

    #[test]
    fn strings_are_described_by_their_limits() {
        let words = |schema: Value| string_words(Some(View::new(&schema, &schema)));
        assert_eq!(words(json!({"minLength": 1, "maxLength": 1})), "a non-empty string of at most 1 character");
        assert_eq!(words(json!({"minLength": 2, "maxLength": 4})), "a string of 2 to 4 characters");
        assert_eq!(words(json!({"minLength": 2})), "a string of at least 2 characters");
        assert_eq!(
            words(json!({"minLength": 0, "maxLength": 3, "pattern": "^a"})),
            "a string of at most 3 characters matching `^a`"
        );
        assert_eq!(words(json!({"format": "uuid", "minLength": 1})), "a string: a UUID");
        assert_eq!(words(json!({"format": "uint8"})), "a string");
    }

    #[test]
    fn formats_are_words() {
        assert_eq!(format_words("date").as_deref(), Some("a date like 2024-03-10"));
        assert_eq!(format_words("uint8").as_deref(), Some("an integer from 0 to 255"));
        assert_eq!(format_words("uint64").as_deref(), Some("a non-negative integer"));
        assert_eq!(format_words("int8").as_deref(), Some("an integer from -128 to 127"));
        assert_eq!(format_words("double").as_deref(), Some("a number"));
        assert_eq!(format_words("color"), None);
    }
}
