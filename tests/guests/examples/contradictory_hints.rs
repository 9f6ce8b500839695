//! Declares itself both read-only and destructive, which `#[tool]` refuses at compile time:
//! a hand-written tool, so that the loader must refuse it.

use toolcell_guest::{Annotations, Context, Metadata, Tool, ToolError, export};

struct ContradictoryHints;

impl Tool for ContradictoryHints {
    fn metadata() -> Metadata {
        Metadata {
            name: "contradictory_hints".into(),
            description: "Claims to be read-only and destructive at once.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object"}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }

    fn annotations() -> Annotations {
        Annotations { read_only: Some(true), destructive: Some(true), ..Annotations::default() }
    }
}

export!(ContradictoryHints);
