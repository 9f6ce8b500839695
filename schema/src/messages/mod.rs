//! The sentences a model reads about each violation: "must be at least 1; got 0", "`expr` is
//! not a parameter; did you mean `expression`?", "expected an integer from 1 to 10, got the
//! string \"5\"". Which violation gets which sentence is the explainer's business.

mod accepted;

use std::fmt::Write as _;

use jsonschema::JsonType;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

pub(crate) use accepted::{accepted, summary};
use accepted::{format_words, null_last, type_words};

use crate::view::View;
use crate::words::{
    closest, code, count_of, described, join_or, listed, nearest, shown, subject, symbol_owner,
    symbol_owner_ignoring_case, them,
};

/// Enums this long are listed in full; longer ones show the values nearest the given one.
const MAX_LISTED_VALUES: usize = 12;
/// How many of a long enum's values are shown.
const NEAREST_SHOWN: usize = 5;
/// Declared property names listed after an unknown one.
const MAX_LISTED_NAMES: usize = 24;
/// Arrays longer than this are not searched for the duplicate a `uniqueItems` error is about.
const MAX_DUPLICATE_SEARCH: usize = 64;

/// For an invalid value whose errors explained nothing: it must never look valid.
pub(crate) fn unexplained_message() -> String {
    "does not fit the tool's parameters".to_owned()
}

/// A value that fits no alternative, when the explainer cannot say more (alternatives nested
/// too deep, or one that failed without an error).
pub(crate) fn no_allowed_form_message(given: Option<&Value>) -> String {
    match given {
        Some(given) => format!("does not have any of the allowed forms; got {}", described(given)),
        None => "does not have any of the allowed forms".to_owned(),
    }
}

/// A property name that breaks `propertyNames`, with why when the name's own violation says.
pub(crate) fn property_name_message(name: &Value, why: Option<&str>) -> String {
    match why {
        Some(why) => format!("the field name {} is not allowed: {why}", subject(name)),
        None => format!("the field name {} is not allowed", subject(name)),
    }
}

/// "`path` is missing: it is required (a string: The absolute path.)".
pub(crate) fn missing_message(name: &str, schema: Option<View<'_>>) -> String {
    match schema.and_then(summary) {
        Some(summary) => format!("{} is missing: it is required ({summary})", code(name)),
        None => format!("{} is missing: it is required", code(name)),
    }
}

/// An array with too few items that fit `contains` (described by `wanted`).
pub(crate) fn contains_message(wanted: Option<String>) -> String {
    match wanted {
        Some(wanted) => format!("must contain enough items that are {wanted}"),
        None => "must contain enough items of the required kind".to_owned(),
    }
}

/// "expected an integer from 1 to 10, got the string \"5\"".
pub(crate) fn expected_message(types: &[JsonType], schema: Option<View<'_>>, given: &Value) -> String {
    if types.is_empty() {
        return format!("has the wrong type; got {}", described(given));
    }
    let words: Vec<String> = null_last(types).map(|ty| type_words(ty, schema)).collect();
    format!("expected {}, got {}", join_or(&words), described(given))
}

/// "`lightyear` is not one of the allowed values; did you mean `light_year`? Allowed: …".
/// `also` are types other alternatives accept (typically null). `described` pairs allowed
/// values with their descriptions, where the schema documents them: a value given as the
/// symbol of one (`km` for `kilometer (km)`) is pointed to that one.
pub(crate) fn not_allowed_message(
    given: &Value,
    allowed: &[&Value],
    also: &[JsonType],
    described_values: &[(&str, &str)],
) -> String {
    let strings: Vec<&str> = allowed.iter().filter_map(|value| value.as_str()).collect();
    if allowed.is_empty() {
        return format!("no value is allowed here; got {}", described(given));
    }
    // A symbol given exactly (`kbit`) beats a name it happens to contain (`bit`); a symbol
    // in the wrong case (`KM`) only a name it is no misspelling of.
    let word = given.as_str();
    let exact_owner = word.and_then(|word| symbol_owner(word, described_values));
    let guess = match exact_owner {
        Some(_) => None,
        None => word.and_then(|word| closest(word, strings.iter().copied(), 1).first().copied()),
    };
    let owner = match guess {
        Some(_) => None,
        None => exact_owner.or_else(|| word.and_then(|word| symbol_owner_ignoring_case(word, described_values))),
    };
    let mut message = subject(given);
    if allowed.len() <= MAX_LISTED_VALUES {
        message.push_str(" is not one of the allowed values");
    } else {
        let _ = write!(message, " is not one of the {} allowed values", allowed.len());
    }
    match (guess, owner) {
        (Some(guess), _) => {
            let _ = write!(message, "; did you mean {}?", code(guess));
        }
        (None, Some(owner)) => {
            // The answer itself: a list of other values would only be noise.
            let _ = write!(message, "; it is the symbol of {0}: give {0} instead", code(owner));
            return message;
        }
        (None, None) => message.push('.'),
    }
    message.push(' ');
    message.push_str(&allowed_list(given, allowed, &strings, guess.is_some()));
    if !also.is_empty() {
        let words: Vec<String> = null_last(also).map(|ty| type_words(ty, None)).collect();
        let _ = write!(message, " (or {})", join_or(&words));
    }
    message
}

/// All the allowed values when there are few, else those nearest the given string when one
/// is close, else the first few in the tool's own order (which groups related values).
fn allowed_list(given: &Value, allowed: &[&Value], strings: &[&str], close: bool) -> String {
    if allowed.len() <= MAX_LISTED_VALUES {
        let shown: Vec<String> = allowed.iter().map(|value| listed(value)).collect();
        return format!("Allowed: {}", shown.join(", "));
    }
    match given.as_str() {
        Some(word) if close && !strings.is_empty() => {
            let nearest = nearest(word, strings.iter().copied(), NEAREST_SHOWN);
            let shown: Vec<String> = nearest.into_iter().map(|name| listed(&Value::from(name))).collect();
            format!("Closest: {}, …", shown.join(", "))
        }
        _ => {
            let shown: Vec<String> = allowed.iter().take(MAX_LISTED_VALUES).map(|value| listed(value)).collect();
            format!("The first of them: {}, … (the parameter's schema lists them all)", shown.join(", "))
        }
    }
}

/// "`expr` is not a parameter; did you mean `expression`? Parameters: expression, variables".
pub(crate) fn unknown_message(name: &str, declared: &[&str], top_level: bool) -> String {
    let (what, label) = if top_level { ("a parameter", "Parameters") } else { ("a field of this object", "Fields") };
    let mut message = format!("{} is not {what}", code(name));
    match closest(name, declared.iter().copied(), 1).first() {
        Some(guess) => {
            let _ = write!(message, "; did you mean {}?", code(guess));
        }
        None => message.push('.'),
    }
    if !declared.is_empty() {
        let listed: Vec<&str> = declared.iter().copied().take(MAX_LISTED_NAMES).collect();
        let more = if declared.len() > MAX_LISTED_NAMES { ", …" } else { "" };
        let _ = write!(message, " {label}: {}{more}", listed.join(", "));
    }
    message
}

/// Messages that need nothing but the error itself.
pub(crate) fn plain_message(kind: &ValidationErrorKind, given: &Value) -> String {
    match kind {
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}; got {}", shown(given)),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}; got {}", shown(given)),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("must be greater than {limit}; got {}", shown(given))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}; got {}", shown(given)),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("must be a multiple of {multiple_of}; got {}", shown(given))
        }
        ValidationErrorKind::MinLength { limit } => length_message("at least", *limit, given),
        ValidationErrorKind::MaxLength { limit } => length_message("at most", *limit, given),
        ValidationErrorKind::MinItems { limit } => size_message("at least", *limit, "item", given),
        ValidationErrorKind::MaxItems { limit } => size_message("at most", *limit, "item", given),
        ValidationErrorKind::AdditionalItems { limit } => size_message("at most", *limit as u64, "item", given),
        ValidationErrorKind::MinProperties { limit } => size_message("at least", *limit, "entry", given),
        ValidationErrorKind::MaxProperties { limit } => size_message("at most", *limit, "entry", given),
        ValidationErrorKind::Pattern { pattern } => {
            format!("must match the pattern {}; got {}", code(pattern), shown(given))
        }
        ValidationErrorKind::UniqueItems => unique_message(given),
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<&Value> = options.as_array().map(|options| options.iter().collect()).unwrap_or_default();
            not_allowed_message(given, &allowed, &[], &[])
        }
        ValidationErrorKind::Constant { expected_value } => constant_message(expected_value, given),
        ValidationErrorKind::Format { format } => format_message(format, given),
        _ => other_message(kind, given),
    }
}

/// The rare kinds: a sentence each, no schema jargon.
fn other_message(kind: &ValidationErrorKind, given: &Value) -> String {
    match kind {
        ValidationErrorKind::UnevaluatedItems { unexpected } => {
            format!(
                "has {} not allowed here; remove {}",
                count_of(unexpected.len() as u64, "item"),
                them(unexpected.len())
            )
        }
        ValidationErrorKind::FalseSchema | ValidationErrorKind::Not { .. } => {
            format!("this value is not allowed here; got {}", described(given))
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "fits more than one of the allowed forms, so its meaning is ambiguous; it must fit exactly one".to_owned()
        }
        ValidationErrorKind::ContentEncoding { content_encoding } => {
            format!("must be {} encoded text", code(content_encoding))
        }
        ValidationErrorKind::ContentMediaType { content_media_type } => {
            format!("must be text in the {} media type", code(content_media_type))
        }
        ValidationErrorKind::FromUtf8 { .. } => "must decode to valid UTF-8 text".to_owned(),
        ValidationErrorKind::BacktrackLimitExceeded { .. } | ValidationErrorKind::RegexEngineFailure { .. } => {
            "could not be checked against its pattern (the check gave up); try a shorter or simpler value".to_owned()
        }
        ValidationErrorKind::Custom { message, .. } => message.clone(),
        ValidationErrorKind::Referencing(_) => {
            "could not be checked: the tool's parameters schema has a broken reference (a bug in the tool)".to_owned()
        }
        _ => format!("is not allowed here; got {}", described(given)),
    }
}

fn length_message(bound: &str, limit: u64, given: &Value) -> String {
    let got = given.as_str().map(|text| text.chars().count() as u64);
    match got {
        Some(0) if limit == 1 && bound == "at least" => "must not be empty".to_owned(),
        Some(got) => {
            format!("must be {bound} {} long; got {}", count_of(limit, "character"), count_of(got, "character"))
        }
        None => format!("must be {bound} {} long", count_of(limit, "character")),
    }
}

fn size_message(bound: &str, limit: u64, unit: &str, given: &Value) -> String {
    let got = match given {
        Value::Array(items) => Some(items.len() as u64),
        Value::Object(map) => Some(map.len() as u64),
        _ => None,
    };
    match got {
        Some(got) => format!("must have {bound} {}; got {got}", count_of(limit, unit)),
        None => format!("must have {bound} {}", count_of(limit, unit)),
    }
}

/// Names the first pair of equal items when the array is small enough to search.
fn unique_message(given: &Value) -> String {
    let items = given.as_array().map(Vec::as_slice).unwrap_or_default();
    let searched = &items[..items.len().min(MAX_DUPLICATE_SEARCH)];
    let pair = searched.iter().enumerate().find_map(|(i, item)| {
        let later = searched.iter().enumerate().skip(i + 1).find(|(_, other)| *other == item);
        later.map(|(j, _)| (i, j))
    });
    match pair {
        Some((i, j)) => format!("items must be unique, but items {i} and {j} are equal"),
        None => "items must be unique; remove the duplicates".to_owned(),
    }
}

fn constant_message(expected: &Value, given: &Value) -> String {
    format!("must be exactly {}; got {}", listed(expected), shown(given))
}

fn format_message(format: &str, given: &Value) -> String {
    match format_words(format) {
        Some(words) => format!("must be {words}; got {}", shown(given)),
        None => format!("is not in the expected {} form; got {}", code(format), shown(given)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn formats_are_words() {
        assert_eq!(format_message("date", &json!("10/03/2024")), "must be a date like 2024-03-10; got \"10/03/2024\"");
        assert_eq!(format_message("uint8", &json!(300)), "must be an integer from 0 to 255; got 300");
        assert_eq!(format_message("uint64", &json!(-1)), "must be a non-negative integer; got -1");
        assert_eq!(format_message("double", &json!("x")), "must be a number; got \"x\"");
        assert_eq!(format_message("color", &json!("x")), "is not in the expected `color` form; got \"x\"");
    }

    #[test]
    fn sizes_and_lengths_of_other_types_leave_the_count_out() {
        assert_eq!(length_message("at most", 3, &json!(5)), "must be at most 3 characters long");
        assert_eq!(size_message("at least", 1, "entry", &json!("x")), "must have at least 1 entry");
        assert_eq!(unique_message(&json!([1, 2])), "items must be unique; remove the duplicates");
    }

    #[test]
    fn an_empty_enum_allows_nothing() {
        assert_eq!(not_allowed_message(&json!(1), &[], &[], &[]), "no value is allowed here; got the number 1");
    }
}
