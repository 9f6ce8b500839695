//! Tool definitions in the shapes model providers take (OpenAI Chat Completions and
//! Responses, Anthropic, Gemini, MCP), with strict variants that follow each provider's
//! schema rules. Pure functions: no network.
//!
//! MCP's own format lists schemas every MCP client accepts (standard `format`s only, choices
//! of constants as `enum`s); `mcp-strict` lists parameters in OpenAI strict mode's subset, for
//! clients that make every tool strict themselves.
//!
//! [`Format::tools_with`] adds what tool search and programmatic tool calling need
//! ([`ExportOptions`]: `defer_loading`, an OpenAI namespace, `allowed_callers`).
//!
//! A strict format can reshape the arguments a model sends (every property required, maps
//! as lists of entries, any-typed values as JSON text); [`repair`] undoes that for a call
//! made against such a definition, so the runtime validates and the tool receives the
//! arguments in the tool's own shape.

mod calls;
mod dialects;
mod exports;
mod python;
mod repair;
mod schema;
mod standard;
mod words;

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

pub use calls::{MessageError, replies, result_messages, tool_calls};
pub use exports::{
    ALLOWED_CALLERS_META_KEY, ALWAYS_LOAD_META_KEY, DEFER_LOADING_META_KEY, Deferral, ExportError, ExportOptions,
    Namespace, ToolMarks,
};
pub use python::{PythonFunction, python_function};
pub use repair::repair;

use crate::tool::definition::ToolDefinition;

/// A provider's tool format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// OpenAI Chat Completions: a `tools[]` entry, `{"type": "function", "function": {...}}`.
    OpenAiChat,
    /// [`Format::OpenAiChat`] with `"strict": true` and a schema in strict mode's subset.
    OpenAiChatStrict,
    /// The OpenAI Responses API's function tool, `{"type": "function", "name": ...}`.
    OpenAiResponses,
    /// [`Format::OpenAiResponses`] with `"strict": true` and a schema in strict mode's subset.
    OpenAiResponsesStrict,
    /// An Anthropic Messages API tool, `{"name", "description", "input_schema"}`.
    Anthropic,
    /// [`Format::Anthropic`] with `"strict": true` and a schema in strict tool use's subset.
    AnthropicStrict,
    /// A Gemini function declaration with `parameters` in Gemini's OpenAPI-subset `Schema`.
    Gemini,
    /// A Gemini function declaration with the JSON Schema as `parametersJsonSchema`.
    GeminiJsonSchema,
    /// An MCP tool, as `tools/list` lists it: the tool's schemas in standard JSON Schema
    /// that every MCP client accepts (no `format` JSON Schema does not define, such as
    /// schemars' `uint64`, and a `$ref` to a choice of constants written out as an `enum`).
    Mcp,
    /// An MCP tool whose `inputSchema` is in OpenAI strict mode's subset, with every `$ref` but
    /// a recursive one written out: what `toolcell serve --schemas strict` lists, for clients
    /// that convert MCP tools to strict themselves (the OpenAI Agents SDK's
    /// `convert_schemas_to_strict`). The `outputSchema` is as in [`Format::Mcp`].
    McpStrict,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 10] = [
        Format::OpenAiChat,
        Format::OpenAiChatStrict,
        Format::OpenAiResponses,
        Format::OpenAiResponsesStrict,
        Format::Anthropic,
        Format::AnthropicStrict,
        Format::Gemini,
        Format::GeminiJsonSchema,
        Format::Mcp,
        Format::McpStrict,
    ];

    /// Its name on the command line, e.g. `openai-strict`.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai",
            Format::OpenAiChatStrict => "openai-strict",
            Format::OpenAiResponses => "openai-responses",
            Format::OpenAiResponsesStrict => "openai-responses-strict",
            Format::Anthropic => "anthropic",
            Format::AnthropicStrict => "anthropic-strict",
            Format::Gemini => "gemini",
            Format::GeminiJsonSchema => "gemini-json-schema",
            Format::Mcp => "mcp",
            Format::McpStrict => "mcp-strict",
        }
    }

    /// Whether definitions in this format use a strict subset of JSON Schema, whose calls
    /// [`repair`] turns back into the tool's own shape.
    pub fn is_strict(self) -> bool {
        self.dialect().is_some()
    }

    fn dialect(self) -> Option<&'static schema::Dialect> {
        match self {
            Format::OpenAiChatStrict | Format::OpenAiResponsesStrict => Some(&dialects::OPENAI_STRICT),
            Format::AnthropicStrict => Some(&dialects::ANTHROPIC_STRICT),
            Format::Gemini => Some(&dialects::GEMINI_OPENAPI),
            Format::McpStrict => Some(&dialects::MCP_STRICT),
            _ => None,
        }
    }

    /// The value of a request's `tools` field for `definitions`: an array of tools, or for
    /// Gemini one `Tool` holding every function declaration.
    ///
    /// # Errors
    /// When a definition cannot be expressed in this format.
    pub fn tools<'a>(self, definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Result<Value, FormatError> {
        let definitions: Vec<&ToolDefinition> = definitions.into_iter().collect();
        let tools = definitions.iter().map(|definition| definition.to_format(self)).collect::<Result<Vec<_>, _>>()?;
        if self == Format::AnthropicStrict {
            dialects::check_anthropic_request(&definitions, &tools)?;
        }
        Ok(match self {
            Format::Gemini | Format::GeminiJsonSchema => json!([{ "functionDeclarations": tools }]),
            _ => Value::Array(tools),
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Format::ALL.into_iter().find(|format| format.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
            format!("unknown format `{name}`; expected one of: {}", names.join(", "))
        })
    }
}

/// A definition that cannot be expressed in a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool `{tool}` cannot be exported as {format}: at {pointer} of its parameters schema, {rule}. Export it in \
     another format, or change the tool's schema"
)]
#[non_exhaustive]
pub struct FormatError {
    /// The tool.
    pub tool: String,
    /// The format.
    pub format: Format,
    /// Where in the parameters schema (a JSON Pointer), `/` for the whole.
    pub pointer: String,
    /// The rule it breaks.
    pub rule: String,
}

impl ToolDefinition {
    /// This definition in `format`, ready to put in a request's `tools` (see
    /// [`Format::tools`] for the whole array).
    ///
    /// # Errors
    /// When the parameters schema cannot be expressed in the format's subset (e.g. an
    /// `allOf` of several schemas, recursion where the format has none, or a size limit), or
    /// the name breaks the format's naming rule.
    pub fn to_format(&self, format: Format) -> Result<Value, FormatError> {
        let fail = |pointer: &str, rule: String| FormatError {
            tool: self.name.clone(),
            format,
            pointer: pointer.to_owned(),
            rule,
        };
        dialects::check_name(format, &self.name).map_err(|rule| fail("/", rule))?;
        let parameters = match format.dialect() {
            Some(dialect) => {
                schema::convert(&self.parameters, dialect).map_err(|broken| fail(&broken.pointer, broken.rule))?
            }
            None if format == Format::Mcp => standard::schema(&self.parameters),
            None => without_schema_uri(&self.parameters),
        };
        let (name, description) = (&self.name, &self.description);
        Ok(match format {
            Format::OpenAiChat => {
                json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
            }
            Format::OpenAiChatStrict => json!({"type": "function", "function": {
                "name": name, "description": description, "parameters": parameters, "strict": true}}),
            Format::OpenAiResponses | Format::OpenAiResponsesStrict => json!({
                "type": "function", "name": name, "description": description, "parameters": parameters,
                "strict": format == Format::OpenAiResponsesStrict}),
            Format::Anthropic => json!({"name": name, "description": description, "input_schema": parameters}),
            Format::AnthropicStrict => {
                json!({"name": name, "description": description, "input_schema": parameters, "strict": true})
            }
            Format::Gemini => json!({"name": name, "description": description, "parameters": parameters}),
            Format::GeminiJsonSchema => {
                json!({"name": name, "description": description, "parametersJsonSchema": parameters})
            }
            Format::Mcp | Format::McpStrict => self.to_mcp(parameters),
        })
    }

    /// An MCP tool with `input_schema`, and the output schema in standard JSON Schema only
    /// when every result is an object (MCP requires `"type": "object"` at its root).
    fn to_mcp(&self, input_schema: Value) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            tool.insert("title".into(), json!(title));
        }
        tool.insert("description".into(), json!(self.description));
        tool.insert("inputSchema".into(), input_schema);
        if let Some(output_schema) = self.output_schema.as_ref().map(standard::schema).as_ref().and_then(object_root) {
            tool.insert("outputSchema".into(), Value::Object(output_schema));
        }
        if !self.annotations.is_empty() {
            tool.insert("annotations".into(), json!(self.annotations));
        }
        Value::Object(tool)
    }
}

/// The schema without `$schema`, which providers do not need and some refuse.
fn without_schema_uri(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(schema) = schema.as_object_mut() {
        schema.remove("$schema");
    }
    schema
}

/// The schema if every document it accepts is an object: `"type": "object"` at the root, or
/// a `oneOf`/`anyOf` whose branches all say so (a tagged enum), which gets the root type
/// added: the same documents, in the shape MCP asks for.
fn object_root(schema: &Value) -> Option<Map<String, Value>> {
    let is_object = |schema: &Value| schema.get("type").and_then(Value::as_str) == Some("object");
    let mut schema = schema.as_object()?.clone();
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return Some(schema);
    }
    let union = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    if schema.contains_key("type") || union.is_empty() || !union.iter().all(is_object) {
        return None;
    }
    schema.insert("type".into(), Value::from("object"));
    Some(schema)
}

#[cfg(test)]
mod tests;
