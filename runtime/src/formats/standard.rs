//! A tool's schemas as every MCP client takes them ([`super::Format::Mcp`]): JSON Schema with
//! nothing a client's validator warns about or a strict-mode converter leaves behind.
//!
//! - A `format` JSON Schema does not define (schemars' `uint64`, `int32`, `double`, ...) is
//!   dropped: TypeScript clients' Ajv prints `unknown format "uint64" ignored` for each one on
//!   every `tools/list`. The range an integer format stands for stays, as `minimum` and
//!   `maximum` (schemars writes `minimum: 0` beside `uint64` already).
//! - A `$ref` to a choice of constants (a `oneOf`/`anyOf` of `const`s, as schemars writes a Rust
//!   enum) is written out as an `enum`, each constant's description joining the description in
//!   words, as the strict formats do. Clients that make a tool strict themselves (the OpenAI
//!   Agents SDK) cannot convert a `$ref` they do not write out.
//!
//! Everything else is kept as it is. The runtime still validates against the tool's own
//! schema, which accepts the same arguments.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use toolcell_schema::formats;

use super::schema::json_type;
use super::words;

/// `schema` (a tool's parameters or output schema) with only standard `format`s and its
/// choices of constants as `enum`s.
pub(crate) fn schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let choices = constant_choices(&schema);
    rewrite(&mut schema, &choices, 0);
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object).cloned() {
        let unused: Vec<&String> =
            defs.keys().filter(|name| choices.contains_key(*name) && !refers_to(&schema, name)).collect();
        if let Some(kept) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
            for name in unused {
                kept.remove(name);
            }
        }
        if schema.get("$defs").and_then(Value::as_object).is_some_and(Map::is_empty)
            && let Some(schema) = schema.as_object_mut()
        {
            schema.remove("$defs");
        }
    }
    schema
}

/// A definition that is a choice of constants, as an `enum`.
struct Choice {
    /// The definition without its union and description, with `enum` (and `type`).
    schema: Map<String, Value>,
    /// The definition's description.
    description: Option<Value>,
    /// "One of: `a`: ...; `b`: ...", when the constants have descriptions.
    sentence: Option<String>,
}

impl Choice {
    /// The schema a `$ref` to this definition with `siblings` (its description, ...) becomes.
    fn at(&self, mut siblings: Map<String, Value>) -> Map<String, Value> {
        let mut out = self.schema.clone();
        let description = siblings.remove("description").or_else(|| self.description.clone());
        out.extend(siblings);
        let sentences: Vec<String> = self.sentence.iter().cloned().collect();
        if let Some(description) = words::append(description.as_ref(), &sentences) {
            out.insert("description".into(), description);
        }
        out
    }
}

/// The definitions under `$defs` that are a `oneOf` or `anyOf` of constants.
fn constant_choices(schema: &Value) -> BTreeMap<String, Choice> {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else { return BTreeMap::new() };
    defs.iter().filter_map(|(name, def)| Some((name.clone(), choice(def)?))).collect()
}

/// Keywords a constant of a choice may have beside `const`.
const CONSTANT_KEYWORDS: &[&str] = &["const", "type", "description", "title"];

fn choice(def: &Value) -> Option<Choice> {
    let mut schema = def.as_object()?.clone();
    let keyword = ["oneOf", "anyOf"].into_iter().find(|keyword| schema.contains_key(*keyword))?;
    if schema.contains_key("oneOf") && schema.contains_key("anyOf") || schema.contains_key("$ref") {
        return None;
    }
    let variants = schema.get(keyword)?.as_array()?.clone();
    let constant = |variant: &Value| {
        variant.as_object().is_some_and(|variant| {
            variant.contains_key("const") && variant.keys().all(|key| CONSTANT_KEYWORDS.contains(&key.as_str()))
        })
    };
    if variants.is_empty() || !variants.iter().all(constant) {
        return None;
    }
    schema.remove(keyword);
    let constants: Vec<Value> = variants.iter().map(|variant| variant["const"].clone()).collect();
    // Each constant's type, as its variant says or as its value has; one `type` when they agree.
    let types: Vec<Value> = variants
        .iter()
        .map(|variant| variant.get("type").cloned().unwrap_or_else(|| json!(json_type(&variant["const"]))))
        .collect();
    if types.windows(2).all(|pair| pair[0] == pair[1]) && !schema.contains_key("type") {
        schema.insert("type".into(), types[0].clone());
    }
    schema.insert("enum".into(), Value::Array(constants));
    Some(Choice { description: schema.remove("description"), sentence: words::choices(&variants), schema })
}

/// Past this depth, schemas are left as they are (a schema is the tool author's, of any depth).
const MAX_DEPTH: usize = 64;

/// Keywords whose value is a schema, or a list of schemas.
const SUBSCHEMAS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs"];

fn rewrite(node: &mut Value, choices: &BTreeMap<String, Choice>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(schema) = node.as_object_mut() else { return };
    let target = schema.get("$ref").and_then(Value::as_str).and_then(|reference| reference.strip_prefix("#/$defs/"));
    if let Some(choice) = target.and_then(|name| choices.get(name)) {
        let mut siblings = std::mem::take(schema);
        siblings.remove("$ref");
        *schema = choice.at(siblings);
    }
    standard_format(schema);
    for keyword in SUBSCHEMAS {
        match schema.get_mut(*keyword) {
            Some(Value::Array(schemas)) => schemas.iter_mut().for_each(|inner| rewrite(inner, choices, depth + 1)),
            Some(inner) => rewrite(inner, choices, depth + 1),
            None => {}
        }
    }
    for keyword in SCHEMA_MAPS {
        if let Some(Value::Object(schemas)) = schema.get_mut(*keyword) {
            schemas.values_mut().for_each(|inner| rewrite(inner, choices, depth + 1));
        }
    }
}

/// Drops a `format` JSON Schema does not define, keeping the range of an integer format.
fn standard_format(schema: &mut Map<String, Value>) {
    let Some(format) = schema.get("format").and_then(Value::as_str) else { return };
    if formats::is_standard(format) {
        return;
    }
    let (low, high) = formats::integer_range(format);
    schema.remove("format");
    if let Some(low) = low {
        bound(schema, "minimum", "exclusiveMinimum", low, |existing, low| existing >= low as f64);
    }
    if let Some(high) = high {
        bound(schema, "maximum", "exclusiveMaximum", high, |existing, high| existing <= high as f64);
    }
}

/// Sets `keyword` to `limit` unless the schema bounds that side already at least as tightly.
fn bound(schema: &mut Map<String, Value>, keyword: &str, exclusive: &str, limit: i64, tighter: fn(f64, i64) -> bool) {
    let existing = [keyword, exclusive].into_iter().filter_map(|keyword| schema.get(keyword)?.as_f64());
    if existing.into_iter().any(|existing| tighter(existing, limit)) {
        return;
    }
    schema.insert(keyword.into(), json!(limit));
}

/// Whether any `$ref` under `value` names the definition `name`.
fn refers_to(value: &Value, name: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, value)| {
            key == "$ref" && value.as_str().and_then(|r| r.strip_prefix("#/$defs/")) == Some(name)
                || refers_to(value, name)
        }),
        Value::Array(items) => items.iter().any(|item| refers_to(item, name)),
        _ => false,
    }
}
