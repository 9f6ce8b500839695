//! Runtime values as MCP values: tool definitions for `tools/list`, outputs for `tools/call`.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, Tool};
use serde_json::{Value, json};
use toolcell_runtime::{CallError, Format, ToolDefinition, ToolOutput};

/// The `_meta` key under which a failed call's error kind and `retryable` flag travel, for
/// clients that act on them in code (the model reads the text content).
pub const ERROR_META_KEY: &str = "toolcell/error";

/// A tool as `tools/list` shows it: the runtime's MCP format (the schema it validates
/// against, the output schema when every result is an object, title and annotations).
pub fn tool(definition: &ToolDefinition) -> Tool {
    let listed = definition.to_format(Format::Mcp).ok().and_then(|tool| serde_json::from_value(tool).ok());
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
