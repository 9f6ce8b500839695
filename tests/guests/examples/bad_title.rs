//! A title on two lines, which `#[tool]` refuses at compile time: a hand-written tool, so
//! that the loader must refuse it.

use toolcell_guest::{Annotations, Context, Metadata, Tool, ToolError, export};

struct BadTitle;

impl Tool for BadTitle {
    fn metadata() -> Metadata {
        Metadata {
            name: "bad_title".into(),
            description: "Has a title with a line break.".into(),
            version: "0.1.0".into(),
            parameters_schema: toolcell_guest::__private::serde_json::json!({"type": "object"}),
            output_schema: None,
        }
    }

    fn invoke(_arguments: &str, _context: Context) -> Result<String, ToolError> {
        Ok("null".into())
    }

    fn annotations() -> Annotations {
        Annotations { title: Some("Bad\ntitle".into()), ..Annotations::default() }
    }
}

export!(BadTitle);
