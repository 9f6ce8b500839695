//! Runtime values as MCP values: tool definitions for `tools/list`, outputs for `tools/call`.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use toolcell_runtime::{CallError, ToolDefinition, ToolOutput};

/// The `_meta` key under which a failed call's error kind and `retryable` flag travel, for
/// clients that act on them in code (the model reads the text content).
pub const ERROR_META_KEY: &str = "toolcell/error";

/// A tool as `tools/list` shows it: the schema the runtime validates against, and the
/// output schema only when its root is an object (MCP requires `"type": "object"` there).
pub fn tool(definition: &ToolDefinition) -> Tool {
    let mut tool = Tool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(definition.parameters.as_object().cloned().unwrap_or_default()),
    );
    if let Some(schema) = definition.output_schema.as_ref().and_then(object_root) {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    if let Some(title) = &definition.title {
        tool = tool.with_title(title.clone());
    }
    let hints = &definition.annotations;
    if !hints.is_empty() {
        tool = tool.with_annotations(ToolAnnotations::from_raw(
            None,
            hints.read_only,
            hints.destructive,
            hints.idempotent,
            hints.open_world,
        ));
    }
    tool
}

/// The schema if every document it accepts is an object: `"type": "object"` at the root, or
/// a `oneOf`/`anyOf` whose branches all say so (a tagged enum), which gets the root type
/// added: the same documents, in the shape MCP asks for.
fn object_root(schema: &Value) -> Option<JsonObject> {
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

/// A call's output as a `tools/call` result. Every failure is a result with `isError` and
/// the runtime's message for the model, except an unknown tool, which MCP makes a protocol
/// error (`-32602`); its message still says which tools exist.
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

    #[test]
    fn an_output_schema_is_listed_only_when_every_result_is_an_object() {
        assert!(object_root(&json!({"type": "object"})).is_some());
        assert_eq!(
            object_root(&json!({"oneOf": [{"type": "object"}, {"type": "object"}]})),
            json!({"type": "object", "oneOf": [{"type": "object"}, {"type": "object"}]}).as_object().cloned()
        );
        for not_objects in [
            json!({"type": "string"}),
            json!({"oneOf": [{"type": "object"}, {"type": "string"}]}),
            json!({"anyOf": []}),
            json!({"$ref": "#/$defs/Result"}),
        ] {
            assert_eq!(object_root(&not_objects), None, "{not_objects}");
        }
    }
}
