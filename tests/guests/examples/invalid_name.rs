//! A tool whose name breaks the rules: the loader must refuse it.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct InvalidName;

impl Tool for InvalidName {
    fn metadata() -> Metadata {
        Metadata {
            name: "bad name!".into(),
            description: "Has an invalid name.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object"}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(InvalidName);
