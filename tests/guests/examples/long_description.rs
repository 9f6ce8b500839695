//! A tool whose description is over 1024 characters.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct LongDescription;

impl Tool for LongDescription {
    fn metadata() -> Metadata {
        Metadata {
            name: "long_description".into(),
            description: "word ".repeat(300),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object"}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(LongDescription);
