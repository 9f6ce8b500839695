//! Declares an output schema and returns a result that breaks it.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct BadOutput;

impl Tool for BadOutput {
    fn metadata() -> Metadata {
        Metadata {
            name: "bad_output".into(),
            description: "Returns a result that does not match its own output schema.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object", "properties": {}}),
            output_schema: Some(toolcell_guest::__private::serde_json::json!({
                "type": "object",
                "properties": {"value": {"type": "number"}},
                "required": ["value"]
            })),
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok(r#"{"value": "not a number"}"#.into())
    }
}

export!(BadOutput);
