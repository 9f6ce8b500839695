//! A tool whose parameters schema is not a valid JSON Schema.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct InvalidSchema;

impl Tool for InvalidSchema {
    fn metadata() -> Metadata {
        Metadata {
            name: "invalid_schema".into(),
            description: "Has an invalid parameters schema.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": "zero"}}
            }),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(InvalidSchema);
