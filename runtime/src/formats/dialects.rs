//! Each provider's published schema rules, as [`Dialect`]s, and its rule for tool names.

use serde_json::Value;

use super::schema::{Dialect, Refs, SizeLimits};
use super::{Format, FormatError};
use crate::tool::definition::ToolDefinition;

/// OpenAI Structured Outputs ("strict": true), for Chat Completions and Responses.
pub(crate) static OPENAI_STRICT: Dialect = Dialect {
    name: "OpenAI strict mode",
    keeps: &[
        "description",
        "enum",
        "const",
        "anyOf",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    ],
    formats: &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"],
    refs: Refs::Keep,
    closed_objects: true,
    all_required: true,
    omit_null_defaults: false,
    string_enums_only: false,
    any_as_json_text: true,
    nullable_keyword: false,
    upper_case_types: false,
    max_min_items: None,
    limits: Some(SizeLimits { properties: 5_000, nesting: 10, enum_values: 1_000, string_chars: 120_000 }),
};

/// [`OPENAI_STRICT`] for MCP clients that make each tool strict themselves (the OpenAI Agents
/// SDK's `convert_schemas_to_strict`): every `$ref` but a recursive one is written out, since
/// such a converter refuses a `$ref` it did not write out itself.
pub(crate) static MCP_STRICT: Dialect = Dialect { refs: Refs::InlineUnlessRecursive, ..OPENAI_STRICT };

/// Anthropic strict tool use ("strict": true).
pub(crate) static ANTHROPIC_STRICT: Dialect = Dialect {
    name: "Anthropic strict tool use",
    // `pattern` is supported only for simple regular expressions; in words it always works.
    keeps: &["description", "enum", "const", "anyOf", "default", "format", "minItems"],
    formats: &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"],
    refs: Refs::KeepAcyclic,
    closed_objects: true,
    all_required: false,
    omit_null_defaults: true,
    string_enums_only: false,
    any_as_json_text: true,
    nullable_keyword: false,
    upper_case_types: false,
    max_min_items: Some(1),
    limits: None,
};

/// Gemini's `parameters`: the OpenAPI 3.0 subset of its `Schema` type.
pub(crate) static GEMINI_OPENAPI: Dialect = Dialect {
    name: "Gemini's `parameters` schema (an OpenAPI 3.0 subset)",
    keeps: &[
        "description",
        "enum",
        "anyOf",
        "format",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "default",
        "title",
        "example",
    ],
    formats: &["enum", "date-time", "int32", "int64", "float", "double"],
    refs: Refs::Inline,
    closed_objects: false,
    all_required: false,
    omit_null_defaults: false,
    string_enums_only: true,
    any_as_json_text: true,
    nullable_keyword: true,
    upper_case_types: true,
    max_min_items: None,
    limits: None,
};

/// The provider's rule for a tool's name, or `Ok` when it has none beyond the runtime's own.
pub(crate) fn check_name(format: Format, name: &str) -> Result<(), String> {
    let (most, allowed, provider): (usize, fn(char) -> bool, &str) = match format {
        Format::OpenAiChat | Format::OpenAiChatStrict | Format::OpenAiResponses | Format::OpenAiResponsesStrict => {
            (64, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-', "OpenAI")
        }
        Format::Anthropic | Format::AnthropicStrict => {
            (128, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-', "Anthropic")
        }
        Format::Gemini | Format::GeminiJsonSchema => {
            (64, |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'), "Gemini")
        }
        Format::Mcp | Format::McpStrict => return Ok(()),
    };
    let chars = name.chars().count();
    if chars == 0 || chars > most || !name.chars().all(allowed) {
        return Err(format!(
            "{provider} takes tool names of 1 to {most} characters from letters, digits, `_` and `-`{}, and `{name}` is not one",
            if provider == "Gemini" { ", `.` and `:`" } else { "" }
        ));
    }
    Ok(())
}

/// Anthropic's limits on the strict tools of one request: 20 tools, 24 optional parameters
/// and 16 parameters that are unions (`anyOf` or a type list), counted over all of them.
pub(crate) fn check_anthropic_request(definitions: &[&ToolDefinition], tools: &[Value]) -> Result<(), FormatError> {
    let (mut optional, mut unions) = (0, 0);
    for (index, (definition, tool)) in definitions.iter().zip(tools).enumerate() {
        count_parameters(&tool["input_schema"], &mut optional, &mut unions);
        let over = [
            (index + 1, 20, "strict tools"),
            (optional, 24, "optional parameters"),
            (unions, 16, "parameters with `anyOf` or a list of types"),
        ]
        .into_iter()
        .find(|(count, most, _)| count > most);
        if let Some((count, most, what)) = over {
            return Err(FormatError {
                tool: definition.name.clone(),
                format: Format::AnthropicStrict,
                pointer: "/".into(),
                rule: format!(
                    "Anthropic strict tool use allows at most {most} {what} in one request, and with this tool \
                     the tools so far have {count}: export fewer tools this way, or some as `anthropic`"
                ),
            });
        }
    }
    Ok(())
}

fn count_parameters(schema: &Value, optional: &mut usize, unions: &mut usize) {
    let Some(schema) = schema.as_object() else { return };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let required = schema.get("required").and_then(Value::as_array);
        for (name, property) in properties {
            if !required.is_some_and(|required| required.iter().any(|n| n == name)) {
                *optional += 1;
            }
            if property.get("anyOf").is_some() || property.get("type").is_some_and(Value::is_array) {
                *unions += 1;
            }
            count_parameters(property, optional, unions);
        }
    }
    for keyword in ["items", "$defs"] {
        match schema.get(keyword) {
            Some(Value::Object(defs)) if keyword == "$defs" => {
                defs.values().for_each(|def| count_parameters(def, optional, unions))
            }
            Some(inner) => count_parameters(inner, optional, unions),
            None => {}
        }
    }
    for variant in schema.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
        count_parameters(variant, optional, unions);
    }
}
