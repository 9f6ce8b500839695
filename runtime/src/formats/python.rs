//! A tool as a code-mode program sees it: a function of `tools`, with the signature and
//! docstring the `python` tool gives it (`tools/python/_toolcell_tools.py`). Code mode's
//! `search` shows these, so a model writes the call it will make; a test of the `python` tool
//! holds the two renderings equal.
//!
//! Types are written from the parameters' JSON Schemas: `str`, `int`, `float`, `bool`,
//! `list[str]`, `dict`, `None`, unions as `A | B`, a choice of up to 16 plain constants as
//! `Literal['a', 'b']`, local `$ref`s followed, and anything else `Any`. An optional
//! parameter is `T | None = None`; one whose name is not a Python name is passed in `**more`.

use serde_json::{Map, Value};

use crate::tool::definition::ToolDefinition;

/// How deep `$ref`s, unions and items are followed before a type is just `Any`.
const MAX_TYPE_DEPTH: usize = 8;
/// An enum with more values than this is written as its type, not as a `Literal`.
const MAX_LITERAL_VALUES: usize = 16;

/// Python's keywords (`keyword.kwlist`): never a parameter's or attribute's name.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// A tool as a function of a program's `tools`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PythonFunction {
    /// How a program reaches it: `tools.json_query`, or `tools["9-lives"]` for a name that is
    /// not a Python name.
    pub call_as: String,
    /// Its parameters as `inspect.signature` shows them, e.g.
    /// `(document: Any, query: str, limit: int | None = None)`.
    pub parameters: String,
    /// What it returns, from the tool's output schema (`Any` without one). The program's
    /// function carries no return annotation (a tool learns only its callees' inputs), so this
    /// is the host's to tell.
    pub returns: String,
    /// Its `__doc__`: the description, an `Args:` section, and how a failure is raised.
    pub docstring: String,
}

impl PythonFunction {
    /// The call with its types, e.g. `tools.json_query(document: Any, query: str) -> dict`.
    pub fn signature(&self) -> String {
        format!("{}{} -> {}", self.call_as, self.parameters, self.returns)
    }
}

/// The function a program gets for `definition`.
pub fn python_function(definition: &ToolDefinition) -> PythonFunction {
    let root = &definition.parameters;
    let empty = Map::new();
    let properties = root.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| properties.contains_key(*name))
        .collect();
    let returns = match &definition.output_schema {
        Some(schema) => type_text(schema, schema, 0),
        None => "Any".to_owned(),
    };
    PythonFunction {
        call_as: call_as(&definition.name),
        parameters: parameters(properties, &required, root),
        returns,
        docstring: docstring(&definition.description, properties, &required, root),
    }
}

fn call_as(name: &str) -> String {
    let attribute = name.replace('-', "_");
    if is_python_name(&attribute) {
        format!("tools.{attribute}")
    } else {
        format!("tools[{}]", python_repr_ascii(name).unwrap_or_else(|| format!("{name:?}")))
    }
}

/// Required parameters first, then optional ones, each in the schema's order.
fn parameters(properties: &Map<String, Value>, required: &[&str], root: &Value) -> String {
    let optional = properties.keys().map(String::as_str).filter(|name| !required.contains(name));
    let named: Vec<&str> =
        required.iter().copied().chain(optional).filter(|name| is_python_name(name) && *name != "more").collect();
    let mut written: Vec<String> = named
        .iter()
        .map(|name| {
            let is_optional = !required.contains(name);
            let kind = parameter_type(&properties[*name], root, is_optional);
            if is_optional { format!("{name}: {kind} = None") } else { format!("{name}: {kind}") }
        })
        .collect();
    if named.len() < properties.len() {
        written.push("**more".to_owned());
    }
    format!("({})", written.join(", "))
}

fn docstring(description: &str, properties: &Map<String, Value>, required: &[&str], root: &Value) -> String {
    let mut sections = vec![description.trim().to_owned()];
    if !properties.is_empty() {
        let mut lines = vec!["Args:".to_owned()];
        for (name, schema) in properties {
            let kind = type_text(schema, root, 0);
            let optional = if required.contains(&name.as_str()) { "" } else { ", optional" };
            let text = schema.get("description").and_then(Value::as_str).map(|text| text.trim().replace('\n', " "));
            match text.filter(|text| !text.is_empty()) {
                Some(text) => lines.push(format!("    {name} ({kind}{optional}): {text}")),
                None => lines.push(format!("    {name} ({kind}{optional})")),
            }
        }
        sections.push(lines.join("\n"));
    }
    sections.push("Raises ToolCallError (with .kind and .message) when the call fails.".to_owned());
    sections.join("\n\n")
}

fn parameter_type(schema: &Value, root: &Value, optional: bool) -> String {
    let text = type_text(schema, root, 0);
    if optional && text != "Any" && text != "None" && !text.ends_with(" | None") { text + " | None" } else { text }
}

fn type_text(schema: &Value, root: &Value, depth: usize) -> String {
    let Some(schema) = schema.as_object().filter(|_| depth <= MAX_TYPE_DEPTH) else {
        return "Any".to_owned();
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return resolve(root, reference).map_or_else(|| "Any".to_owned(), |target| type_text(target, root, depth + 1));
    }
    if let Some(constant) = schema.get("const") {
        return constants(std::slice::from_ref(constant));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array).filter(|values| !values.is_empty()) {
        return constants(values);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(choices) = schema.get(key).and_then(Value::as_array).filter(|choices| !choices.is_empty()) {
            // A choice of constants (`{"const": "m"}`, ...) is one choice of all of them.
            if let Some(values) = choices.iter().map(|choice| choice.get("const").cloned()).collect::<Option<Vec<_>>>()
            {
                return constants(&values);
            }
            return union(choices.iter().map(|choice| type_text(choice, root, depth + 1)).collect());
        }
    }
    match schema.get("type") {
        Some(Value::Array(kinds)) if !kinds.is_empty() => {
            union(kinds.iter().map(|kind| json_type(kind, schema, root, depth)).collect())
        }
        Some(kind @ Value::String(_)) => json_type(kind, schema, root, depth),
        _ => "Any".to_owned(),
    }
}

fn json_type(kind: &Value, schema: &Map<String, Value>, root: &Value, depth: usize) -> String {
    let name = match kind.as_str() {
        Some("array") => {
            let inner = match schema.get("items") {
                Some(items @ Value::Object(_)) => type_text(items, root, depth + 1),
                _ => "Any".to_owned(),
            };
            return if inner == "Any" { "list".to_owned() } else { format!("list[{inner}]") };
        }
        Some("string") => "str",
        Some("integer") => "int",
        Some("number") => "float",
        Some("boolean") => "bool",
        Some("object") => "dict",
        Some("null") => "None",
        _ => "Any",
    };
    name.to_owned()
}

/// A choice of constants: a `Literal` of them, or, when that cannot be written (too many, or
/// not plain values), the union of their types.
fn constants(values: &[Value]) -> String {
    literal(values).unwrap_or_else(|| {
        union(
            values
                .iter()
                .map(|value| {
                    let name = match value {
                        Value::String(_) => "str",
                        Value::Number(number) if number.is_i64() || number.is_u64() => "int",
                        Value::Number(_) => "float",
                        Value::Bool(_) => "bool",
                        Value::Null => "None",
                        Value::Array(_) => "list",
                        Value::Object(_) => "dict",
                    };
                    name.to_owned()
                })
                .collect(),
        )
    })
}

/// The parts joined with ` | `, each once, in order; `Any` if any part is.
fn union(parts: Vec<String>) -> String {
    if parts.iter().any(|part| part == "Any") {
        return "Any".to_owned();
    }
    let mut unique: Vec<String> = Vec::with_capacity(parts.len());
    for part in parts {
        if !unique.contains(&part) {
            unique.push(part);
        }
    }
    unique.join(" | ")
}

/// `Literal[...]` of plain values (ASCII strings, integers, booleans, null), else `None`.
fn literal(values: &[Value]) -> Option<String> {
    if values.is_empty() || values.len() > MAX_LITERAL_VALUES {
        return None;
    }
    let written: Option<Vec<String>> = values
        .iter()
        .map(|value| match value {
            Value::String(text) => python_repr_ascii(text),
            Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
            Value::Bool(true) => Some("True".to_owned()),
            Value::Bool(false) => Some("False".to_owned()),
            Value::Null => Some("None".to_owned()),
            _ => None,
        })
        .collect();
    Some(format!("Literal[{}]", written?.join(", ")))
}

/// What a local `$ref` (`#/$defs/Name`, any JSON pointer into the document) points to.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let mut target = root;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        target = match target {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) => {
                items.get(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(target)
}

/// Python's `repr` of an ASCII string; `None` for any other string.
fn python_repr_ascii(text: &str) -> Option<String> {
    if !text.is_ascii() {
        return None;
    }
    let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
    let mut written = String::with_capacity(text.len() + 2);
    written.push(quote);
    for c in text.chars() {
        match c {
            '\\' => written.push_str("\\\\"),
            '\t' => written.push_str("\\t"),
            '\n' => written.push_str("\\n"),
            '\r' => written.push_str("\\r"),
            c if c == quote => {
                written.push('\\');
                written.push(c);
            }
            c if c < ' ' || c == '\x7f' => written.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => written.push(c),
        }
    }
    written.push(quote);
    Some(written)
}

/// `str.isidentifier()` and not a keyword.
fn is_python_name(name: &str) -> bool {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|first| first == '_' || unicode_ident::is_xid_start(first));
    starts && chars.all(unicode_ident::is_xid_continue) && !KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::definition::ToolAnnotations;

    fn function(parameters: Value, output: Option<Value>) -> PythonFunction {
        python_function(&ToolDefinition {
            name: "json_query".into(),
            title: None,
            description: "Query a JSON document.\n".into(),
            version: "1.0.0".into(),
            parameters,
            output_schema: output,
            annotations: ToolAnnotations::default(),
        })
    }

    /// Properties in the order the guest gets them: serde_json's maps are sorted by key.
    #[test]
    fn required_first_optional_as_none_and_the_rest_in_more() {
        let written = function(
            json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "description": "At most this many."},
                    "document": {},
                    "query": {"type": "string", "description": " A JSONPath\nquery. "},
                    "from": {"type": "string"},
                },
                "required": ["document", "query"],
            }),
            Some(json!({"type": "object"})),
        );
        assert_eq!(written.call_as, "tools.json_query");
        assert_eq!(written.parameters, "(document: Any, query: str, limit: int | None = None, **more)");
        assert_eq!(
            written.signature(),
            "tools.json_query(document: Any, query: str, limit: int | None = None, **more) -> dict"
        );
        assert_eq!(
            written.docstring,
            "Query a JSON document.\n\nArgs:\n    document (Any)\n    from (str, optional)\n    \
             limit (int, optional): At most this many.\n    query (str): A JSONPath query.\n\n\
             Raises ToolCallError (with .kind and .message) when the call fails."
        );
    }

    #[test]
    fn types_follow_refs_unions_items_and_constants() {
        let root = json!({
            "$defs": {"Unit": {"enum": ["m", "ft", "it's"]}, "Loop": {"$ref": "#/$defs/Loop"}},
            "properties": {},
        });
        let cases = [
            (json!({"$ref": "#/$defs/Unit"}), r#"Literal['m', 'ft', "it's"]"#),
            (json!({"$ref": "#/$defs/Loop"}), "Any"),
            (json!({"$ref": "#/$defs/Missing"}), "Any"),
            (json!({"type": ["string", "null"]}), "str | None"),
            (json!({"anyOf": [{"type": "integer"}, {"type": "integer"}, {"type": "null"}]}), "int | None"),
            (json!({"anyOf": [{"type": "integer"}, {}]}), "Any"),
            (json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}), "list[list[float]]"),
            (json!({"type": "array"}), "list"),
            (json!({"const": 3}), "Literal[3]"),
            (json!({"enum": [true, null, -1, "a\\b\n\x01"]}), r"Literal[True, None, -1, 'a\\b\n\x01']"),
            (json!({"type": "string", "enum": ["é"]}), "str"),
            (json!({"type": "number", "enum": [1.5, 2]}), "float | int"),
            (json!({"oneOf": [{"const": "m"}, {"const": "ft"}]}), "Literal['m', 'ft']"),
            (json!({"anyOf": [{"const": "m"}, {"type": "null"}]}), "Literal['m'] | None"),
            (json!({"type": "weird"}), "Any"),
        ];
        for (schema, expected) in cases {
            assert_eq!(type_text(&schema, &root, 0), expected, "{schema}");
        }
        let many: Vec<Value> = (0..17).map(Value::from).collect();
        assert_eq!(type_text(&json!({"type": "integer", "enum": many}), &root, 0), "int");
        let choices: Vec<Value> = (0..17).map(|i| json!({"const": format!("unit{i}")})).collect();
        assert_eq!(type_text(&json!({"oneOf": choices}), &root, 0), "str");
    }

    #[test]
    fn names_that_are_not_python_names() {
        assert_eq!(call_as("unit-convert"), "tools.unit_convert");
        assert_eq!(call_as("9lives"), "tools['9lives']");
        assert_eq!(call_as("class"), "tools['class']");
        assert!(is_python_name("größe") && !is_python_name("a-b") && !is_python_name("lambda"));
    }
}
