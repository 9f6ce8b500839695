//! Echoes its arguments and the call's context: schema validation and context tests.

use toolcell_guest::{Context, ToolError, json, tool};

/// How loudly to echo.
#[json]
#[serde(rename_all = "snake_case")]
pub enum Volume {
    /// Quietly.
    Quiet,
    /// Loudly.
    Loud,
}

/// What the tool returns.
#[json]
pub struct Echoed {
    text: String,
    count: u32,
    volume: Option<Volume>,
    tags: Vec<String>,
    call_id: String,
    host_context: toolcell_guest::__private::serde_json::Map<String, toolcell_guest::__private::serde_json::Value>,
}

/// Echo the text back, with the call id and host context the tool received.
#[tool(output_schema)]
fn echo(
    /// The text to echo.
    #[schemars(length(min = 1, max = 100))]
    text: String,
    /// How many times.
    #[schemars(range(min = 1, max = 10))]
    count: u32,
    /// How loudly.
    volume: Option<Volume>,
    /// Labels.
    tags: Option<Vec<String>>,
    context: Context,
) -> Result<Echoed, ToolError> {
    Ok(Echoed {
        text,
        count,
        volume,
        tags: tags.unwrap_or_default(),
        call_id: context.call_id().to_owned(),
        host_context: context.host().clone(),
    })
}
