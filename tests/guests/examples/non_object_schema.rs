//! A tool whose parameters schema is valid but not an object schema.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct NonObjectSchema;

impl Tool for NonObjectSchema {
    fn metadata() -> Metadata {
        Metadata {
            name: "non_object_schema".into(),
            description: "Takes a string instead of an object.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "string"}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(NonObjectSchema);
