//! Returns text that is not JSON, which the `#[tool]` macro can never do: a hand-written tool.

use toolcell_guest::{Context, Metadata, Tool, ToolError, export};

struct NonJson;

impl Tool for NonJson {
    fn metadata() -> Metadata {
        Metadata {
            name: "non_json_output".into(),
            description: "Returns text that is not JSON.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object", "properties": {}}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("this is { not JSON".into())
    }
}

export!(NonJson);
