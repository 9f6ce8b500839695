//! A tool's JSON Schema rewritten into the subset a provider's format accepts.
//!
//! Every rewrite keeps what the model may send a subset of what the runtime accepts, once
//! [`super::repair`] has undone the reshaping (a map sent as a list of entries, `null` for
//! "not given", JSON given as text). What a format cannot express moves into the
//! description in words (see [`super::words`]); the runtime still enforces it on the
//! original schema. What cannot be rewritten at all is an error naming the place and rule.
//!
//! (Long: one converter walking one schema; its rules read best beside each other, and the
//! pure helpers at the end are a few lines each.)

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::words;

/// What a provider's schema subset allows.
pub(crate) struct Dialect {
    /// How errors name it, e.g. "OpenAI strict mode".
    pub(crate) name: &'static str,
    /// Keywords kept as they are; any other is described in words or dropped.
    pub(crate) keeps: &'static [&'static str],
    /// The `format` values it accepts; others are described in words or dropped.
    pub(crate) formats: &'static [&'static str],
    /// `$ref`s: kept with their `$defs`, kept but not recursive, inlined where not recursive,
    /// or inlined.
    pub(crate) refs: Refs,
    /// Every object gets `additionalProperties: false`; a map (an object whose keys are not
    /// fixed) becomes a list of `{key, value}` entries.
    pub(crate) closed_objects: bool,
    /// Every property is required; an optional one accepts `null`, meaning "not given".
    pub(crate) all_required: bool,
    /// An optional property whose default is `null` loses its `null` type: leaving it out
    /// says the same, and every union costs (Anthropic limits them per request).
    pub(crate) omit_null_defaults: bool,
    /// `enum` takes strings only; other constants are described in words.
    pub(crate) string_enums_only: bool,
    /// A value of any type becomes a string holding its JSON text.
    pub(crate) any_as_json_text: bool,
    /// A nullable type as `"nullable": true` (OpenAPI) rather than a `"null"` type.
    pub(crate) nullable_keyword: bool,
    /// Type names in upper case (Gemini's `Type` enum).
    pub(crate) upper_case_types: bool,
    /// The largest `minItems` it accepts.
    pub(crate) max_min_items: Option<u64>,
    /// Size limits, checked on the result.
    pub(crate) limits: Option<SizeLimits>,
}

/// What an object schema becomes.
enum Shape {
    /// Its keywords, converted.
    Fields(Map<String, Value>),
    /// A list of key-value entries, and the sentence that says so.
    Entries { fields: Map<String, Value>, sentence: String },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refs {
    Keep,
    KeepAcyclic,
    /// Written out, except where a definition contains itself: that `$ref` stays, with its
    /// definition in `$defs`.
    InlineUnlessRecursive,
    Inline,
}

/// OpenAI strict mode's published limits.
#[derive(Clone, Copy)]
pub(crate) struct SizeLimits {
    pub(crate) properties: usize,
    pub(crate) nesting: usize,
    pub(crate) enum_values: usize,
    pub(crate) string_chars: usize,
}

/// Where a schema broke a rule of the dialect, and which.
#[derive(Debug)]
pub(crate) struct Unconvertible {
    pub(crate) pointer: String,
    pub(crate) rule: String,
}

type Converted = Result<Value, Unconvertible>;

/// `schema` (the root of a tool's arguments) in `dialect`.
pub(crate) fn convert(schema: &Value, dialect: &Dialect) -> Converted {
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut converter = Converter { dialect, defs, inlining: Vec::new(), depth: 0, converted: 0 };
    if dialect.refs == Refs::KeepAcyclic {
        converter.refuse_recursion(schema, "")?;
    }
    let mut root = converter.node(schema, "")?;
    let object = json!(converter.type_name("object"));
    let Some(root_object) = root.as_object_mut().filter(|root| root.get("type") == Some(&object)) else {
        return Err(Unconvertible::at("", format!("{} needs an object at the root of the arguments", dialect.name)));
    };
    if dialect.refs != Refs::Inline {
        // Only the definitions still referenced: a `$ref` with siblings was written out.
        let mut defs = Map::new();
        let mut wanted: Vec<String> =
            references(&Value::Object(root_object.clone()), "").into_iter().map(|(name, _)| name).collect();
        while let Some(name) = wanted.pop() {
            if defs.contains_key(&name) {
                continue;
            }
            let def = converter.defs.get(&name).cloned().unwrap_or_default();
            // A definition kept because it contains itself refers to itself inside.
            let recursive = dialect.refs == Refs::InlineUnlessRecursive;
            if recursive {
                converter.inlining.push(name.clone());
            }
            let converted = converter.node(&def, &format!("/$defs/{name}"));
            if recursive {
                converter.inlining.pop();
            }
            let converted = converted?;
            wanted.extend(references(&converted, "").into_iter().map(|(name, _)| name));
            defs.insert(name, converted);
        }
        if !defs.is_empty() {
            root_object.insert("$defs".into(), Value::Object(defs));
        }
    }
    if let Some(limits) = dialect.limits {
        check_size(&root, limits, dialect.name)?;
    }
    Ok(root)
}

impl Unconvertible {
    fn at(pointer: &str, rule: String) -> Self {
        Self { pointer: if pointer.is_empty() { "/".into() } else { pointer.into() }, rule }
    }
}

struct Converter<'a> {
    dialect: &'a Dialect,
    defs: Map<String, Value>,
    /// The `$defs` being inlined, outermost first: one met again is recursion.
    inlining: Vec<String>,
    /// How deep the schema being converted is nested, here.
    depth: usize,
    /// How many schemas have been converted: writing out `$ref`s can multiply them.
    converted: usize,
}

/// Bounds on the work one conversion does. A tool's schema is the tool author's, and a small
/// one can stand for an enormous one once its `$ref`s are written out (each definition
/// using the next twice doubles it): past these, conversion fails instead of exhausting the
/// stack or memory.
const MAX_DEPTH: usize = 64;
const MAX_SCHEMAS: usize = 10_000;

/// Keywords handled structurally, never copied or described.
const STRUCTURAL: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "enum",
    "const",
    "description",
];

/// Keywords that only annotate, dropped where the dialect does not keep them.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$comment", "title", "deprecated", "readOnly", "writeOnly"];

impl Converter<'_> {
    fn type_name(&self, name: &str) -> String {
        if self.dialect.upper_case_types { name.to_uppercase() } else { name.to_owned() }
    }

    fn node(&mut self, schema: &Value, pointer: &str) -> Converted {
        self.converted += 1;
        if self.depth >= MAX_DEPTH || self.converted > MAX_SCHEMAS {
            let rule = format!(
                "the schema is too large to convert: more than {MAX_DEPTH} levels deep or {MAX_SCHEMAS} schemas once \
                 its `$ref`s are written out"
            );
            return Err(Unconvertible::at(pointer, rule));
        }
        self.depth += 1;
        let converted = self.convert_node(schema, pointer);
        self.depth -= 1;
        converted
    }

    fn convert_node(&mut self, schema: &Value, pointer: &str) -> Converted {
        let schema = match schema {
            Value::Bool(true) => &json!({}),
            Value::Object(_) => schema,
            _ => return Err(Unconvertible::at(pointer, "a schema must be an object or `true`".into())),
        };
        let mut node = schema.as_object().cloned().unwrap_or_default();
        if let Some(reference) = node.remove("$ref") {
            return self.reference(&reference, node, pointer);
        }
        flatten_single_all_of(&mut node, pointer)?;
        self.refuse_unsupported(&node, pointer)?;
        if let Some(variants) = node.remove("oneOf").or_else(|| node.remove("anyOf")) {
            return self.union(&variants, node, pointer);
        }
        let mut types = types_of(&node);
        node.remove("type");
        let nullable = types.remove("null");
        if types.is_empty() && !node.contains_key("enum") && !node.contains_key("const") {
            if nullable {
                let out = self.typed(&["null".to_owned()]);
                return Ok(self.finish(out, &node, Vec::new()));
            }
            return Ok(self.any_value(node));
        }
        if types.is_empty() {
            // Constants without a type: the type their values have (strict modes want one).
            let constants = node.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
            let constants = constants.iter().chain(node.get("const"));
            types.extend(constants.filter(|value| !value.is_null()).map(|value| json_type(value).to_owned()));
        }
        let mut out = Map::new();
        let mut sentences = Vec::new();
        let mut concrete: Vec<String> = types.into_iter().collect();
        if concrete.iter().any(|name| name == "object") {
            match self.object(&mut node, pointer)? {
                Shape::Fields(fields) => out.extend(fields),
                Shape::Entries { fields, sentence } => {
                    if let Some(Value::Object(default)) = node.get("default") {
                        let entries = default.iter().map(|(key, value)| json!({"key": key, "value": value})).collect();
                        node.insert("default".into(), Value::Array(entries));
                    }
                    concrete.retain(|name| name != "object");
                    concrete.push("array".into());
                    out.extend(fields);
                    sentences.push(sentence);
                }
            }
        }
        if concrete.iter().any(|name| name == "array")
            && let Some(items) = node.remove("items")
        {
            out.insert("items".into(), self.node(&items, &format!("{pointer}/items"))?);
        }
        if nullable {
            concrete.push("null".into());
        }
        out.extend(self.typed(&concrete));
        Ok(self.finish(out, &node, sentences))
    }

    /// The `type` (and `nullable`) entries for `types`.
    fn typed(&self, types: &[String]) -> Map<String, Value> {
        let mut out = Map::new();
        let nullable = types.iter().any(|name| name == "null");
        let concrete: Vec<&String> = types.iter().filter(|name| *name != "null").collect();
        let name = |names: &[&String]| match names {
            [single] => json!(self.type_name(single)),
            names => names.iter().map(|name| json!(self.type_name(name))).collect(),
        };
        if self.dialect.nullable_keyword && concrete.len() > 1 {
            let variants: Vec<Value> = concrete.iter().map(|single| json!({"type": self.type_name(single)})).collect();
            out.insert("anyOf".into(), Value::Array(variants));
            if nullable {
                out.insert("nullable".into(), Value::Bool(true));
            }
        } else if self.dialect.nullable_keyword && !concrete.is_empty() {
            out.insert("type".into(), name(&concrete));
            if nullable {
                out.insert("nullable".into(), Value::Bool(true));
            }
        } else {
            out.insert("type".into(), name(&types.iter().collect::<Vec<_>>()));
        }
        out
    }

    /// `out` plus the remaining keywords of `node`: kept, in words, or dropped; `sentences`
    /// join the description.
    fn finish(&self, mut out: Map<String, Value>, node: &Map<String, Value>, mut sentences: Vec<String>) -> Value {
        let mut moved = Map::new();
        for (keyword, value) in node {
            let kept = self.dialect.keeps.contains(&keyword.as_str());
            match keyword.as_str() {
                "enum" | "const" => {
                    let values = if keyword == "enum" { value.clone() } else { json!([value]) };
                    let strings = values.as_array().is_some_and(|values| values.iter().all(Value::is_string));
                    if keyword == "const" && kept {
                        out.insert("const".into(), value.clone());
                    } else if strings || !self.dialect.string_enums_only {
                        out.insert("enum".into(), values);
                    } else {
                        let listed: Vec<String> =
                            values.as_array().into_iter().flatten().map(Value::to_string).collect();
                        sentences.push(format!("One of: {}.", listed.join(", ")));
                    }
                }
                keyword if STRUCTURAL.contains(&keyword) || ANNOTATIONS.contains(&keyword) && !kept => {}
                "minItems" if kept => match self.dialect.max_min_items {
                    Some(most) if value.as_u64().is_some_and(|least| least > most) => {
                        out.insert("minItems".into(), json!(most));
                        moved.insert(keyword.to_owned(), value.clone());
                    }
                    _ => {
                        out.insert("minItems".into(), value.clone());
                    }
                },
                "format" if kept && value.as_str().is_some_and(|format| self.dialect.formats.contains(&format)) => {
                    out.insert("format".into(), value.clone());
                }
                "format" => {
                    moved.insert(keyword.to_owned(), value.clone());
                }
                _ if kept => {
                    out.insert(keyword.clone(), value.clone());
                }
                _ => {
                    moved.insert(keyword.clone(), value.clone());
                }
            }
        }
        sentences.extend(words::describe(&moved, node));
        if let Some(description) = words::append(node.get("description"), &sentences) {
            out.insert("description".into(), description);
        }
        Value::Object(out)
    }

    fn reference(&mut self, reference: &Value, siblings: Map<String, Value>, pointer: &str) -> Converted {
        let name = reference
            .as_str()
            .and_then(|reference| reference.strip_prefix("#/$defs/"))
            .filter(|name| self.defs.contains_key(*name))
            .ok_or_else(|| {
                Unconvertible::at(pointer, format!("`$ref` {reference} is not a definition in this schema's `$defs`"))
            })?
            .to_owned();
        let recursive = self.inlining.contains(&name);
        let keep = match self.dialect.refs {
            Refs::Keep | Refs::KeepAcyclic => siblings.is_empty() || recursive,
            Refs::InlineUnlessRecursive => recursive,
            Refs::Inline => false,
        };
        if keep {
            // A reference inside its own definition loses its siblings (a description):
            // strict modes take a `$ref` alone.
            return Ok(json!({"$ref": format!("#/$defs/{name}")}));
        }
        // A `$ref` with siblings is written out once, as OpenAI's own SDK does for strict
        // mode; references inside it stay references.
        if recursive {
            return Err(Unconvertible::at(
                pointer,
                format!(
                    "{} has no `$ref`, and `{name}` contains itself, so it cannot be written out in full",
                    self.dialect.name
                ),
            ));
        }
        let mut merged = self.defs[&name].as_object().cloned().unwrap_or_default();
        merged.extend(siblings);
        self.inlining.push(name);
        let inlined = self.node(&Value::Object(merged), pointer);
        self.inlining.pop();
        inlined
    }

    /// `oneOf`/`anyOf`: a choice of constants becomes an `enum` (each constant's description
    /// joins the parent's); any other union becomes `anyOf`.
    fn union(&mut self, variants: &Value, node: Map<String, Value>, pointer: &str) -> Converted {
        let variants = variants.as_array().cloned().unwrap_or_default();
        let constants: Option<Vec<&Value>> = variants.iter().map(|variant| variant.get("const")).collect();
        if let Some(constants) = constants.filter(|constants| !constants.is_empty()) {
            let mut types: BTreeSet<String> = variants.iter().flat_map(types_of_value).collect();
            if types.is_empty() {
                types.extend(constants.iter().map(|constant| json_type(constant).to_owned()));
            }
            let mut enumeration = node;
            enumeration.insert("enum".into(), Value::Array(constants.into_iter().cloned().collect()));
            enumeration.insert("type".into(), if types.len() == 1 { json!(types.pop_first()) } else { json!(types) });
            if let Some(sentence) = words::choices(&variants) {
                let description = words::append(enumeration.get("description"), &[sentence]);
                enumeration.extend(description.map(|description| ("description".to_owned(), description)));
            }
            return self.node(&Value::Object(enumeration), pointer);
        }
        let is_null = |variant: &Value| variant.get("type").and_then(Value::as_str) == Some("null");
        if self.dialect.nullable_keyword
            && let [first, second] = variants.as_slice()
            && (is_null(first) || is_null(second))
        {
            // `X or null` is X with `nullable` in OpenAPI.
            let (index, variant) = if is_null(first) { (1, second) } else { (0, first) };
            let mut out = self.node(variant, &format!("{pointer}/anyOf/{index}"))?;
            let out = out.as_object_mut().map(std::mem::take).unwrap_or_default();
            let mut out = self.finish(out, &node, Vec::new());
            out["nullable"] = Value::Bool(true);
            return Ok(out);
        }
        let mut converted = Vec::with_capacity(variants.len());
        for (index, variant) in variants.iter().enumerate() {
            converted.push(self.node(variant, &format!("{pointer}/anyOf/{index}"))?);
        }
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(converted));
        Ok(self.finish(out, &node, Vec::new()))
    }

    /// A value of any JSON type: kept where the format allows it, else JSON text.
    fn any_value(&self, node: Map<String, Value>) -> Value {
        if !self.dialect.any_as_json_text {
            return self.finish(Map::new(), &node, Vec::new());
        }
        let out = self.typed(&["string".to_owned()]);
        let sentence = "Any JSON value, written as JSON text (e.g. {\"a\": [1, 2]} or \"text\").".to_owned();
        self.finish(out, &node, vec![sentence])
    }

    /// An object's keywords (without `type`), or, for a map in a format with fixed keys only,
    /// a list of entries.
    fn object(&mut self, node: &mut Map<String, Value>, pointer: &str) -> Result<Shape, Unconvertible> {
        let properties = node.remove("properties").and_then(|properties| properties.as_object().cloned());
        let additional = node.remove("additionalProperties");
        let mut required: Vec<String> = Vec::new();
        for name in node.remove("required").and_then(|required| required.as_array().cloned()).unwrap_or_default() {
            if let Some(name) = name.as_str().filter(|name| !required.iter().any(|known| known == name)) {
                required.push(name.to_owned());
            }
        }
        let has_properties = properties.as_ref().is_some_and(|properties| !properties.is_empty());
        let keeps_maps = self.dialect.keeps.contains(&"additionalProperties") && !self.dialect.closed_objects;
        // A free-form object (no properties, any other key allowed) is a map of any values,
        // except at the root, where it is a tool without parameters.
        let free_form = !has_properties && matches!(additional, None | Some(Value::Bool(true))) && !pointer.is_empty();
        let map_values = match &additional {
            Some(values @ Value::Object(_)) => Some(values.clone()),
            _ if free_form => Some(json!({})),
            _ => None,
        };
        if let Some(values) = &map_values
            && !keeps_maps
        {
            if has_properties {
                return Err(Unconvertible::at(
                    pointer,
                    format!(
                        "{} cannot express an object with fixed properties that also takes any other key",
                        self.dialect.name
                    ),
                ));
            }
            return self.entries(values, pointer);
        }
        let mut fields = Map::new();
        let mut converted = Map::new();
        for (name, property) in properties.iter().flatten() {
            let optional = !required.contains(name);
            let property = if optional && self.dialect.omit_null_defaults {
                without_null_default(property)
            } else {
                property.clone()
            };
            let mut property = self.node(&property, &format!("{pointer}/properties/{}", escape(name)))?;
            if self.dialect.all_required && optional {
                if let Some(schema) = property.as_object_mut() {
                    self.make_nullable(schema);
                }
                append_sentence(&mut property, "null means not given.");
            }
            converted.insert(name.clone(), property);
        }
        let required: Vec<&String> =
            if self.dialect.all_required { converted.keys().collect() } else { required.iter().collect() };
        if properties.is_some() || self.dialect.closed_objects {
            fields.insert("properties".into(), Value::Object(converted.clone()));
        }
        if !required.is_empty() || self.dialect.all_required {
            fields.insert("required".into(), json!(required));
        }
        match additional {
            _ if self.dialect.closed_objects => {
                fields.insert("additionalProperties".into(), Value::Bool(false));
            }
            Some(Value::Object(values)) => {
                let values = self.node(&Value::Object(values), &format!("{pointer}/additionalProperties"))?;
                fields.insert("additionalProperties".into(), values);
            }
            Some(additional) if self.dialect.keeps.contains(&"additionalProperties") => {
                fields.insert("additionalProperties".into(), additional);
            }
            _ => {}
        }
        Ok(Shape::Fields(fields))
    }

    /// A map as a list of `{"key": ..., "value": ...}` entries.
    fn entries(&mut self, values: &Value, pointer: &str) -> Result<Shape, Unconvertible> {
        let value = self.node(values, &format!("{pointer}/additionalProperties"))?;
        let mut entry = self.typed(&["object".to_owned()]);
        entry.insert("properties".into(), json!({"key": self.typed(&["string".to_owned()]), "value": value}));
        entry.insert("required".into(), json!(["key", "value"]));
        if self.dialect.closed_objects {
            entry.insert("additionalProperties".into(), Value::Bool(false));
        }
        let mut fields = Map::new();
        fields.insert("items".into(), Value::Object(entry));
        let sentence = "Given as a list of {\"key\": ..., \"value\": ...} entries, each key at most once.".to_owned();
        Ok(Shape::Entries { fields, sentence })
    }

    /// Lets a converted schema also accept `null`.
    fn make_nullable(&self, schema: &mut Map<String, Value>) {
        let null_branch = json!({"type": self.type_name("null")});
        if let Some(Value::Array(variants)) = schema.get_mut("anyOf") {
            let takes_null = variants.iter().any(|variant| {
                variant.get("type") == null_branch.get("type") || variant.get("nullable") == Some(&Value::Bool(true))
            });
            if !takes_null {
                variants.push(null_branch);
            }
            return;
        }
        if self.dialect.nullable_keyword {
            if schema.contains_key("$ref") {
                let inner = std::mem::take(schema);
                schema.insert("anyOf".into(), json!([Value::Object(inner), {"type": self.type_name("null")}]));
            } else {
                schema.insert("nullable".into(), Value::Bool(true));
            }
            return;
        }
        let null_type = json!(self.type_name("null"));
        if let Some(values) = schema.get_mut("enum").and_then(Value::as_array_mut)
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        match schema.get_mut("type") {
            Some(Value::Array(types)) if !types.contains(&null_type) => types.push(null_type),
            Some(Value::Array(_)) => {}
            Some(single) if *single != null_type => *single = Value::Array(vec![single.clone(), null_type]),
            Some(_) => {}
            None => {
                let description = schema.remove("description");
                let inner = std::mem::take(schema);
                schema.insert("anyOf".into(), Value::Array(vec![Value::Object(inner), json!({"type": null_type})]));
                if let Some(description) = description {
                    schema.insert("description".into(), description);
                }
            }
        }
    }

    fn refuse_unsupported(&self, node: &Map<String, Value>, pointer: &str) -> Result<(), Unconvertible> {
        const UNSUPPORTED: &[&str] = &[
            "allOf",
            "not",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "dependentRequired",
            "patternProperties",
            "propertyNames",
            "unevaluatedProperties",
            "unevaluatedItems",
            "contains",
            "prefixItems",
        ];
        match UNSUPPORTED.iter().find(|keyword| node.contains_key(**keyword) && !self.dialect.keeps.contains(keyword)) {
            Some(keyword) => {
                Err(Unconvertible::at(pointer, format!("{} does not support `{keyword}`", self.dialect.name)))
            }
            None => Ok(()),
        }
    }

    /// Fails when a definition refers to itself, directly or through others.
    fn refuse_recursion(&mut self, schema: &Value, pointer: &str) -> Result<(), Unconvertible> {
        let mut acyclic = BTreeSet::new();
        self.refuse_cycles(schema, pointer, &mut acyclic)
    }

    /// Depth-first through the references; `acyclic` holds the definitions already cleared.
    fn refuse_cycles(
        &mut self,
        schema: &Value,
        pointer: &str,
        acyclic: &mut BTreeSet<String>,
    ) -> Result<(), Unconvertible> {
        for (name, reference_pointer) in references(schema, pointer) {
            if self.inlining.contains(&name) {
                return Err(Unconvertible::at(
                    &reference_pointer,
                    format!("{} does not support recursive schemas, and `{name}` contains itself", self.dialect.name),
                ));
            }
            if acyclic.contains(&name) {
                continue;
            }
            if self.inlining.len() >= MAX_DEPTH {
                return Err(Unconvertible::at(
                    &reference_pointer,
                    format!("definitions refer to one another more than {MAX_DEPTH} deep"),
                ));
            }
            let Some(def) = self.defs.get(&name).cloned() else { continue };
            self.inlining.push(name.clone());
            self.refuse_cycles(&def, &format!("/$defs/{name}"), acyclic)?;
            self.inlining.pop();
            acyclic.insert(name);
        }
        Ok(())
    }
}

/// Every `$ref` to a local definition under `schema`, with where it is.
fn references(schema: &Value, pointer: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$defs" {
                    continue;
                }
                if key == "$ref"
                    && let Some(name) = value.as_str().and_then(|reference| reference.strip_prefix("#/$defs/"))
                {
                    found.push((name.to_owned(), pointer.to_owned()));
                }
                found.extend(references(value, &format!("{pointer}/{}", escape(key))));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                found.extend(references(item, &format!("{pointer}/{index}")));
            }
        }
        _ => {}
    }
    found
}

/// An optional property's schema without `"default": null` and the `null` type it implies.
fn without_null_default(property: &Value) -> Value {
    let mut property = property.clone();
    let Some(schema) = property.as_object_mut() else { return property };
    if schema.get("default") != Some(&Value::Null) {
        return property;
    }
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|name| name != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            schema.insert("type".into(), single);
        }
    }
    schema.remove("default");
    property
}

/// `allOf: [one schema]` (which schemars writes to give a `$ref` a description) merged into
/// its parent.
fn flatten_single_all_of(node: &mut Map<String, Value>, pointer: &str) -> Result<(), Unconvertible> {
    let Some(Value::Array(parts)) = node.get("allOf") else { return Ok(()) };
    let [Value::Object(part)] = parts.as_slice() else {
        return Err(Unconvertible::at(
            pointer,
            "`allOf` of several schemas cannot be expressed; merge them into one".into(),
        ));
    };
    let part = part.clone();
    node.remove("allOf");
    for (keyword, value) in part {
        node.entry(keyword).or_insert(value);
    }
    Ok(())
}

fn types_of(node: &Map<String, Value>) -> BTreeSet<String> {
    match node.get("type") {
        Some(Value::String(name)) => BTreeSet::from([name.clone()]),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => BTreeSet::new(),
    }
}

fn types_of_value(schema: &Value) -> BTreeSet<String> {
    schema.as_object().map(types_of).unwrap_or_default()
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn append_sentence(schema: &mut Value, sentence: &str) {
    let Some(schema) = schema.as_object_mut() else { return };
    if let Some(description) = words::append(schema.get("description"), &[sentence.to_owned()]) {
        schema.insert("description".into(), description);
    }
}

/// A JSON Pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Checks OpenAI strict mode's size limits on a converted schema.
fn check_size(schema: &Value, limits: SizeLimits, dialect: &str) -> Result<(), Unconvertible> {
    let mut tally = Tally::default();
    tally.walk(schema, 0);
    let checks = [
        (tally.properties, limits.properties, "object properties in all"),
        (tally.deepest, limits.nesting, "levels of nesting"),
        (tally.enum_values, limits.enum_values, "enum values in all"),
        (tally.string_chars, limits.string_chars, "characters of property names, definition names and enum values"),
    ];
    for (found, most, what) in checks {
        if found > most {
            return Err(Unconvertible::at(
                "",
                format!("{dialect} allows at most {most} {what}; this schema has {found}"),
            ));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Tally {
    properties: usize,
    deepest: usize,
    enum_values: usize,
    string_chars: usize,
}

impl Tally {
    fn walk(&mut self, schema: &Value, depth: usize) {
        let Some(schema) = schema.as_object() else { return };
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            self.properties += properties.len();
            self.deepest = self.deepest.max(depth + 1);
            for (name, property) in properties {
                self.string_chars += name.chars().count();
                self.walk(property, depth + 1);
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            self.enum_values += values.len();
            self.string_chars +=
                values.iter().filter_map(Value::as_str).map(|value| value.chars().count()).sum::<usize>();
        }
        if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
            for (name, def) in defs {
                self.string_chars += name.chars().count();
                self.walk(def, depth);
            }
        }
        for keyword in ["items", "additionalProperties"] {
            if let Some(inner) = schema.get(keyword) {
                self.walk(inner, depth);
            }
        }
        for variant in schema.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
            self.walk(variant, depth);
        }
    }
}
