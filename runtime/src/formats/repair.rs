//! Arguments a model sent against a strict definition, put back into the tool's own shape.
//!
//! Each repair applies only where the tool's schema would refuse what the strict schema made
//! the model send, so it can never turn acceptable arguments into something else:
//! - `null` for an optional property that does not take `null` means "not given";
//! - a list of `{"key", "value"}` entries where the schema takes a map is that map;
//! - a string where the schema takes any JSON value is that value's JSON text.

use serde_json::{Map, Value};

use super::Format;
use super::schema::Dialect;

/// `arguments` (a call's arguments object) as the tool takes them, given that the model saw
/// the tool's `parameters` schema in `format`. Unchanged for formats that keep the schema.
pub fn repair(format: Format, parameters: &Value, arguments: Value) -> Value {
    let Some(dialect) = format.dialect() else { return arguments };
    let defs = parameters.get("$defs").and_then(Value::as_object);
    Repair { dialect, defs }.value(parameters, arguments, 0)
}

struct Repair<'a> {
    dialect: &'a Dialect,
    defs: Option<&'a Map<String, Value>>,
}

/// Past this depth (of schema references and nesting), values are left as they are: the
/// runtime's validator has its own depth limit and reports it.
const MAX_DEPTH: usize = 64;

impl Repair<'_> {
    /// The schema a `$ref` or a one-schema `allOf` stands for.
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        for _ in 0..MAX_DEPTH {
            if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"))
                && let Some(def) = self.defs.and_then(|defs| defs.get(name))
            {
                schema = def;
            } else if let Some(Value::Array(parts)) = schema.get("allOf")
                && let [part] = parts.as_slice()
            {
                schema = part;
            } else {
                break;
            }
        }
        schema
    }

    fn value(&self, schema: &Value, value: Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return value;
        }
        let schema = self.resolve(schema);
        if let Some(variants) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
            return match variants.iter().find(|variant| shape_fits(self.resolve(variant), &value)) {
                Some(variant) => self.value(variant, value, depth + 1),
                None => value,
            };
        }
        if is_any(schema) {
            return match value {
                Value::String(text) if self.dialect.any_as_json_text => {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
                other => other,
            };
        }
        match value {
            Value::Array(items) if takes(schema, "object") && !takes(schema, "array") && is_map(schema) => {
                self.map_from_entries(schema, items, depth)
            }
            Value::Array(items) => match schema.get("items") {
                Some(item_schema) => {
                    Value::Array(items.into_iter().map(|item| self.value(item_schema, item, depth + 1)).collect())
                }
                None => Value::Array(items),
            },
            Value::Object(object) => Value::Object(self.object(schema, object, depth)),
            other => other,
        }
    }

    fn object(&self, schema: &Value, object: Map<String, Value>, depth: usize) -> Map<String, Value> {
        let properties = schema.get("properties").and_then(Value::as_object);
        let required = |name: &str| {
            schema.get("required").and_then(Value::as_array).is_some_and(|names| names.iter().any(|n| n == name))
        };
        let mut repaired = Map::new();
        for (name, value) in object {
            let property = properties.and_then(|properties| properties.get(&name));
            match property {
                Some(property) => {
                    let property = self.resolve(property);
                    let not_given = self.dialect.all_required
                        && value.is_null()
                        && !required(&name)
                        && (!accepts_null(property) || is_any(property));
                    if !not_given {
                        repaired.insert(name, self.value(property, value, depth + 1));
                    }
                }
                None => match schema.get("additionalProperties").filter(|values| values.is_object()) {
                    Some(values) => {
                        repaired.insert(name, self.value(values, value, depth + 1));
                    }
                    None => {
                        repaired.insert(name, value);
                    }
                },
            }
        }
        repaired
    }

    /// `[{"key": k, "value": v}, ...]` as `{k: v, ...}`; left as it is when it is not a list
    /// of such entries with distinct keys, for the runtime to report.
    fn map_from_entries(&self, schema: &Value, items: Vec<Value>, depth: usize) -> Value {
        let values =
            schema.get("additionalProperties").filter(|values| values.is_object()).cloned().unwrap_or_default();
        let mut map = Map::new();
        for item in &items {
            let entry = item.as_object().filter(|entry| entry.len() == 2);
            let Some((Some(key), Some(value))) =
                entry.map(|entry| (entry.get("key").and_then(Value::as_str), entry.get("value")))
            else {
                return Value::Array(items);
            };
            if map.contains_key(key) {
                return Value::Array(items);
            }
            map.insert(key.to_owned(), self.value(&values, value.clone(), depth + 1));
        }
        Value::Object(map)
    }
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn takes(schema: &Value, type_name: &str) -> bool {
    types(schema).contains(&type_name)
}

/// Whether the schema takes any JSON value (no type, constant or union).
fn is_any(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(schema) => ["type", "enum", "const", "oneOf", "anyOf", "$ref", "allOf", "not"]
            .iter()
            .all(|keyword| !schema.contains_key(*keyword)),
        _ => false,
    }
}

/// An object whose keys are not fixed: values under `additionalProperties`, or no properties.
fn is_map(schema: &Value) -> bool {
    let has_properties = schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
    !has_properties && !matches!(schema.get("additionalProperties"), Some(Value::Bool(false)))
}

fn accepts_null(schema: &Value) -> bool {
    takes(schema, "null")
        || schema.get("const") == Some(&Value::Null)
        || schema.get("enum").and_then(Value::as_array).is_some_and(|values| values.contains(&Value::Null))
        || schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
            .is_some_and(|variants| variants.iter().any(accepts_null))
}

/// Whether `value` has the JSON type a union's branch takes (to pick the branch to repair by).
fn shape_fits(schema: &Value, value: &Value) -> bool {
    let types = types(schema);
    if types.is_empty() {
        return true;
    }
    let name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) if types.contains(&"object") && is_map(schema) => "object",
        Value::Array(_) => "array",
        Value::Object(object) => {
            let required = schema.get("required").and_then(Value::as_array);
            let has_required = required
                .is_none_or(|names| names.iter().filter_map(Value::as_str).all(|name| object.contains_key(name)));
            if !has_required {
                return false;
            }
            "object"
        }
    };
    types.contains(&name) || (name == "integer" && types.contains(&"number"))
}
