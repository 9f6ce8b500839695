//! Runtime values as MCP values: tool definitions for `tools/list`, arguments from
//! `tools/call`, outputs for `tools/call`.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, Tool};
use serde_json::{Map, Value, json};
use toolcell_runtime::formats::{ToolMarks, repair};
use toolcell_runtime::policy::MissingGrant;
use toolcell_runtime::{CallError, Format, ToolDefinition, ToolOutput};

/// The `_meta` key under which a failed call's error kind and `retryable` flag travel, for
/// clients that act on them in code (the model reads the text content).
pub const ERROR_META_KEY: &str = "toolcell/error";

/// Which schemas `tools/list` shows. Either way the runtime validates each call against the
/// tool's own schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Schemas {
    /// Standard JSON Schema that every MCP client accepts ([`Format::Mcp`]): the tool's own
    /// schema without the `format`s JSON Schema does not define (schemars' `uint64`, which
    /// TypeScript clients warn about), and a `$ref` to a choice of constants as an `enum`.
    #[default]
    Standard,
    /// Parameters in OpenAI strict mode's subset ([`Format::McpStrict`]), for clients that
    /// make every tool strict (the OpenAI Agents SDK's `convert_schemas_to_strict`): every
    /// object closed, every property required (`null` meaning "not given"), maps as lists of
    /// `{"key", "value"}` entries, any-typed values as JSON text, `$ref`s written out. Each
    /// call's arguments are mapped back into the tool's own shape before validation. A tool
    /// whose schema has no strict form is listed as under [`Schemas::Standard`].
    Strict,
}

impl Schemas {
    /// The runtime format that lists tools this way.
    pub fn format(self) -> Format {
        match self {
            Schemas::Standard => Format::Mcp,
            Schemas::Strict => Format::McpStrict,
        }
    }
}

/// A tool as `tools/list` shows it: the runtime's MCP format for `schemas` (the input schema,
/// the output schema when every result is an object, title and annotations), with `marks` as
/// `_meta` keys ([`DEFER_LOADING_META_KEY`], [`ALLOWED_CALLERS_META_KEY`]).
///
/// [`DEFER_LOADING_META_KEY`]: toolcell_runtime::formats::DEFER_LOADING_META_KEY
/// [`ALLOWED_CALLERS_META_KEY`]: toolcell_runtime::formats::ALLOWED_CALLERS_META_KEY
pub fn tool(definition: &ToolDefinition, schemas: Schemas, marks: ToolMarks) -> Tool {
    // A schema without a strict form is listed in the standard one: the client then uses it
    // as it is, and the arguments it sends need no mapping back.
    let listed = definition
        .to_format_marked(schemas.format(), marks)
        .or_else(|_| definition.to_format_marked(Format::Mcp, marks))
        .ok()
        .and_then(|tool| serde_json::from_value(tool).ok());
    // The MCP format takes every definition, and rmcp's `Tool` every tool it produces; the
    // fallback only keeps a listing whole if either ever stops being true.
    listed.unwrap_or_else(|| {
        Tool::new(
            definition.name.clone(),
            definition.description.clone(),
            Arc::new(definition.parameters.as_object().cloned().unwrap_or_default()),
        )
    })
}

/// A call's `arguments` in the tool's own shape, given the schemas the client was shown: under
/// [`Schemas::Strict`], what strict mode made the client send (a map as entries, `null` for
/// "not given", JSON as text) is put back (see [`repair`]); otherwise they are as sent.
/// `definition` is the tool called, when it exists.
pub fn arguments(schemas: Schemas, definition: Option<&ToolDefinition>, arguments: Map<String, Value>) -> Value {
    let arguments = Value::Object(arguments);
    match definition {
        Some(definition) if schemas == Schemas::Strict => repair(Format::McpStrict, &definition.parameters, arguments),
        _ => arguments,
    }
}

/// `tool` as listed when it misses grants it needs (`missing`, from
/// [`Runtime::missing_grants`]): its description starts by saying so, so that a model does not
/// call a tool that can only fail, and can tell the user what the operator would have to grant.
///
/// [`Runtime::missing_grants`]: toolcell_runtime::Runtime::missing_grants
pub fn unavailable(mut tool: Tool, missing: &[MissingGrant]) -> Tool {
    if missing.is_empty() {
        return tool;
    }
    let needs: Vec<String> = missing.iter().map(ToString::to_string).collect();
    let warning = format!(
        "Unavailable on this server: it needs {}, which the operator has not granted it, so every call fails.",
        needs.join(" and ")
    );
    tool.description = Some(match tool.description.take() {
        Some(description) => format!("{warning} {description}").into(),
        None => warning.into(),
    });
    tool
}

/// A call's output as a `tools/call` result. Every failure is a result with `isError` and
/// the runtime's message for the model, except an unknown tool, which MCP makes a protocol
/// error (`-32602`); its message still says which tools exist.
///
/// # Errors
/// The `-32602` error, for a call to a tool that is not loaded.
pub fn call_result(output: ToolOutput) -> Result<CallToolResult, ErrorData> {
    if let Some(error @ CallError::UnknownTool { .. }) = &output.error {
        let data = serde_json::to_value(error).ok();
        return Err(ErrorData::invalid_params(output.content, data));
    }
    if let Some(error) = &output.error {
        let mut result = CallToolResult::error(vec![ContentBlock::text(output.content.clone())]);
        let mut meta = MetaObject::new();
        meta.0.insert(ERROR_META_KEY.into(), json!({ "kind": error.kind(), "retryable": error.retryable() }));
        result.meta = Some(meta);
        return Ok(result);
    }
    let structured = serde_json::from_str::<Value>(&output.content).ok().filter(Value::is_object);
    let mut result = CallToolResult::success(vec![ContentBlock::text(output.content)]);
    result.structured_content = structured;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(parameters: Value) -> ToolDefinition {
        serde_json::from_value(json!({"name": "probe", "description": "A tool for tests.", "version": "1.0.0",
            "parameters": parameters}))
        .unwrap()
    }

    fn input_schema(tool: &Tool) -> Value {
        Value::Object((*tool.input_schema).clone())
    }

    /// A map of numbers and a choice of constants, as schemars writes them.
    fn parameters() -> Value {
        json!({"type": "object", "additionalProperties": false, "required": ["mode"], "properties": {
            "values": {"type": ["object", "null"], "additionalProperties": {"type": "number", "format": "double"}, "default": null},
            "mode": {"$ref": "#/$defs/Mode"}
        }, "$defs": {"Mode": {"oneOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]}}})
    }

    #[test]
    fn standard_schemas_are_listed_by_default() {
        assert_eq!(Schemas::default(), Schemas::Standard);
        let listed = input_schema(&tool(&definition(parameters()), Schemas::default(), ToolMarks::NONE));
        assert_eq!(listed["properties"]["mode"], json!({"type": "string", "enum": ["a", "b"]}));
        assert_eq!(listed["properties"]["values"]["additionalProperties"], json!({"type": "number"}));
        assert!(listed.get("$defs").is_none(), "{listed}");
    }

    #[test]
    fn strict_schemas_list_maps_as_entries_and_calls_in_that_shape_are_mapped_back() {
        let definition = definition(parameters());
        let listed = input_schema(&tool(&definition, Schemas::Strict, ToolMarks::NONE));
        assert_eq!(listed["required"], json!(["mode", "values"]));
        assert_eq!(listed["properties"]["values"]["type"], json!(["array", "null"]));
        let sent = json!({"mode": "a", "values": [{"key": "x", "value": 2.5}]});
        let Value::Object(sent) = sent else { unreachable!() };
        assert_eq!(
            arguments(Schemas::Strict, Some(&definition), sent.clone()),
            json!({"mode": "a", "values": {"x": 2.5}})
        );
        assert_eq!(arguments(Schemas::Standard, Some(&definition), sent.clone()), Value::Object(sent.clone()));
        assert_eq!(arguments(Schemas::Strict, None, sent.clone()), Value::Object(sent), "an unknown tool's call");
    }

    #[test]
    fn a_schema_without_a_strict_form_is_listed_in_the_standard_one() {
        let unconvertible = json!({"type": "object", "properties": {
            "a": {"allOf": [{"type": "string"}, {"minLength": 2}]}, "n": {"type": "integer", "format": "uint8"}}});
        let definition = definition(unconvertible);
        assert!(definition.to_format(Format::McpStrict).is_err());
        let listed = tool(&definition, Schemas::Strict, ToolMarks::NONE);
        assert_eq!(input_schema(&listed), input_schema(&tool(&definition, Schemas::Standard, ToolMarks::NONE)));
        assert_eq!(input_schema(&listed)["properties"]["n"], json!({"type": "integer", "minimum": 0, "maximum": 255}));
    }
}
