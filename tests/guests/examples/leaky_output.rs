//! Returns the secrets it was granted, in the places that used to slip past redaction: many
//! short copies (redaction grows the result past the output cap), a numeric secret where
//! the output schema wants a number, and a secret with quotes and backslashes in a field
//! whose value breaks the output schema (quoted, escaped, in the violation message).

use toolcell_guest::{ToolError, json, tool};

/// What the tool returns.
#[json]
pub struct Leak {
    /// Copies of `SHORT_SECRET`.
    copies: Vec<String>,
    /// `NUMBER_SECRET` as a number.
    value: Option<f64>,
    /// `QUOTED_SECRET`; at most 5 characters allowed.
    #[schemars(length(max = 5))]
    note: Option<String>,
}

/// Returns secrets.
#[tool(output_schema, env = ["SHORT_SECRET", "NUMBER_SECRET", "QUOTED_SECRET"])]
fn leaky_output(
    /// How many copies of `SHORT_SECRET` to return.
    copies: u32,
    /// Return `NUMBER_SECRET` as a number.
    number: Option<bool>,
    /// Return `QUOTED_SECRET` as the note.
    note: Option<bool>,
) -> Result<Leak, ToolError> {
    let var = |name: &str| std::env::var(name).map_err(|err| ToolError::failed(format!("{name}: {err}")));
    let short = var("SHORT_SECRET")?;
    let value = match number {
        Some(true) => Some(var("NUMBER_SECRET")?.parse::<f64>().map_err(|err| ToolError::failed(err.to_string()))?),
        _ => None,
    };
    let note = match note {
        Some(true) => Some(var("QUOTED_SECRET")?),
        _ => None,
    };
    Ok(Leak { copies: vec![short; copies as usize], value, note })
}
