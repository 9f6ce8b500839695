//! A parameters schema as `toolcell schema` prints it for people: one line per property with
//! its type, enum values and description, and the fields of nested objects indented below.

use serde_json::Value;
use toolcell_schema::formats;
use toolcell_schema::words::count_of;

/// Fields shown per nested object before the rest are summed up.
const MAX_FIELDS: usize = 8;
/// How deep nested objects are opened; deeper ones show their type only.
const MAX_DEPTH: usize = 3;

/// The lines describing the properties of `root`, a tool's parameters schema.
pub fn property_lines(root: &Value) -> Vec<String> {
    let lines = object_lines(root, root, 1);
    if lines.is_empty() { vec!["  (none)".to_owned()] } else { lines }
}

/// The top-level properties of `root` that have no description, for `check` to warn about:
/// a model sees only their names and types.
pub fn undocumented(root: &Value) -> Vec<&str> {
    let Some(properties) = root["properties"].as_object() else { return Vec::new() };
    properties
        .iter()
        .filter(|(_, schema)| !has_description(schema) && !has_description(resolve(root, schema)))
        .map(|(name, _)| name.as_str())
        .collect()
}

fn has_description(schema: &Value) -> bool {
    schema["description"].as_str().is_some_and(|text| !text.trim().is_empty())
}

fn object_lines(root: &Value, object: &Value, depth: usize) -> Vec<String> {
    let Some(properties) = object["properties"].as_object() else { return Vec::new() };
    let required: Vec<&str> =
        object["required"].as_array().map(|names| names.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let indent = "  ".repeat(depth);
    // The tool's own parameters are all shown; nested objects are cut.
    let shown = if depth == 1 { usize::MAX } else { MAX_FIELDS };
    let mut lines = Vec::new();
    for (name, schema) in properties.iter().take(shown) {
        let kind = if required.contains(&name.as_str()) { "required" } else { "optional" };
        let description = schema["description"]
            .as_str()
            .or_else(|| resolve(root, schema)["description"].as_str())
            .map(|text| format!(": {}", text.lines().next().unwrap_or_default()))
            .unwrap_or_default();
        lines.push(format!("{indent}{name} ({}, {kind}){description}", type_summary(root, schema)));
        if depth < MAX_DEPTH
            && let Some(nested) = object_schema(root, schema, 0)
        {
            lines.extend(object_lines(root, nested, depth + 1));
        }
    }
    if properties.len() > shown {
        lines.push(format!("{indent}… and {} more (see --json)", properties.len() - shown));
    }
    lines
}

/// The object schema a property holds, through `$ref`, `Option` (`anyOf` with null) and
/// arrays of objects.
fn object_schema<'a>(root: &'a Value, schema: &'a Value, hops: usize) -> Option<&'a Value> {
    // A bound on reference chains, so a schema that refers to itself cannot loop.
    if hops > 8 {
        return None;
    }
    let schema = resolve(root, schema);
    if schema["properties"].is_object() {
        return Some(schema);
    }
    if schema.get("items").is_some() {
        return object_schema(root, &schema["items"], hops + 1);
    }
    let variants = schema["anyOf"].as_array().or_else(|| schema["oneOf"].as_array())?;
    variants.iter().find_map(|variant| object_schema(root, variant, hops + 1))
}

/// The schema `$ref` points to within `root` (`#/$defs/Name`), or `schema` itself.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema["$ref"]
        .as_str()
        .and_then(|reference| reference.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .unwrap_or(schema)
}

/// `string`, `integer`, `array of string`, `one of: "a", "b"`, `Options` (a named object).
pub fn type_summary(root: &Value, schema: &Value) -> String {
    let named = schema["$ref"].as_str().map(|reference| reference.rsplit('/').next().unwrap_or(reference));
    let schema = resolve(root, schema);
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of: {}", values.join(", "));
    }
    let variants = schema["oneOf"].as_array().or_else(|| schema["anyOf"].as_array());
    if let Some(variants) = variants
        && variants.iter().all(|variant| variant.get("const").is_some())
    {
        let values: Vec<String> = variants.iter().map(|variant| variant["const"].to_string()).collect();
        return format!("one of: {}", values.join(", "));
    }
    if let Some(name) = named {
        return name.to_owned();
    }
    if let Some(variants) = variants {
        return variants.iter().map(|variant| type_summary(root, variant)).collect::<Vec<_>>().join(" or ");
    }
    let kind = match &schema["type"] {
        Value::String(kind) if kind == "array" => format!("array of {}", type_summary(root, &schema["items"])),
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ => "any".to_owned(),
    };
    match bounds(schema) {
        Some(bounds) => format!("{kind}, {bounds}"),
        None => kind,
    }
}

/// A schema's bounds and format in words: `1 to 100 characters`, `at most 20 items`, `from 1
/// to 10`, `a date-time like 2024-03-10T08:30:00Z`.
fn bounds(schema: &Value) -> Option<String> {
    let number = |key: &str| schema.get(key).filter(|value| value.is_number()).map(Value::to_string);
    let count = |key: &str| schema.get(key).and_then(Value::as_u64);
    let counted = |low: Option<u64>, high: Option<u64>, unit: &str| match (low, high) {
        (Some(low), Some(high)) if low == high => Some(count_of(low, unit)),
        (Some(low), Some(high)) => Some(format!("{low} to {}", count_of(high, unit))),
        (Some(low), None) if low > 0 => Some(format!("at least {}", count_of(low, unit))),
        (None, Some(high)) => Some(format!("at most {}", count_of(high, unit))),
        _ => None,
    };
    let mut words = Vec::new();
    words.extend(counted(count("minLength"), count("maxLength"), "character"));
    words.extend(counted(count("minItems"), count("maxItems"), "item"));
    words.extend(match (number("minimum"), number("maximum")) {
        (Some(low), Some(high)) => Some(format!("from {low} to {high}")),
        (Some(low), None) => Some(format!("at least {low}")),
        (None, Some(high)) => Some(format!("at most {high}")),
        (None, None) => None,
    });
    words.extend(number("exclusiveMinimum").map(|low| format!("greater than {low}")));
    words.extend(number("exclusiveMaximum").map(|high| format!("less than {high}")));
    words.extend(schema["format"].as_str().and_then(formats::words).map(str::to_owned));
    (!words.is_empty()).then(|| words.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_objects_show_their_fields_and_enums_their_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text.\nMore."},
                "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
                "options": {"$ref": "#/$defs/Options", "description": "How to count."},
                "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
            },
            "required": ["text"],
            "$defs": {
                "Unit": {"type": "string", "enum": ["words", "lines"], "description": "What to count."},
                "Options": {
                    "type": "object",
                    "properties": {"case": {"type": "boolean"}, "unit": {"$ref": "#/$defs/Unit"}},
                    "required": ["case"],
                },
                "Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
            },
        });
        assert_eq!(
            property_lines(&schema),
            [
                "  options (Options, optional): How to count.",
                "    case (boolean, required)",
                "    unit (one of: \"words\", \"lines\", optional): What to count.",
                "  points (array of Point, optional)",
                "    x (number, required)",
                "  text (string, required): The text.",
                "  unit (one of: \"words\", \"lines\" or null, optional)",
            ]
        );
    }

    #[test]
    fn long_objects_are_cut_and_self_references_end() {
        let fields: serde_json::Map<String, Value> =
            (0..10).map(|i| (format!("f{i}"), json!({"type": "integer"}))).collect();
        let schema = json!({
            "type": "object",
            "properties": {"wide": {"type": "object", "properties": fields}, "tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}}},
        });
        let lines = property_lines(&schema);
        assert!(lines.contains(&"    … and 2 more (see --json)".to_owned()), "{lines:#?}");
        assert_eq!(lines.iter().filter(|line| line.contains("child")).count(), 2, "{lines:#?}");
        assert_eq!(property_lines(&json!({"type": "object"})), ["  (none)"]);
    }

    #[test]
    fn undocumented_properties_are_found_through_references() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "Documented."},
                "b": {"type": "string"},
                "c": {"$ref": "#/$defs/C"},
                "d": {"type": "string", "description": " "},
            },
            "$defs": {"C": {"type": "string", "description": "Documented on its type."}},
        });
        assert_eq!(undocumented(&schema), ["b", "d"]);
    }
}
