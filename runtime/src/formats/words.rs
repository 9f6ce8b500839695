//! Schema keywords in words, for formats that cannot carry them: the model still reads the
//! rule in the property's description, and the runtime still enforces it.

use serde_json::{Map, Value};
use toolcell_schema::formats;
use toolcell_schema::words::count_of;

/// The keywords of `moved` (taken out of `schema`) in sentences; keywords that constrain
/// nothing a model needs to know (annotations, `format`s the runtime does not check) say
/// nothing.
pub(crate) fn describe(moved: &Map<String, Value>, schema: &Map<String, Value>) -> Vec<String> {
    let mut sentences = Vec::new();
    for (low, high, unit) in RANGES {
        let (low, high) = (moved.get(*low), moved.get(*high));
        let sentence = match (low, high) {
            (Some(low), Some(high)) if unit.is_empty() => format!("From {low} to {high}."),
            (Some(low), Some(high)) => format!("{low} to {high} {unit}s."),
            (Some(low), None) => format!("At least {}.", counted(low, unit)),
            (None, Some(high)) => format!("At most {}.", counted(high, unit)),
            (None, None) => continue,
        };
        sentences.push(sentence);
    }
    for (keyword, value) in moved {
        if RANGES.iter().any(|(low, high, _)| keyword == low || keyword == high) {
            continue;
        }
        sentences.extend(sentence(keyword, value, schema));
    }
    sentences
}

/// Bounds that read as one range, and what they count.
const RANGES: &[(&str, &str, &str)] = &[
    ("minLength", "maxLength", "character"),
    ("minimum", "maximum", ""),
    ("minItems", "maxItems", "item"),
    ("minProperties", "maxProperties", "entry"),
];

/// `1 character`, `3 characters`, or the bare number.
fn counted(value: &Value, unit: &str) -> String {
    match (value.as_u64(), unit) {
        (_, "") => value.to_string(),
        (Some(count), unit) => count_of(count, unit),
        (None, "entry") => format!("{value} entries"),
        (None, unit) => format!("{value} {unit}s"),
    }
}

fn sentence(keyword: &str, value: &Value, schema: &Map<String, Value>) -> Option<String> {
    let sentence = match keyword {
        "pattern" => format!("Must match the regular expression `{}`.", value.as_str()?),
        "format" => format!("Format: {}.", value.as_str().filter(|format| formats::is_standard(format))?),
        "exclusiveMinimum" => format!("Greater than {value}."),
        "exclusiveMaximum" => format!("Less than {value}."),
        "multipleOf" => format!("A multiple of {value}."),
        "uniqueItems" if value == &Value::Bool(true) => "No item may appear twice.".to_owned(),
        "default" if !value.is_null() && !mentions_default(schema) => format!("Default: {value}."),
        "examples" => format!("For example: {}.", examples(value)?),
        _ => return None,
    };
    Some(sentence)
}

/// Whether the description already states the default (the standard tools' do, in words).
fn mentions_default(schema: &Map<String, Value>) -> bool {
    schema.get("description").and_then(Value::as_str).is_some_and(|text| text.contains("Default"))
}

fn examples(value: &Value) -> Option<String> {
    let examples: Vec<String> = value.as_array()?.iter().take(3).map(Value::to_string).collect();
    (!examples.is_empty()).then(|| examples.join(", "))
}

/// "One of: `a`: ...; `b`: ...." for a choice of constants (`oneOf` variants with `const`),
/// from the descriptions of its string constants; `None` when none has one.
pub(crate) fn choices(variants: &[Value]) -> Option<String> {
    let choices: Vec<String> = variants
        .iter()
        .filter_map(|variant| {
            let description = variant.get("description")?.as_str()?.trim_end();
            // One full stop goes (the list has its own punctuation); an ellipsis stays.
            let description = match description.strip_suffix('.') {
                Some(stripped) if !stripped.ends_with('.') => stripped,
                _ => description,
            };
            Some(format!("`{}`: {description}", variant.get("const")?.as_str()?))
        })
        .collect();
    (!choices.is_empty()).then(|| format!("One of: {}.", choices.join("; ")))
}

/// `description` with `sentences` appended.
pub(crate) fn append(description: Option<&Value>, sentences: &[String]) -> Option<Value> {
    let mut text = description.and_then(Value::as_str).unwrap_or_default().trim_end().to_owned();
    for sentence in sentences {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(sentence);
    }
    (!text.is_empty()).then_some(Value::String(text))
}
