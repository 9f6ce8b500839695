// A tool that compiles must compile without a warning, the macro's own included.
#![deny(warnings)]

use toolcell_guest::{Context, Tool, tool};

/// Greet someone; a plain return type and no parameters besides the name.
#[tool]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

fn main() {
    assert_eq!(GreetTool::invoke(r#"{"name": "Ada"}"#, Context::default()).unwrap(), r#""Hello, Ada!""#);
    assert_eq!(GreetTool::metadata().output_schema, None);
    assert_eq!(GreetTool::annotations(), toolcell_guest::Annotations::default(), "no options, no annotations");
}
